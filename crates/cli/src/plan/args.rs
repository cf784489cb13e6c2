//! `iogauge plan`'s flags as clap sees them. Every number is parsed within the plan's
//! [`limits`], so a bad value fails here with the flag's name; `options` checks the
//! combinations.

use crate::store_args::StoreArgs;
use iogauge_plan::limits::{self, Limit};
use iogauge_plan::{DiskProfile, Redundancy};
use std::path::PathBuf;

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
    #[arg(long, value_parser = crate::values::whole(1u64, limits::MAX_DISKS))]
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
    #[arg(long, value_name = "ID", value_parser = crate::values::result_id)]
    pub from_run: Option<i64>,
    /// Disks per enclosure (shelf, storage cell): also count enclosures.
    #[arg(long, value_name = "N", value_parser = crate::values::whole(1u32, u32::MAX))]
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
