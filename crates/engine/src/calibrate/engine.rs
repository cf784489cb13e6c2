//! The real prober: each point is an engine job on the prepared targets, with its interval
//! series, latency histogram and the I/O path it ran on, and the device samples the caller's
//! [`Sampling`] took beside it.

use super::prober::Prober;
use crate::error::EngineError;
use crate::job::JobOutcome;
use crate::placement::Member;
use crate::target::{Target, TargetSpec};
use iogauge_model::calib::{CalibrateSpec, Cell, LargeType, Measured, Point, Step};
use iogauge_model::spec::{BlockSplit, JobSpec, RwMode};
use iogauge_model::system::Snapshot;
use iogauge_stats::{measured_totals, DirStats, Interval, LatHist, Nanos};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// A job as [`Sampling::beside`] runs it: told where to report its t0.
pub type TellingJob<'j> =
    dyn FnMut(&(dyn Fn(Instant) + Sync)) -> Result<JobOutcome, EngineError> + 'j;

/// Who samples the system (devices, CPU) beside each measured point: the session's sampler,
/// on the point job's interval grid ([`crate::grid`]). The engine measures I/O only.
pub trait Sampling {
    /// Runs `job` (a job of `spec`) with a sampler beside it from the t0 the job tells;
    /// its outcome and the snapshots.
    fn beside(
        &self,
        spec: &JobSpec,
        job: &mut TellingJob<'_>,
    ) -> (Result<JobOutcome, EngineError>, Vec<Snapshot>);
}

/// No sampling (a calibration whose device figures are not wanted, tests).
pub struct Unsampled;

impl Sampling for Unsampled {
    fn beside(
        &self,
        _: &JobSpec,
        job: &mut TellingJob<'_>,
    ) -> (Result<JobOutcome, EngineError>, Vec<Snapshot>) {
        (job(&|_| {}), Vec::new())
    }
}

/// Bytes each target's region spans, checking the region holds a large I/O on every target
/// (so a bad --region fails before the preflight, not at the first large point).
pub fn tested_bytes<M: Member>(
    spec: &CalibrateSpec,
    targets: &[M],
) -> Result<Vec<u64>, EngineError> {
    let space = crate::placement::layout(&sizing_job(spec), targets)?;
    Ok(space.extents().iter().map(|e| e.len).collect())
}

/// [`crate::check_planned`] for a calibration: its region, large I/O and layout over the
/// targets as they will be, before any is created or pre-filled.
pub fn check_planned(spec: &CalibrateSpec, targets: &[TargetSpec]) -> Result<(), EngineError> {
    let mut j = sizing_job(spec);
    j.set_setup(spec.setup.clone());
    crate::placement::check_planned(&j, targets)
}

/// A job of the calibration's small and large I/Os over its region (what placing needs).
fn sizing_job(spec: &CalibrateSpec) -> JobSpec {
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
    j.region = spec.setup.region;
    j
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
    /// Samples the devices and CPU beside each measured point.
    pub sampling: &'a dyn Sampling,
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
        j.set_setup(self.spec.setup.clone());
        j.seed = self.spec.setup.seed.wrapping_add(self.runs);
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
    /// Whether a step's I/Os are sequential streams (`--large-type seq` on large I/Os).
    fn streams(&self, step: Step) -> bool {
        step != Step::Small && self.spec.large_type == LargeType::Seq
    }

    /// The job of one measured point of `step` (the small or the large side of a matrix
    /// cell as `Small` or `Large`): `n` outstanding I/Os of `bs`.
    ///
    /// Sequential large I/Os reuse the engine's sequential pattern, where each worker
    /// streams its own slice of the tested span: one worker per outstanding I/O makes one
    /// stream per outstanding I/O (ORION `-type seq`), every stream reading (or, at
    /// `--write-pct 100`, writing; the CLI refuses a mix) its own run. Step single stays one
    /// worker: one process's one stream with `n` I/Os in flight.
    pub fn point_job(&self, step: Step, bs: u64, n: u32) -> JobSpec {
        let rw = match (self.streams(step), self.spec.write_pct) {
            (true, 100) => RwMode::Write,
            (true, _) => RwMode::Read,
            (false, 0) => RwMode::RandRead,
            (false, _) => RwMode::RandRw,
        };
        let workers = self.workers(step, n);
        let mut j = self.job(rw, bs, n / workers, workers);
        j.time = Some(self.spec.point_time);
        j.ramp = self.spec.point_ramp;
        j.interval = iogauge_model::calib::POINT_INTERVAL;
        j
    }
}

/// Reads and writes of a measured window together, and the window's length.
fn both_dirs(intervals: &[Interval]) -> (DirStats, Nanos) {
    let (t, elapsed) = measured_totals(intervals);
    let mut both = t.read;
    both += &t.write;
    (both, elapsed)
}

/// The point a measured series makes (`outstanding` I/Os over `workers`), with its latency
/// histogram: one process's series or several ranks' merged.
pub fn point_of(
    step: Step,
    outstanding: u32,
    workers: u32,
    intervals: &[Interval],
) -> (Point, LatHist) {
    let (both, elapsed) = both_dirs(intervals);
    let point = Point {
        step,
        outstanding,
        workers,
        ios: both.ios,
        iops: both.iops(elapsed),
        mbps: both.mbps(elapsed),
        lat_us: both.lat.summary(),
        superseded: false,
        rank_ios: Vec::new(),
    };
    (point, both.lat)
}

