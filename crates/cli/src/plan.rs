//! `iogauge plan`: capacity planning. The flags become [`PlanOptions`] (every bad
//! combination is a usage error naming the flag and the fix), the per-disk figures are
//! resolved (a flag, a profile or a stored calibration), and `iogauge_plan` does the
//! arithmetic and the text.

use crate::args::StoreArgs;
use crate::options::UsageError;
use anyhow::Context;
use iogauge_model::history::RunStatus;
use iogauge_plan::limits::{self, Limit};
use iogauge_plan::{
    capacity, parse_history, plan_history, size, Columns, Disk, DiskProfile, Iops, Layout, Mbps,
    Model, Plan, Redundancy, Workload,
};
use iogauge_store::Store;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// Workload IOPS (reads + writes) as the database issues them; needs --read-pct.
    /// 0 to 1e9.
    #[arg(long, value_parser = workload_iops)]
    pub iops: Option<f64>,
    /// Workload MB/s (reads + writes), split by --read-pct like the IOPS; sized against the
    /// per-disk MB/s. 0 to 1e8.
    #[arg(long, value_parser = workload_mbps)]
    pub mbps: Option<f64>,
    /// Share of reads, percent (70 or 70%): of --iops and --mbps, or of the workload the
    /// --disks serve in reverse mode.
    #[arg(long, value_name = "PCT", value_parser = read_pct)]
    pub read_pct: Option<f64>,
    /// CSV, one row per period: a header naming timestamp, read_iops, write_iops and
    /// optionally read_mbps, write_mbps (other names: --columns). Prints percentiles, a
    /// histogram and the top 10 periods, and sizes at --percentile.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Header names of the --history CSV where they differ, ROLE=HEADER, comma-separated or
    /// repeated: --columns timestamp=BEGIN_TIME,read_iops=r/s,write_iops=w/s.
    #[arg(long, value_name = "ROLE=HEADER", value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Percentile of the history's hardware IOPS (and MB/s) to size for; nearest rank, so it
    /// is always a real period [default: 95].
    #[arg(long, value_name = "P", value_parser = percentile)]
    pub percentile: Option<f64>,
    /// Disks on hand. Without --iops or --history: reverse mode, the workload they serve.
    /// With a workload: the utilization of this many instead of the number needed.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=limits::MAX_DISKS))]
    pub disks: Option<u64>,
    /// Write penalty by level: none|raid0 1; raid1|raid10|mirror|normal (ASM normal) 2;
    /// 3-way|high (ASM high) 3; raid5 4; raid6 6. Reads count once.
    #[arg(long, value_name = "LEVEL", value_parser = str::parse::<Redundancy>)]
    pub redundancy: Option<Redundancy>,
    /// A custom write penalty, disk I/Os per application write (instead of --redundancy),
    /// 1 to 100.
    #[arg(long, value_name = "N", value_parser = write_penalty)]
    pub write_penalty: Option<f64>,
    /// Small random IOPS one disk sustains, 1 to 1e8.
    #[arg(long, value_name = "N", value_parser = disk_iops)]
    pub disk_iops: Option<f64>,
    /// Large-I/O MB/s one disk sustains (with --disk-iops), 1 to 1e6.
    #[arg(long, value_name = "N", value_parser = disk_mbps)]
    pub disk_mbps: Option<f64>,
    /// Per-disk figures of a disk class (IOPS, MB/s): 7.2k 80, 150; 10k 130, 180; 15k 180,
    /// 200; sata-ssd 50000, 500; nvme 200000, 3000. HDD IOPS = 1 / (average seek + half a
    /// rotation) with seeks of 8.5, 4.5 and 3.5 ms, rounded to 10 (the quoted rules of thumb
    /// are 75-100, 125-150, 175-210); HDD MB/s are sustained averages over the platter (quoted
    /// 150-250 on outer tracks, half that inside). SSDs: sustained mixed I/O, below the
    /// datasheet 4K read (SATA's 6 Gb/s link carries about 550 MB/s; NVMe PCIe 3.0 x4
    /// datasheets quote 3000-3500 MB/s and 100-200k steady-state mixed IOPS).
    #[arg(long, value_name = "CLASS", value_parser = str::parse::<DiskProfile>)]
    pub disk_profile: Option<DiskProfile>,
    /// Per-disk figures from a stored calibration: its max_iops and max_mbps divided by its
    /// --disks (ids from `iogauge history`).
    #[arg(long, value_name = "ID")]
    pub from_run: Option<i64>,
    /// Disks per enclosure (shelf, storage cell): also count enclosures.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub per_enclosure: Option<u32>,
    /// Highest disk utilization to size for, for headroom: 70% (1% to 100%).
    #[arg(long, value_name = "PCT", default_value = "100%", value_parser = target_util)]
    pub target_util: f64,
    /// Share of reads a cache serves, so they never reach the disks: 60%. Writes are always
    /// sized on disks (a cache or flash log spares them the latency, not the work).
    #[arg(long, value_name = "PCT", default_value = "0%", value_parser = cache_hit)]
    pub read_cache_hit: f64,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print the result as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// A percentage: `70`, `70%` or `12.5%`, as a number of percent.
