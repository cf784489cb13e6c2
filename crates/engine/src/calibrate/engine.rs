//! The real prober: each point is an engine job on the prepared targets, with its interval
//! series, device samples, latency histogram and the I/O path it ran on.

use super::prober::Prober;
use crate::error::EngineError;
use crate::target::Target;
use iogauge_model::calib::{CalibrateSpec, Cell, Measured, Point, Step};
use iogauge_model::spec::{BlockSplit, JobSpec, RwMode};
use iogauge_stats::{measured_totals, DirStats, Nanos};
use std::sync::atomic::AtomicBool;

/// Bytes each target's region spans, checking the region holds a large I/O on every target
/// (so a bad --region fails before the preflight, not at the first large point).
pub fn tested_bytes(spec: &CalibrateSpec, targets: &[Target]) -> Result<Vec<u64>, EngineError> {
    let mut j = JobSpec::new(RwMode::RandRead);
    j.bs = BlockSplit(vec![
        iogauge_model::spec::BlockShare {
            bs: spec.small_bs,
            pct: 50,
        },
        iogauge_model::spec::BlockShare {
            bs: spec.large_bs,
            pct: 50,
        },
    ]);
    j.region = spec.region;
    let space = crate::job::layout(&j, targets)?;
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
        crate::job::run(&j, self.targets, self.stop, &mut |_| {})?;
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
fn both_dirs(o: &crate::job::JobOutcome) -> (DirStats, Nanos) {
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
        let results: Vec<Result<crate::job::JobOutcome, EngineError>> = std::thread::scope(|sc| {
            let handles: Vec<_> = jobs
                .iter()
                .map(|j| sc.spawn(move || crate::job::run(j, targets, stop, &mut |_| {})))
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
        let outcome = crate::job::run(&j, self.targets, self.stop, &mut |_| {})?;
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
