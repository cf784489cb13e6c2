//! One stored run reduced to what a campaign report shows ([`RunDigest`]): the figures compared
//! across cases (keys of the [`catalogue`]), the time series, the steady-state window, wait
//! events and warnings; and a case's latency curves from its runs' histograms merged
//! ([`lat_curves`]).
//!
//! Documents come typed (`iogauge_model::Document`: the store reads them through the model,
//! so a document this iogauge cannot read is an error naming the run, never a silent gap).
//! A metric goes into a run's map only when it means something for that run: a direction
//! without I/Os has no latency, a run without device samples no device figures.

use crate::view::{AasPoint, RunDigest, SeriesPoint};
use iogauge_model::calib::CalibrationReport;
use iogauge_model::db::report::DbReport;
use iogauge_model::derive::{Derived, DiskRates};
use iogauge_model::finding::{rank, Finding, Layer};
use iogauge_model::run::{DirSummary, IntervalReport, RunReport};
use iogauge_model::Document;
use iogauge_stats::{LatHist, LatSummary, Phase};
use log::log_metrics;
use stand_in::stand_in_metrics;
use std::collections::BTreeMap;

mod curves;
mod error;
mod log;
mod stand_in;
pub use crate::metric::{catalogue, metric, Metric, CATALOGUE};
pub use curves::{lat_curves, CURVE_PERCENTILES};
pub use error::DigestError;

/// Digests the stored run `id` (repetition `rep`) from its document and histograms.
///
/// `histograms` are the run's stored ones; the whole-run `read`, `write` (and `update` for
/// database runs) give the p99.99 metrics and are checked to decode.
pub fn digest(
    id: i64,
    rep: u32,
    document: &Document,
    histograms: &[(String, Vec<u8>)],
) -> Result<RunDigest, DigestError> {
    let hists = Hists {
        id,
        all: histograms,
    };
    match document {
        Document::Run(r) => run(id, rep, r, &hists),
        Document::Calibration(c) => Ok(calibrate(id, rep, c)),
        Document::DbRun(d) => db(id, rep, d, &hists),
    }
}

/// The finding a result is summed up by: the highest-ranked one (`finding::rank`), the
/// healthy "no limit found" only when no layer limits; `None` without findings.
pub fn top_finding(findings: &[Finding]) -> Option<Finding> {
    let mut v = findings.to_vec();
    rank(&mut v);
    let limit = v.iter().position(|f| f.layer != Layer::None);
    v.into_iter().nth(limit.unwrap_or(0))
}

/// A run's stored histograms, decoded on demand.
struct Hists<'a> {
    id: i64,
    all: &'a [(String, Vec<u8>)],
}

impl Hists<'_> {
    /// The histogram labelled `label`; `None` when absent or empty.
    fn get(&self, label: &str) -> Result<Option<LatHist>, DigestError> {
        let Some((_, bytes)) = self.all.iter().find(|(l, _)| l == label) else {
            return Ok(None);
        };
        let h = LatHist::decode(bytes).map_err(|source| DigestError::Histogram {
            id: self.id,
            label: label.to_string(),
            source,
        })?;
        Ok((!h.is_empty()).then_some(h))
    }
}

/// A run's metrics: only finite values go in.
#[derive(Default)]
struct Metrics(BTreeMap<String, f64>);

impl Metrics {
    fn put(&mut self, key: &str, v: f64) {
        debug_assert!(metric(key).is_some(), "{key} is not in the catalogue");
        if v.is_finite() {
            self.0.insert(key.to_string(), v);
        }
    }