fn pct(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t);
    match t.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("'{s}' is not a percentage (as in 70 or 70%)")),
    }
}

fn pct_in(s: &str, ok: impl Fn(f64) -> bool, range: &str) -> Result<f64, String> {
    let v = pct(s)?;
    if ok(v) {
        Ok(v)
    } else {
        Err(format!("'{s}' must be {range}"))
    }
}

fn read_pct(s: &str) -> Result<f64, String> {
    pct_in(s, |v| (0.0..=100.0).contains(&v), "from 0% to 100%")
}

fn percentile(s: &str) -> Result<f64, String> {
    pct_in(s, |v| v > 0.0 && v <= 100.0, "above 0 and at most 100")
}

fn target_util(s: &str) -> Result<f64, String> {
    let l = limits::TARGET_UTIL_PCT;
    pct_in(s, |v| l.holds(v), "from 1% to 100%")
}

fn cache_hit(s: &str) -> Result<f64, String> {
    pct_in(s, |v| (0.0..100.0).contains(&v), "from 0% to below 100%")
}

/// A number within one of the plan's [`limits`]: finite and bounded, so every result is.
fn within(s: &str, l: Limit) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if l.holds(v) => Ok(v),
        _ => Err(format!("'{s}' must be {}", l.describe())),
    }
}

fn workload_iops(s: &str) -> Result<f64, String> {
    within(s, limits::WORKLOAD_IOPS)
}

fn workload_mbps(s: &str) -> Result<f64, String> {
    within(s, limits::WORKLOAD_MBPS)
}

fn disk_iops(s: &str) -> Result<f64, String> {
    within(s, limits::DISK_IOPS)
}

fn disk_mbps(s: &str) -> Result<f64, String> {
    within(s, limits::DISK_MBPS)
}

fn write_penalty(s: &str) -> Result<f64, String> {
    within(s, limits::WRITE_PENALTY)
}

/// What to plan.
#[derive(Debug)]
pub enum Mode {
    Size(Workload),
    History {
        path: PathBuf,
        columns: Columns,
        percentile: f64,
    },
    /// Reverse: what `Layout::disks` disks serve at this read share.
    Capacity {
        read_share: f64,
    },
}

/// Where the per-disk figures come from.
#[derive(Debug)]
pub enum DiskSource {
    Given { disk: Disk, source: String },
    Run(i64),
}

/// `iogauge plan`'s flags, checked as a whole.
#[derive(Debug)]
pub struct PlanOptions {
    pub mode: Mode,
    pub model: Model,
    pub disk: DiskSource,
    pub layout: Layout,
    pub json: bool,
    pub store: Option<PathBuf>,
}

fn usage<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

impl PlanOptions {
    pub fn from_args(a: PlanArgs) -> Result<PlanOptions, UsageError> {
        let mode = mode(&a)?;
        let redundancy = match (a.redundancy, a.write_penalty) {
            (Some(_), Some(_)) => {
                return usage("--redundancy and --write-penalty both set the write penalty; use one")
            }
            (Some(r), None) => r,
            (None, Some(p)) => Redundancy::custom(p)
                .map_err(|e| UsageError(format!("--write-penalty {p}: {e}")))?,
            (None, None) => return usage(
                "say how the data is protected: --redundancy none|mirror|normal|high|raid5|raid6, or --write-penalty N",
            ),
        };
        let disk = disk_source(&a)?;
        let wants_mbps = matches!(mode, Mode::Size(w) if w.read_mbps.is_some());
        if let DiskSource::Given { disk, .. } = &disk {
            if wants_mbps && disk.mbps.is_none() {
                return usage(
                    "--mbps needs the MB/s of one disk: add --disk-mbps N, or use --disk-profile or --from-run",
                );
            }
        }
        Ok(PlanOptions {
            mode,
            model: Model {
                redundancy,
                read_cache_hit: a.read_cache_hit / 100.0,
                target_util: a.target_util / 100.0,
            },
            disk,
            layout: Layout {
                per_enclosure: a.per_enclosure,
                disks: a.disks,
            },
            json: a.json,
            store: a.store.store,
        })
    }
}

