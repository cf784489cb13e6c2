//! Calibration (CALIBRATE_IO and ORION in one): search the number of outstanding I/Os for the
//! highest IOPS whose latency stays under a cap, the highest MB/s of large I/Os, and the MB/s
//! of one process.
//!
//! The search is written against `Prober`, so it is tested on a deterministic device model;
//! `EngineProber` is the real one, running the engine on prepared targets.

use crate::spec::{secs, BlockSplit, EngineKind, JobSpec, Region, RwMode};
use crate::target::Target;
use crate::EngineError;
use iogauge_stats::{measured_totals, DirStats, Interval, LatHist, LatSummary, Nanos};
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Which latency figure the cap applies to (CALIBRATE_IO uses the mean).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Criterion {
    Mean,
    P95,
    P99,
}

impl Criterion {
    pub fn of(self, l: &LatSummary) -> f64 {
        match self {
            Criterion::Mean => l.mean,
            Criterion::P95 => l.p95,
            Criterion::P99 => l.p99,
        }
    }
}

impl std::str::FromStr for Criterion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "mean" => Ok(Criterion::Mean),
            "p95" => Ok(Criterion::P95),
            "p99" => Ok(Criterion::P99),
            _ => Err(format!("unknown criterion '{s}': use mean, p95 or p99")),
        }
    }
}

/// The three steps of a calibration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// Small random reads (8 KiB), outstanding I/Os searched: max_iops.
    Small,
    /// Large random reads (1 MiB), outstanding I/Os searched: max_mbps.
    Large,
    /// One worker (one process) issuing large reads at the best large-I/O depth: max_pmbps.
    Single,
}

/// One measured point of a curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub step: Step,
    /// Outstanding I/Os over all workers.
    pub outstanding: u32,
    /// Worker threads sharing them (each with its own ring).
    #[serde(default = "one")]
    pub workers: u32,
    pub ios: u64,
    pub iops: f64,
    pub mbps: f64,
    pub lat_us: LatSummary,
    /// Went against the curve (fell more than the noise below a point with fewer
    /// outstanding I/Os) and was measured once more; the later measurement counts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub superseded: bool,
}

fn one() -> u32 {
    1
}

/// A point with what it was made of, for the store.
#[derive(Clone, Debug)]
pub struct Measured {
    pub point: Point,
    pub intervals: Vec<Interval>,
    /// /proc snapshots on the point's interval grid (devices, CPU).
    pub samples: Vec<iogauge_probe::Snapshot>,
    pub hist: LatHist,
    /// The memory and I/O path the point ran on (`None` from a device model).
    pub io_path: Option<crate::IoPath>,
}

/// Runs one point. `Ok(None)`: interrupted before the point's window was complete.
pub trait Prober {
    type Error;
    fn measure(
        &mut self,
        step: Step,
        bs: u64,
        outstanding: u32,
    ) -> Result<Option<Measured>, Self::Error>;
    /// Small and large random reads at the same time (one cell of ORION's matrix).
    fn measure_mixed(
        &mut self,
        small_bs: u64,
        small: u32,
        large_bs: u64,
        large: u32,
    ) -> Result<Option<Cell>, Self::Error>;
}
/// What to calibrate, validated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrateSpec {
    pub small_bs: u64,
    pub large_bs: u64,
    #[serde(with = "secs")]
    pub point_time: Duration,
    #[serde(with = "secs")]
    pub point_ramp: Duration,
    /// The latency cap, microseconds.
    pub max_latency_us: f64,
    pub criterion: Criterion,
    pub disks: u32,
    /// Upper end of the outstanding-I/O ramp (from `disks`).
    pub max_outstanding: u32,
    /// Share of writes mixed into every point (ORION -write).
    pub write_pct: u8,
    /// Unmeasured large reads over this many bytes before each point (ORION -cache_size).
    pub cache_size: Option<u64>,
    /// Also run ORION's small × large mixed matrix.
    #[serde(default)]
    pub matrix: bool,
    pub engine: EngineKind,
    pub direct: bool,
    pub region: Region,
    pub seed: u64,
    /// `--layout` over the targets, as in `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<crate::spec::LayoutOpts>,
    /// `--mem`, `--fixed-bufs`, `--ring-setup`, `--submit-batch`, as in `run`.
    #[serde(flatten)]
    pub io: crate::iopath::IoPathOpts,
    /// What the points ran on (the first point's path; a point that differs is warned of).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_path: Option<crate::IoPath>,
}

impl CalibrateSpec {
    /// The outstanding-I/O ceiling for `disks` disks: 32 per disk, at least 64 (ORION goes
    /// to 5 × disks for small I/O; flash and arrays need far deeper queues to saturate).
    pub fn ceiling(disks: u32) -> u32 {
        (disks.saturating_mul(32)).clamp(64, 4096)
    }
}