    /// `{prefix}_lat_mean_ms`, `_p99_ms`, `_p99_9_ms` from the document's summary (µs), and
    /// `_p99_99_ms` from the stored histogram when there is one.
    fn latency(&mut self, prefix: &str, lat: &LatSummary, hist: Option<&LatHist>) {
        self.put(&format!("{prefix}_lat_mean_ms"), lat.mean / 1e3);
        self.put(&format!("{prefix}_lat_p99_ms"), lat.p99 / 1e3);
        self.put(&format!("{prefix}_lat_p99_9_ms"), lat.p99_9 / 1e3);
        if let Some(h) = hist {
            let p99_99 = h.quantile_ns(0.9999) as f64 / 1e6;
            self.put(&format!("{prefix}_lat_p99_99_ms"), p99_99);
        }
    }
}

fn run(id: i64, rep: u32, r: &RunReport, hists: &Hists) -> Result<RunDigest, DigestError> {
    let s = &r.summary;
    let mut m = Metrics::default();
    if s.elapsed_s > 0.0 {
        m.put("iops", s.read.iops + s.write.iops);
        m.put("mbps", s.read.mbps + s.write.mbps);
    }
    for (d, dir) in [(&s.read, "read"), (&s.write, "write")] {
        if d.ios == 0 {
            continue;
        }
        m.put(&format!("{dir}_iops"), d.iops);
        m.put(&format!("{dir}_mbps"), d.mbps);
        m.latency(dir, &d.lat_us, hists.get(dir)?.as_ref());
    }
    let disks: &[String] = r.hardware.as_ref().map_or(&[], |h| &h.disks);
    if let Some(h) = r.hardware.as_ref().filter(|h| devices_measured(h)) {
        m.put("device_iops", h.read.device_iops + h.write.device_iops);
        m.put("device_mbps", h.read.device_mbps + h.write.device_mbps);
        m.put("device_read_iops", h.read.device_iops);
        m.put("device_write_iops", h.write.device_iops);
    }
    // A raw stand-in of a db run: its figures under the database's names, its log's (the
    // same names as a log writer's) only where the log was the load; any other run's log
    // writer as it is.
    if r.options.like.is_some() {
        for (key, v) in stand_in_metrics(r) {
            m.put(key, v);
        }
    } else {
        for (key, v) in log_metrics(r) {
            m.put(key, v);
        }
    }
    let first = first_measured(r.intervals.iter().map(|i| (i.phase, i.t_s)));
    let mut steady_from_s = steady_at(first, r.steady.as_ref().and_then(|s| s.reached_at_s));
    if steady_from_s.is_none() {
        // `--steady` found its window during the ramp, but the measured window was too short
        // to be judged again.
        steady_from_s = r
            .steady_wait
            .as_ref()
            .filter(|w| w.reached)
            .and_then(|w| w.window_s.map(|(a, _)| a));
    }
    let mut warnings = r.warnings.clone();
    // The findings say what the notes said, ranked: never both.
    if r.findings.is_empty() {
        warnings.extend(r.hardware.iter().flat_map(|h| h.notes.iter().cloned()));
    }
    Ok(RunDigest {
        id,
        rep,
        kind: r.meta.kind.command().into(),
        started_at: r.meta.started_at.clone(),
        interrupted: r.meta.interrupted,
        metrics: m.0,
        series: r.intervals.iter().map(|iv| io_point(iv, disks)).collect(),
        steady_from_s,
        steady_left_s: steady_at(first, r.steady.as_ref().and_then(|s| s.left_at_s)),
        read_share: share(s.read.ios as f64, s.write.ios as f64),
        aas: Vec::new(),
        warnings,
        finding: top_finding(&r.findings),
    })
}