fn mode(a: &PlanArgs) -> Result<Mode, UsageError> {
    if a.history.is_none() {
        if a.percentile.is_some() {
            return usage("--percentile applies to --history only; add --history FILE");
        }
        if !a.columns.is_empty() {
            return usage("--columns applies to --history only; add --history FILE");
        }
    }
    match (a.iops, &a.history) {
        (Some(_), Some(_)) => usage("--iops and --history both give the workload; use one"),
        (None, Some(path)) => {
            if a.read_pct.is_some() {
                return usage("--read-pct does not apply to --history: each row has its own read and write IOPS");
            }
            if a.mbps.is_some() {
                return usage("--mbps does not apply to --history: give MB/s in its read_mbps and write_mbps columns");
            }
            let mut columns = Columns::default();
            for pair in &a.columns {
                columns
                    .set(pair)
                    .map_err(|e| UsageError(format!("--columns {pair}: {e}")))?;
            }
            Ok(Mode::History {
                path: path.clone(),
                columns,
                percentile: a.percentile.unwrap_or(95.0),
            })
        }
        (Some(iops), None) => {
            let Some(r) = a.read_pct else {
                return usage(
                    "--iops needs the workload's read share: add --read-pct P (0 for writes only)",
                );
            };
            Ok(Mode::Size(Workload::mix(iops, r / 100.0, a.mbps)))
        }
        (None, None) => {
            if a.mbps.is_some() {
                return usage("--mbps goes with the workload's --iops; add --iops N");
            }
            if a.disks.is_none() {
                return usage("say what to plan: --iops N --read-pct P, --history FILE, or --disks N --read-pct P for what disks can serve");
            }
            let Some(r) = a.read_pct else {
                return usage("--disks alone asks what the disks serve, at a read share: add --read-pct P (0 for writes only)");
            };
            Ok(Mode::Capacity {
                read_share: r / 100.0,
            })
        }
    }
}

fn disk_source(a: &PlanArgs) -> Result<DiskSource, UsageError> {
    let given = [
        a.disk_iops.is_some(),
        a.disk_profile.is_some(),
        a.from_run.is_some(),
    ];
    match given.iter().filter(|g| **g).count() {
        0 => return usage(
            "say what one disk does: --disk-iops N, --disk-profile 7.2k|10k|15k|sata-ssd|nvme, or --from-run ID of a calibration",
        ),
        1 => {}
        _ => return usage(
            "--disk-iops, --disk-profile and --from-run each give the per-disk figures; use one",
        ),
    }
    if a.disk_mbps.is_some() && a.disk_iops.is_none() {
        return usage(
            "--disk-mbps goes with --disk-iops; --disk-profile and --from-run give their own MB/s",
        );
    }
    Ok(match (a.disk_iops, a.disk_profile, a.from_run) {
        (Some(iops), _, _) => DiskSource::Given {
            disk: Disk {
                iops: Iops(iops),
                mbps: a.disk_mbps.map(Mbps),
            },
            source: if a.disk_mbps.is_some() {
                "--disk-iops, --disk-mbps".into()
            } else {
                "--disk-iops".into()
            },
        },
        (_, Some(p), _) => DiskSource::Given {
            disk: Disk {
                iops: Iops(p.iops()),
                mbps: Some(Mbps(p.mbps())),
            },
            source: format!("--disk-profile {p}"),
        },
        (_, _, Some(id)) => DiskSource::Run(id),
        _ => unreachable!("one source was counted"),
    })
}