/// One cell of the matrix from the small and the large I/Os' series (`None`: none of that
/// kind ran), with the small I/Os' latency histogram (empty without small I/Os).
pub fn cell_of(
    small: u32,
    large: u32,
    s: Option<&[Interval]>,
    l: Option<&[Interval]>,
) -> (Cell, LatHist) {
    let s = s.map(both_dirs);
    let l = l.map(both_dirs);
    let cell = Cell {
        small,
        large,
        small_iops: s.as_ref().map_or(0.0, |(d, el)| d.iops(*el)),
        small_lat_us: s.as_ref().map(|(d, _)| d.lat.summary()).unwrap_or_default(),
        large_mbps: l.as_ref().map_or(0.0, |(d, el)| d.mbps(*el)),
    };
    (cell, s.map(|(d, _)| d.lat).unwrap_or_default())
}

impl EngineProber<'_> {
    /// Before a point: a new seed for it and, when `flush`, ORION's cache flush.
    pub fn begin_point(&mut self, flush: bool) -> Result<(), EngineError> {
        self.runs += 1;
        if flush {
            self.flush_cache()?;
        }
        Ok(())
    }

    /// Workers a point of `step` with `n` outstanding I/Os runs on: sequential large I/Os
    /// one per stream (each outstanding I/O), step single one.
    pub fn workers(&self, step: Step, n: u32) -> u32 {
        match step {
            Step::Single => 1,
            Step::Large if self.streams(step) => n.max(1),
            Step::Small | Step::Large => workers_for(n, self.cores),
        }
    }

    /// Runs one point's job: `n` outstanding I/Os of `bs` (no flush: see `begin_point`),
    /// `on_interval` after each of its intervals, sampled beside it: its outcome and the
    /// snapshots.
    pub fn run_point(
        &self,
        step: Step,
        bs: u64,
        n: u32,
        on_interval: &mut dyn FnMut(&Interval),
    ) -> Result<(JobOutcome, Vec<Snapshot>), EngineError> {
        let j = self.point_job(step, bs, n);
        let (targets, stop) = (self.targets, self.stop);
        let (outcome, samples) = self.sampling.beside(&j, &mut |started| {
            crate::job::run_telling(&j, targets, None, stop, on_interval, started)
        });
        Ok((outcome?, samples))
    }

    /// Small and large I/Os at once (the large ones random or sequential streams, as in the
    /// large step), one engine job each side by side on the same targets: their outcomes in
    /// that order, a kind with no outstanding I/Os left out. The first job runs on this
    /// thread (`on_interval` after each of its intervals).
    pub fn run_mixed(
        &self,
        small_bs: u64,
        small: u32,
        large_bs: u64,
        large: u32,
        on_interval: &mut dyn FnMut(&Interval),
    ) -> Result<Vec<JobOutcome>, EngineError> {
        let jobs: Vec<JobSpec> = [
            (Step::Small, small_bs, small),
            (Step::Large, large_bs, large),
        ]
        .iter()
        .filter(|(_, _, n)| *n > 0)
        .map(|&(step, bs, n)| self.point_job(step, bs, n))
        .collect();
        let (targets, stop) = (self.targets, self.stop);
        let Some((first, rest)) = jobs.split_first() else {
            return Ok(Vec::new());
        };
        std::thread::scope(|sc| {
            let others: Vec<_> = rest
                .iter()
                .map(|j| sc.spawn(move || crate::job::run(j, targets, stop, &mut |_| {})))
                .collect();
            let mut all = vec![crate::job::run(first, targets, stop, on_interval)];
            all.extend(
                others
                    .into_iter()
                    .map(|h| h.join().expect("matrix job thread")),
            );
            all.into_iter().collect()
        })
    }
}

impl Prober for EngineProber<'_> {
    type Error = EngineError;

    fn measure_mixed(
        &mut self,
        small_bs: u64,
        small: u32,
        large_bs: u64,
        large: u32,
    ) -> Result<Option<(Cell, LatHist)>, EngineError> {
        self.begin_point(true)?;
        let outcomes = self.run_mixed(small_bs, small, large_bs, large, &mut |_| {})?;
        if outcomes.iter().any(|o| o.interrupted) {
            return Ok(None);
        }
        let mut it = outcomes.iter().map(|o| o.intervals.as_slice());
        let s = if small > 0 { it.next() } else { None };
        let l = if large > 0 { it.next() } else { None };
        Ok(Some(cell_of(small, large, s, l)))
    }

    fn measure(
        &mut self,
        step: Step,
        bs: u64,
        outstanding: u32,
    ) -> Result<Option<Measured>, EngineError> {
        self.begin_point(true)?;
        let (outcome, samples) = self.run_point(step, bs, outstanding, &mut |_| {})?;
        if outcome.interrupted {
            return Ok(None);
        }
        let workers = self.workers(step, outstanding);
        let (point, hist) = point_of(step, outstanding, workers, &outcome.intervals);
        (self.on_point)(&point);
        Ok(Some(Measured {
            point,
            intervals: outcome.intervals,
            samples,
            hist,
            io_path: Some(outcome.io_path),
        }))
    }
}