/// A finished (or interrupted) calibration.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub measured: Vec<Measured>,
    /// ORION's matrix, when asked for.
    pub matrix: Vec<Cell>,
    pub interrupted: bool,
}

impl Outcome {
    /// The points of a step that count (not superseded by a second measurement).
    pub fn points(&self, step: Step) -> impl Iterator<Item = &Point> {
        self.measured
            .iter()
            .map(|m| &m.point)
            .filter(move |p| p.step == step && !p.superseded)
    }
}

/// Runs the three steps.
pub fn calibrate<P: Prober>(p: &mut P, spec: &CalibrateSpec) -> Result<Outcome, P::Error> {
    let mut out = Outcome::default();
    let (cap, crit, max) = (spec.max_latency_us, spec.criterion, spec.max_outstanding);
    knee_search(p, Step::Small, spec.small_bs, cap, crit, max, &mut out)?;
    if !out.interrupted {
        throughput_search(p, spec.large_bs, (max / 4).max(16), &mut out)?;
    }
    if !out.interrupted {
        // One process at the (shallowest) depth where the array gave its best large-I/O MB/s.
        let best = out
            .points(Step::Large)
            .reduce(|a, b| if b.mbps > a.mbps { b } else { a })
            .map_or(1, |p| p.outstanding);
        match p.measure(Step::Single, spec.large_bs, best)? {
            Some(m) => out.measured.push(m),
            None => out.interrupted = true,
        }
    }
    if spec.matrix && !out.interrupted {
        matrix::run(p, spec, &mut out)?;
    }
    Ok(out)
}

/// The CALIBRATE_IO figures of an outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Highest IOPS of a small-I/O point meeting the cap.
    pub max_iops: Option<f64>,
    /// That point's criterion latency, milliseconds.
    pub latency: Option<f64>,
    /// Outstanding I/Os of that point.
    pub outstanding: Option<u32>,
    /// Highest MB/s of a large-I/O point.
    pub max_mbps: Option<f64>,
    /// MB/s of one worker (one process) at the best large-I/O depth.
    pub max_pmbps: Option<f64>,
}

pub fn figures(out: &Outcome, crit: Criterion, cap_us: f64) -> Figures {
    let meets = |p: &&Point| crit.of(&p.lat_us) <= cap_us;
    let best = out
        .points(Step::Small)
        .filter(meets)
        .max_by(|a, b| a.iops.total_cmp(&b.iops));
    Figures {
        max_iops: best.map(|p| p.iops),
        latency: best.map(|p| crit.of(&p.lat_us) / 1e3),
        outstanding: best.map(|p| p.outstanding),
        max_mbps: out
            .points(Step::Large)
            .map(|p| p.mbps)
            .max_by(f64::total_cmp),
        max_pmbps: out
            .points(Step::Single)
            .map(|p| p.mbps)
            .max_by(f64::total_cmp),
    }
}

/// Bytes each target's region spans, checking the region holds a large I/O on every target
/// (so a bad --region fails before the preflight, not at the first large point).
pub fn tested_bytes(spec: &CalibrateSpec, targets: &[Target]) -> Result<Vec<u64>, EngineError> {
    let mut j = JobSpec::new(RwMode::RandRead);
    j.bs = BlockSplit(vec![
        crate::spec::BlockShare {
            bs: spec.small_bs,
            pct: 50,
        },
        crate::spec::BlockShare {
            bs: spec.large_bs,
            pct: 50,
        },
    ]);
    j.region = spec.region;
    let space = crate::layout(&j, targets)?;
    Ok(space.extents().iter().map(|e| e.len).collect())
}

/// The real prober: each point is an engine job on the prepared targets.
pub struct EngineProber<'a> {
    pub targets: &'a [Target],
    pub spec: &'a CalibrateSpec,
    pub stop: &'a AtomicBool,
    /// Called after each finished point (live display).
    pub on_point: &'a mut dyn FnMut(&Point),
    /// Most workers a point uses (the machine's cores: a database spreads I/O over processes).
    pub cores: u32,
    pub runs: u64,
}

/// Workers for `n` outstanding I/Os: the most, up to `cores`, that divide `n` evenly.
pub fn workers_for(n: u32, cores: u32) -> u32 {
    (1..=cores.clamp(1, n.max(1)))
        .rev()
        .find(|w| n.is_multiple_of(*w))
        .unwrap_or(1)
}