/// The series of the max_iops point (else of the last point): a calibration's steady figure.
fn calibrate(id: i64, rep: u32, c: &CalibrationReport) -> RunDigest {
    let mut m = Metrics::default();
    for (key, v) in [
        ("max_iops", c.max_iops),
        ("latency_ms", c.latency),
        ("max_mbps", c.max_mbps),
        ("max_pmbps", c.max_pmbps),
    ] {
        if let Some(v) = v {
            m.put(key, v);
        }
    }
    // max_iops is the iops of one small-I/O point, copied exactly (serde_json round-trips f64).
    let best = c
        .points
        .iter()
        .find(|p| Some(p.point.iops) == c.max_iops && Some(p.point.outstanding) == c.outstanding)
        .or(c.points.last());
    let (reads, writes) = c
        .points
        .iter()
        .flat_map(|p| &p.intervals)
        .filter(|i| i.phase == Phase::Measure)
        .fold((0.0, 0.0), |(r, w), i| {
            (r + i.read.ios as f64, w + i.write.ios as f64)
        });
    let mut warnings = c.warnings.clone();
    if c.findings.is_empty() {
        warnings.extend(c.verdicts.iter().cloned());
    }
    RunDigest {
        id,
        rep,
        kind: c.meta.kind.command().into(),
        started_at: c.meta.started_at.clone(),
        interrupted: c.meta.interrupted,
        metrics: m.0,
        series: best.map_or_else(Vec::new, |p| {
            p.intervals.iter().map(|iv| io_point(iv, &[])).collect()
        }),
        steady_from_s: None,
        steady_left_s: None,
        read_share: share(reads, writes),
        aas: Vec::new(),
        warnings,
        finding: top_finding(&c.findings),
    }
}

fn db(id: i64, rep: u32, r: &DbReport, hists: &Hists) -> Result<RunDigest, DigestError> {
    let s = &r.summary;
    let ss = &s.sessions;
    let disks: &[String] = r.cache.as_ref().map_or(&[], |c| &c.disks);
    let first = first_measured(r.intervals.iter().map(|i| (i.phase, i.t_s)));
    let mut warnings = r.warnings.clone();
    if let Some(e) = &r.error {
        warnings.push(format!("the run ended early: {e}"));
    }
    if r.findings.is_empty() {
        warnings.extend(r.cache.as_ref().and_then(|c| c.note.clone()));
    }
    Ok(RunDigest {
        id,
        rep,
        kind: r.meta.kind.command().into(),
        started_at: r.meta.started_at.clone(),
        interrupted: r.meta.interrupted,
        metrics: db_metrics(r, hists, disks)?.0,
        series: db_series(r, disks),
        steady_from_s: steady_at(first, r.steady.as_ref().and_then(|s| s.reached_at_s)),
        steady_left_s: steady_at(first, r.steady.as_ref().and_then(|s| s.left_at_s)),
        // In physical I/Os, as the devices see the mix: an update reads its row first, so
        // counting operations would call a writers-only run 0% reads.
        read_share: share(s.db.physical_reads_s, s.db.physical_writes_s())
            .or_else(|| share(ss.reads_s, ss.updates_s)),
        aas: r
            .intervals
            .iter()
            .map(|iv| AasPoint {
                t_s: iv.t_s,
                events: iv.aas.sessions.clone(),
            })
            .collect(),
        warnings,
        finding: top_finding(&r.findings),
    })
}

/// A database run's intervals: the sessions' reads and updates per second, the slower
/// operation's latency, and what the disks did.
fn db_series(r: &DbReport, disks: &[String]) -> Vec<SeriesPoint> {
    r.intervals
        .iter()
        .map(|iv| {
            let ss = &iv.sessions;
            let lats = [
                (ss.reads_s > 0.0).then_some(&ss.read_lat_us),
                (ss.updates_s > 0.0).then_some(&ss.update_lat_us),
            ];
            let at = Point {
                t_s: iv.t_s,
                dur_s: iv.dur_s,
                phase: iv.phase,
            };
            point(
                at,
                [ss.reads_s, ss.updates_s],
                lats,
                device(iv.system.as_ref(), disks),
            )
        })
        .collect()
}