/// Per-disk figures of stored calibration `id`: max_iops and max_mbps over num_disks. Only
/// those three fields are read, so documents of any schema version that has them work.
fn calibration_disk(id: i64, store: Option<&std::path::Path>) -> anyhow::Result<(Disk, String)> {
    let store = Store::open_resolved(store)?;
    let run = store.get(id)?.ok_or_else(|| {
        UsageError(format!(
            "--from-run {id}: no run {id} in {}; `iogauge history` lists the stored runs",
            store.path().display()
        ))
    })?;
    let iogauge_model::Document::Calibration(cal) = &run.document else {
        return Err(UsageError(format!(
            "--from-run {id}: run {id} is a {}, not a calibration; pick a calibrate row from `iogauge history`, or give --disk-iops",
            run.row.kind
        ))
        .into());
    };
    if run.row.status == RunStatus::Interrupted {
        // Its search stopped early: max_iops is the best point reached, not the device's.
        return Err(UsageError(format!(
            "--from-run {id}: calibration {id} was interrupted, so its figures cover only the points it reached; run `iogauge calibrate` to the end, or give --disk-iops"
        ))
        .into());
    }
    let disks = Some(cal.num_disks)
        .filter(|&n| n > 0)
        .with_context(|| format!("run {id}: the stored calibration has no num_disks"))?;
    let Some(max_iops) = cal.max_iops.filter(|&v| v > 0.0) else {
        return Err(UsageError(format!(
            "--from-run {id}: calibration {id} has no max_iops (no point met its latency cap); give --disk-iops or use another calibration"
        ))
        .into());
    };
    let max_mbps = cal.max_mbps.filter(|&v| v > 0.0);
    let n = f64::from(disks);
    for (what, per_disk, l) in [
        ("IOPS", Some(max_iops / n), limits::DISK_IOPS),
        ("MB/s", max_mbps.map(|m| m / n), limits::DISK_MBPS),
    ] {
        if let Some(v) = per_disk.filter(|v| !l.holds(*v)) {
            return Err(UsageError(format!(
                "--from-run {id}: calibration {id} gives {v} {what} per disk, outside what a plan takes ({}); give --disk-iops and --disk-mbps instead",
                l.describe()
            ))
            .into());
        }
    }
    let source = format!(
        "calibration {id}: max_iops {}{} over {disks} disks",
        iogauge_plan::render::num(max_iops),
        max_mbps.map_or(String::new(), |m| format!(
            ", max_mbps {}",
            iogauge_plan::render::num(m)
        )),
    );
    Ok((
        Disk {
            iops: Iops(max_iops / n),
            mbps: max_mbps.map(|m| Mbps(m / n)),
        },
        source,
    ))
}

pub fn plan(a: PlanArgs) -> anyhow::Result<ExitCode> {
    let o = PlanOptions::from_args(a)?;
    let (disk, source) = match o.disk {
        DiskSource::Given { disk, source } => (disk, source),
        DiskSource::Run(id) => {
            let (disk, source) = calibration_disk(id, o.store.as_deref())?;
            if matches!(&o.mode, Mode::Size(w) if w.read_mbps.is_some()) && disk.mbps.is_none() {
                return Err(UsageError(format!(
                    "--mbps: calibration {id} has no max_mbps; add no --mbps, or use --disk-iops with --disk-mbps"
                ))
                .into());
            }
            (disk, source)
        }
    };
    let plan = match o.mode {
        Mode::Size(w) => Plan::Size(size(&w, &o.model, &disk, &o.layout)),
        Mode::History {
            path,
            columns,
            percentile,
        } => {
            let file = std::fs::File::open(&path).map_err(|e| {
                UsageError(format!("--history {}: cannot open: {e}", path.display()))
            })?;
            let periods = parse_history(std::io::BufReader::new(file), &columns)
                .map_err(|e| UsageError(format!("--history {}: {e}", path.display())))?;
            Plan::History(Box::new(plan_history(
                &periods, &o.model, &disk, &o.layout, percentile,
            )))
        }
        Mode::Capacity { read_share } => Plan::Capacity(capacity(
            o.layout.disks.expect("reverse mode has --disks"),
            read_share,
            &o.model,
            &disk,
            o.layout.per_enclosure,
        )),
    };
    let text = if o.json {
        serde_json::to_string_pretty(&plan)? + "\n"
    } else {
        iogauge_plan::render::text(&plan, &source)
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}