impl EngineProber<'_> {
    fn job(&self, rw: RwMode, bs: u64, qd: u32, workers: u32) -> JobSpec {
        let mut j = JobSpec::new(rw);
        j.read_pct = 100 - self.spec.write_pct;
        j.bs = BlockSplit::single(bs);
        j.qd = qd;
        j.workers = workers;
        j.engine = self.spec.engine;
        j.direct = self.spec.direct;
        j.region = self.spec.region;
        j.seed = self.spec.seed.wrapping_add(self.runs);
        j.layout = self.spec.layout.clone();
        j.io = self.spec.io;
        j
    }

    /// ORION's cache flush: unmeasured large random reads before a point. Capped to the
    /// tested span: a flush larger than the span only re-reads its blocks and evicts
    /// nothing more from a cache that holds them all (`--cache-size 1T` on 64 MiB read a
    /// TiB before every point); the CLI says so once.
    fn flush_cache(&mut self) -> Result<(), EngineError> {
        let Some(bytes) = self.spec.cache_size else {
            return Ok(());
        };
        let span: u64 = tested_bytes(self.spec, self.targets)?.iter().sum();
        let mut j = self.job(RwMode::RandRead, self.spec.large_bs, 8, 1);
        j.time = None;
        j.ios = Some((bytes.min(span) / self.spec.large_bs).max(1));
        crate::run(&j, self.targets, self.stop, &mut |_| {})?;
        Ok(())
    }
}

impl EngineProber<'_> {
    /// The job of one measured point: `n` outstanding I/Os of `bs` over `workers`.
    fn point_job(&self, bs: u64, n: u32, workers: u32) -> JobSpec {
        let rw = if self.spec.write_pct > 0 {
            RwMode::RandRw
        } else {
            RwMode::RandRead
        };
        let mut j = self.job(rw, bs, n / workers, workers);
        j.time = Some(self.spec.point_time);
        j.ramp = self.spec.point_ramp;
        j
    }
}

/// Reads and writes of a job's measured window together, and the window's length.
fn both_dirs(o: &crate::JobOutcome) -> (DirStats, Nanos) {
    let (t, elapsed) = measured_totals(&o.intervals);
    let mut both = t.read;
    both += &t.write;
    (both, elapsed)
}

impl Prober for EngineProber<'_> {
    type Error = EngineError;

    fn measure_mixed(
        &mut self,
        small_bs: u64,
        small: u32,
        large_bs: u64,
        large: u32,
    ) -> Result<Option<Cell>, EngineError> {
        self.runs += 1;
        self.flush_cache()?;
        let jobs: Vec<JobSpec> = [(small_bs, small), (large_bs, large)]
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|&(bs, n)| self.point_job(bs, n, workers_for(n, self.cores)))
            .collect();
        let (targets, stop) = (self.targets, self.stop);
        // Both kinds of I/O at once: one engine job each, side by side on the same targets.
        let results: Vec<Result<crate::JobOutcome, EngineError>> = std::thread::scope(|sc| {
            let handles: Vec<_> = jobs
                .iter()
                .map(|j| sc.spawn(move || crate::run(j, targets, stop, &mut |_| {})))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("matrix job thread"))
                .collect()
        });
        let mut totals = Vec::new();
        for r in results {
            let o = r?;
            if o.interrupted {
                return Ok(None);
            }
            totals.push(both_dirs(&o));
        }
        let mut it = totals.into_iter();
        let s = if small > 0 { it.next() } else { None };
        let l = if large > 0 { it.next() } else { None };
        Ok(Some(Cell {
            small,
            large,
            small_iops: s.as_ref().map_or(0.0, |(d, el)| d.iops(*el)),
            small_lat_us: s.as_ref().map(|(d, _)| d.lat.summary()).unwrap_or_default(),
            large_mbps: l.as_ref().map_or(0.0, |(d, el)| d.mbps(*el)),
        }))
    }

    fn measure(
        &mut self,
        step: Step,
        bs: u64,
        outstanding: u32,
    ) -> Result<Option<Measured>, EngineError> {
        self.runs += 1;
        self.flush_cache()?;
        let workers = match step {
            Step::Single => 1,
            Step::Small | Step::Large => workers_for(outstanding, self.cores),
        };
        let j = self.point_job(bs, outstanding, workers);
        let outcome = crate::run(&j, self.targets, self.stop, &mut |_| {})?;
        if outcome.interrupted {
            return Ok(None);
        }
        let (both, elapsed) = both_dirs(&outcome);
        let point = Point {
            step,
            outstanding,
            workers,
            ios: both.ios,
            iops: both.iops(elapsed),
            mbps: both.mbps(elapsed),
            lat_us: both.lat.summary(),
            superseded: false,
        };
        (self.on_point)(&point);
        Ok(Some(Measured {
            point,
            intervals: outcome.intervals,
            samples: outcome.samples,
            hist: both.lat,
            io_path: Some(outcome.io_path),
        }))
    }
}

mod matrix;
mod search;
mod verdicts;
pub use matrix::{levels, Cell};
pub use search::{knee_search, throughput_search, NOISE};
pub use verdicts::verdicts;

#[cfg(test)]
mod tests;