/// A database run's metrics: the sessions' and the database's rates, the operations'
/// latencies, and the devices' rates over the measured window.
fn db_metrics(r: &DbReport, hists: &Hists, disks: &[String]) -> Result<Metrics, DigestError> {
    let s = &r.summary;
    let ss = &s.sessions;
    let mut m = Metrics::default();
    if s.elapsed_s > 0.0 {
        m.put("ops_s", ss.ops_s);
        m.put("db_logical_reads_s", s.db.logical_reads_s);
        m.put("db_physical_reads_s", s.db.physical_reads_s);
        if let Some(ms) = s.db.avg_read_ms {
            m.put("db_avg_read_ms", ms);
        }
        m.put("db_physical_writes_s", s.db.physical_writes_s());
        if let Some(x) = r.writes.as_ref().and_then(|w| w.per_db_write) {
            m.put("device_writes_per_db_write", x);
        }
        if ss.updates_s > 0.0 {
            m.put("commits_s", s.db.commits_s);
            m.put("log_mbps", s.db.log_bytes_s.mib().0);
            if let Some(ms) = s.db.avg_log_write_ms {
                m.put("log_write_ms", ms.0);
            }
            if let Some(ms) = s.db.avg_log_sync_ms {
                m.put("log_sync_ms", ms.0);
            }
        }
    }
    if ss.reads_s > 0.0 {
        m.latency("op_read", &ss.read_lat_us, hists.get("read")?.as_ref());
    }
    if ss.updates_s > 0.0 {
        let h = hists.get("update")?;
        m.latency("op_update", &ss.update_lat_us, h.as_ref());
    }
    // The measured window's device rates: each interval's rate weighted by its length, which
    // is the window's count over its duration when the intervals tile it.
    let measured: Vec<(f64, Device)> = r
        .intervals
        .iter()
        .filter(|iv| iv.phase == Phase::Measure)
        .filter_map(|iv| Some((iv.dur_s, device(iv.system.as_ref(), disks)?)))
        .collect();
    let secs: f64 = measured.iter().map(|(d, _)| d).sum();
    if secs > 0.0 {
        let avg =
            |f: fn(&Device) -> f64| measured.iter().map(|(d, x)| d * f(x)).sum::<f64>() / secs;
        m.put("device_iops", avg(|d| d.iops));
        m.put("device_mbps", avg(|d| d.mbps));
        m.put("device_read_iops", avg(|d| d.r_iops));
        m.put("device_write_iops", avg(|d| d.w_iops));
    }
    Ok(m)
}

/// One interval of `run` or `calibrate`.
fn io_point(iv: &IntervalReport, disks: &[String]) -> SeriesPoint {
    fn of(d: &DirSummary) -> Option<&LatSummary> {
        (d.ios > 0).then_some(&d.lat_us)
    }
    let at = Point {
        t_s: iv.t_s,
        dur_s: iv.dur_s,
        phase: iv.phase,
    };
    let rates = [iv.read.iops, iv.write.iops];
    point(
        at,
        rates,
        [of(&iv.read), of(&iv.write)],
        device(iv.system.as_ref(), disks),
    )
}

/// Where an interval is on the run's time axis.
struct Point {
    t_s: f64,
    dur_s: f64,
    phase: Phase,
}

/// One interval of any kind: its read and write rates, the latencies of the directions
/// that did something (the slower one is shown), and what the disks did.
fn point(
    at: Point,
    [read_iops, write_iops]: [f64; 2],
    lats: [Option<&LatSummary>; 2],
    dev: Option<Device>,
) -> SeriesPoint {
    let lat = |f: fn(&LatSummary) -> f64| larger(lats.map(|l| l.map(f)));
    SeriesPoint {
        t_s: at.t_s,
        dur_s: at.dur_s,
        ramp: at.phase == Phase::Ramp,
        read_iops,
        write_iops,
        lat_mean_us: lat(|l| l.mean),
        lat_p99_us: lat(|l| l.p99),
        dev_iops: dev.map(|d| d.iops),
        util_pct: dev.map(|d| d.util),
    }
}

fn larger(xs: [Option<f64>; 2]) -> Option<f64> {
    xs.into_iter().flatten().max_by(f64::total_cmp)
}

/// Where the first measured interval starts, seconds from the run's start.
fn first_measured(mut ivs: impl Iterator<Item = (Phase, f64)>) -> Option<f64> {
    ivs.find(|(p, _)| *p == Phase::Measure).map(|(_, t)| t)
}

/// A steady-state time stored relative to the measured window, made relative to the run.
fn steady_at(first_measured: Option<f64>, rel: Option<f64>) -> Option<f64> {
    Some(first_measured? + rel?)
}

fn share(reads: f64, writes: f64) -> Option<f64> {
    (reads + writes > 0.0).then(|| reads / (reads + writes))
}

/// What the whole disks did in one interval.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Device {
    /// r/s + w/s summed.
    iops: f64,
    /// r/s and w/s summed apart: the device's read/write split.
    r_iops: f64,
    w_iops: f64,
    /// rMB/s + wMB/s summed.
    mbps: f64,
    /// The busiest disk's %util.
    util: f64,
}

/// The figures of an interval's whole disks: those named by the run (`hardware.disks`,
/// `cache.disks`) when the interval has them, else [`whole_disks`] of its map.
pub fn disk_rates<'a>(system: &'a Derived, disks: &[String]) -> Vec<&'a DiskRates> {
    let map = &system.disks;
    let mut names: Vec<&str> = disks
        .iter()
        .map(String::as_str)
        .filter(|n| map.contains_key(*n))
        .collect();
    if names.is_empty() {
        names = whole_disks(map.keys().map(String::as_str));
    }
    names.iter().filter_map(|n| map.get(*n)).collect()
}

/// Whether a run's device figures were measured: a document stored before iogauge left
/// them out when none of its disks was sampled holds -0.0 in each (the sum over no disk),
/// or no disk at all. A measured 0 is +0.0.
fn devices_measured(h: &iogauge_model::hardware::Hardware) -> bool {
    let figures = [
        h.read.device_iops,
        h.read.device_mbps,
        h.write.device_iops,
        h.write.device_mbps,
    ];
    let unsampled = figures.iter().all(|x| *x == 0.0 && x.is_sign_negative());
    !h.disks.is_empty() && !unsampled
}

/// Sums the whole disks of an interval ([`disk_rates`]).
fn device(system: Option<&Derived>, disks: &[String]) -> Option<Device> {
    let rates = disk_rates(system?, disks);
    if rates.is_empty() {
        return None;
    }
    Some(Device {
        iops: rates.iter().map(|r| r.r_s + r.w_s).sum(),
        r_iops: rates.iter().map(|r| r.r_s).sum(),
        w_iops: rates.iter().map(|r| r.w_s).sum(),
        mbps: rates.iter().map(|r| r.r_mb_s + r.w_mb_s).sum(),
        util: rates.iter().map(|r| r.util).fold(0.0, f64::max),
    })
}

/// The names among `names` that look like whole disks, for a run that did not record its
/// disks (calibrate): neither a virtual device (loop, md, dm, zram, nbd) nor a partition of
/// another name present. A partition is named as the kernel's `disk_name()` does: the disk's
/// name plus the number, with a `p` between when the disk's name ends in a digit (`sda1`,
/// `nvme0n1p2`). All names when none qualifies.
pub fn whole_disks<'a>(names: impl Iterator<Item = &'a str> + Clone) -> Vec<&'a str> {
    let virt = ["loop", "md", "dm-", "zram", "nbd", "ram"];
    let partition_of = |part: &str, disk: &str| {
        let Some(rest) = part.strip_prefix(disk) else {
            return false;
        };
        let rest = if disk.ends_with(|c: char| c.is_ascii_digit()) {
            match rest.strip_prefix('p') {
                Some(r) => r,
                None => return false,
            }
        } else {
            rest
        };
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
    };
    let whole: Vec<&str> = names
        .clone()
        .filter(|n| !virt.iter().any(|v| n.starts_with(v)))
        .filter(|n| !names.clone().any(|d| partition_of(n, d)))
        .collect();
    if whole.is_empty() {
        names.collect()
    } else {
        whole
    }
}
