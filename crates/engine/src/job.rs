//! Running a job: lay the targets out as one space, start the workers on a common gate, and
//! merge their interval parts into one series as they arrive (min start, max end, counters
//! and histograms added). The series is handed to the caller interval by interval, in order.

use crate::driver;
use crate::error::EngineError;
use crate::iopath;
use crate::logwriter::{self, LogCtx, LogOutcome};
use crate::offsets::OpGen;
use crate::placement::{offset_space, placement};
use crate::pool::BufPool;
use crate::replay::{Cursor, ReplayOutcome, Script};
use crate::target::Target;
use crate::uring::UringChoice;
use crate::worker::{Gate, Msg, Plan, RampEnd, WorkerCtx};
use iogauge_model::iopath::IoPath;
use iogauge_model::run::SteadyOutcome;
use iogauge_model::spec::{EngineKind, JobSpec};
use iogauge_stats::{Interval, Phase, SteadyDetector};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

/// A finished (or interrupted) job.
#[derive(Debug)]
pub struct JobOutcome {
    pub started: SystemTime,
    pub intervals: Vec<Interval>,
    /// The caller's stop flag ended the job early.
    pub interrupted: bool,
    /// `--steady`: how the ramp ended (`None` without `--steady`).
    pub steady_wait: Option<SteadyOutcome>,
    /// The memory and I/O path the job ran on.
    pub io_path: IoPath,
    /// `--log-bs`: what the log writer beside the job did.
    pub log: Option<LogOutcome>,
    /// A replay: how late its requests went.
    pub replay: Option<ReplayOutcome>,
}

/// The job's side of `--steady`: feeds ramp intervals to the detector and, once steady,
/// ends the ramp at the next interval boundary the workers can still meet.
struct SteadyWatch<'a> {
    detector: SteadyDetector,
    ramp_end: &'a RampEnd,
    every: Duration,
    /// The ramp lasts at least this (`--ramp`, rounded up to the grid).
    min: Duration,
    /// ... and at most this (`--steady-timeout`, on the grid).
    timeout: Duration,
    window: Option<(u32, u32)>,
}

impl<'a> SteadyWatch<'a> {
    /// The watch `--steady` asks for (none without it), ending the ramp through `ramp_end`.
    fn of(spec: &JobSpec, ramp_end: &'a RampEnd) -> Option<Self> {
        spec.steady.map(|w| SteadyWatch {
            detector: SteadyDetector::new(w.config(spec.interval)),
            ramp_end,
            every: spec.interval,
            min: on_grid(spec.ramp, spec.interval),
            timeout: on_grid(w.timeout, spec.interval),
            window: None,
        })
    }

    fn observe(&mut self, iv: &Interval, since_t0: Duration) {
        if iv.phase != Phase::Ramp || self.window.is_some() {
            return;
        }
        let d = iv.duration();
        if d.0 == 0 || !self.detector.push(iv.io.read.iops(d) + iv.io.write.iops(d)) {
            return;
        }
        // Workers must see the boundary before they reach it: leave them a margin.
        let margin = (self.every / 2).min(Duration::from_millis(50));
        let earliest = (since_t0 + margin).max(self.min);
        let k = earliest.as_nanos().div_ceil(self.every.as_nanos());
        let end = self.every * k as u32;
        if end >= self.timeout {
            return;
        }
        let first = self.detector.reached_at().unwrap_or(0) as u32;
        self.window = Some((first, iv.index + 1));
        self.ramp_end.set(end);
    }
}

/// Rounds `d` up to a whole number of `every`.
fn on_grid(d: Duration, every: Duration) -> Duration {
    every * d.as_nanos().div_ceil(every.as_nanos()) as u32
}

/// The job's phases (ramp, then the measured window; `--steady`'s longest ramp), with no
/// I/O quota or rate of their own.
fn phases(spec: &JobSpec, steady_timeout: Option<Duration>) -> Plan {
    Plan {
        ramp: spec.ramp,
        time: spec.time,
        ios: None,
        every: spec.interval,
        rate: None,
        steady_timeout,
    }
}

/// The worker threads and each one's queue depth: psync has one I/O per thread, so QD N
/// becomes N threads.
fn threads_and_depth(spec: &JobSpec) -> (usize, u32) {
    match spec.engine {
        EngineKind::IoUring => (spec.workers as usize, spec.qd),
        EngineKind::Psync => ((spec.workers * spec.qd) as usize, 1),
    }
}

/// Splits `total` into `n` nearly equal shares (the first ones one larger).
fn share(total: u64, n: u64, i: u64) -> u64 {
    total / n + u64::from(i < total % n)
}

/// Runs the job on prepared targets. `stop` ends it early (Ctrl-C); `on_interval` sees each
/// merged interval as soon as every worker has reported it. The job measures its own I/O
/// only: the system beside it (devices, CPU) is the session's to sample ([`run_telling`]).
pub fn run(
    spec: &JobSpec,
    targets: &[Target],
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<JobOutcome, EngineError> {
    run_telling(spec, targets, None, stop, on_interval, &|_| {})
}

/// [`run`], telling `started` the job's t0 the moment every worker is released: where a
/// sampler beside the job starts its grid ([`grid`]). Under `--log-bs` the log writer runs
/// beside the workers, on `log` (its `--log-target`) or at the end of the first target.
pub fn run_telling(
    spec: &JobSpec,
    targets: &[Target],
    log: Option<&Target>,
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
    started: &(dyn Fn(Instant) + Sync),
) -> Result<JobOutcome, EngineError> {
    job(spec, targets, log, None, stop, on_interval, started)
}

/// [`run_telling`] with the I/Os of `script` (a replay) in place of generated ones: one
/// io_uring worker issues them, with `spec.qd` slots (see [`crate::replay`]).
pub fn replay_telling(
    spec: &JobSpec,
    targets: &[Target],
    script: Script,
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
    started: &(dyn Fn(Instant) + Sync),
) -> Result<JobOutcome, EngineError> {
    if spec.engine != EngineKind::IoUring || spec.workers != 1 || spec.layout.is_some() {
        return Err(EngineError::Unsupported(
            "a replay runs on one io_uring worker without --layout: drop --engine psync, --workers and --layout".into(),
        ));
    }
    job(
        spec,
        targets,
        None,
        Some(script),
        stop,
        on_interval,
        started,
    )
}

fn job(
    spec: &JobSpec,
    targets: &[Target],
    log: Option<&Target>,
    script: Option<Script>,
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
    started: &(dyn Fn(Instant) + Sync),
) -> Result<JobOutcome, EngineError> {
    let mut cursor = script.map(Cursor::new);
    let placement = placement(spec, targets)?;
    let space = offset_space(spec, targets, placement.as_ref())?;
    let (threads, qd) = threads_and_depth(spec);
    let n = threads as u64;
    let (pool, uring, io_path) = io_path(spec, threads * qd as usize)?;
    let log_region = spec
        .log
        .as_ref()
        .map(|l| logwriter::region(l, targets, log))
        .transpose()?;
    let gate = Gate::telling(threads + usize::from(log_region.is_some()), started);
    let (halt, done) = (AtomicBool::new(false), AtomicBool::new(false));
    let ramp_end = RampEnd::new();
    let mut watch = SteadyWatch::of(spec, &ramp_end);
    let (tx, rx) = channel::<Msg>();
    // The log writer's as they are, each worker's with its share of the quota and the rate.
    let phases = phases(spec, watch.as_ref().map(|w| w.timeout));
    let log_ctx = log_region.map(|region| LogCtx {
        region,
        plan: phases,
        gate: &gate,
        halt: &halt,
        done: &done,
        ramp_end: spec.steady.map(|_| &ramp_end),
        seed: spec.seed ^ u64::MAX,
    });

    let mut script = cursor.as_mut();
    let outcome = std::thread::scope(|scope| {
        for id in 0..threads {
            let ctx = WorkerCtx {
                id,
                spec,
                targets,
                gen: OpGen::new(spec, space.clone(), id as u32, threads as u32),
                script: script.take(),
                plan: Plan {
                    ios: spec.ios.map(|t| share(t, n, id as u64)),
                    rate: spec.rate_iops.map(|r| r as f64 / n as f64),
                    ..phases
                },
                qd,
                pool: &pool,
                uring,
                gate: &gate,
                halt: &halt,
                ramp_end: spec.steady.map(|_| &ramp_end),
                placement: placement.as_ref(),
                tx: tx.clone(),
            };
            let builder = std::thread::Builder::new().name(format!("iogauge-w{id}"));
            let spawned = builder.spawn_scoped(scope, move || {
                let tx = ctx.tx.clone();
                let result = driver::worker(ctx);
                // Before the job's end: the sampler's last snapshot comes after this thread
                // has gone, and with it the kernel's count of its run-queue wait.
                iogauge_probe::sample::retire_this_thread();
                let _ = tx.send(Msg::Done { worker: id, result });
            });
            if let Err(e) = spawned {
                // The threads already started wait at the gate for all of them: let them go
                // without starting, and report the OS's refusal once they have ended.
                gate.abort();
                return Err(EngineError::Thread(e));
            }
        }
        drop(tx);
        let log_thread = log_ctx
            .map(|c| logwriter::spawn(scope, c))
            .transpose()
            .inspect_err(|_| gate.abort())?;
        let collected = collect(threads, &rx, stop, &halt, &gate, &mut watch, on_interval);
        done.store(true, Ordering::Relaxed);
        // A panic in the log thread is the scope's to raise, as a worker's would be.
        let log = log_thread.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        let (intervals, interrupted) = collected?;
        Ok(JobOutcome {
            started: gate.started().unwrap_or_else(SystemTime::now),
            intervals,
            interrupted,
            steady_wait: watch.map(|w| SteadyOutcome {
                window: w.window,
                ramp: ramp_end.get().unwrap_or(w.timeout),
            }),
            io_path,
            log: log.transpose()?,
            replay: None,
        })
    });
    outcome.map(|o| JobOutcome {
        replay: cursor.map(|c| c.outcome),
        ..o
    })
}

/// The job's buffers and I/O path, decided once for every worker: `slots` buffers of the
/// largest block size on the memory `--mem` asked for (or what the machine could give),
/// registered with io_uring where `--fixed-bufs` says, on the ring flags `--ring-setup`
/// resolves to on this kernel.
fn io_path(
    spec: &JobSpec,
    slots: usize,
) -> Result<(BufPool, Option<UringChoice>, IoPath), EngineError> {
    let bytes = spec.bs.max() as usize;
    let pool = BufPool::new(slots, bytes, spec.io.mem).map_err(|source| EngineError::Memory {
        bytes: (slots * bytes) as u64,
        source,
    })?;
    let (fixed_bufs, fixed_bufs_note) = iopath::fixed_bufs(spec, pool.info())?;
    let uring = match spec.engine {
        EngineKind::IoUring => Some(UringChoice {
            ring: iopath::resolve(spec.io.ring_setup)?,
            fixed_bufs,
            // Measured: registered files cost nothing and save a file lookup per I/O.
            fixed_files: true,
            submit_batch: spec.io.submit_batch,
        }),
        EngineKind::Psync => None,
    };
    let path = IoPath {
        engine: spec.engine,
        memory: pool.info().clone(),
        fixed_bufs,
        fixed_files: uring.is_some_and(|u| u.fixed_files),
        ring: uring.map(|u| u.ring.flags().to_string()),
        submit_batch: uring.map(|u| u.submit_batch),
        fixed_bufs_note,
    };
    Ok((pool, uring, path))
}

/// The block devices under the targets, each chain resolved once (see
/// [`iogauge_probe::Devices`]); a file on btrfs, which has no device of its own, by the
/// filesystem's members.
pub fn devices(targets: &[Target]) -> iogauge_probe::Devices {
    let names: Vec<String> = targets
        .iter()
        .flat_map(|t| match &t.info.device {
            Some(d) => vec![d.clone()],
            None => iogauge_probe::btrfs_members_of(&t.info.path),
        })
        .collect();
    iogauge_probe::Devices::under(names.iter().map(String::as_str))
}

/// The boundaries of `spec`'s interval grid as offsets from its t0 (ramp, then measured
/// window; with `--steady` the ramp ends on the grid, wherever the detector decides): where a
/// sampler beside the job takes its snapshots, so device intervals line up with workload
/// ones.
pub fn grid(spec: &JobSpec) -> impl Iterator<Item = Duration> + Send {
    let ramp = if spec.steady.is_some() {
        Duration::ZERO
    } else {
        spec.ramp
    };
    iogauge_probe::phase_grid(spec.interval, ramp)
}

/// Merges worker parts in (phase, index) order; an interval is complete when every worker
/// has reported it or a later one, or has finished. Returns the merged series and whether
/// the stop flag ended it.
fn collect(
    threads: usize,
    rx: &std::sync::mpsc::Receiver<Msg>,
    stop: &AtomicBool,
    halt: &AtomicBool,
    gate: &Gate<'_>,
    watch: &mut Option<SteadyWatch<'_>>,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<(Vec<Interval>, bool), EngineError> {
    type Key = (Phase, u32);
    let mut pending: BTreeMap<Key, Interval> = BTreeMap::new();
    let mut last: Vec<Option<Key>> = vec![None; threads];
    let mut done = vec![false; threads];
    let mut finished = Vec::new();
    let mut first_error = None;
    let mut interrupted = false;
    let mut remaining = threads;

    let mut emit_ready =
        |pending: &mut BTreeMap<Key, Interval>, last: &[Option<Key>], done: &[bool]| {
            while let Some((&key, _)) = pending.first_key_value() {
                let complete = (0..threads).all(|w| done[w] || last[w].is_some_and(|l| l >= key));
                if !complete {
                    break;
                }
                let mut iv = pending.remove(&key).expect("key just seen");
                if let (Some(w), Some(t0)) = (watch.as_mut(), gate.t0()) {
                    w.observe(&iv, t0.elapsed());
                }
                on_interval(&iv);
                // Kept to the job's end: at rest, near the size it is stored at.
                iv.pack();
                finished.push(iv);
            }
        };

    while remaining > 0 {
        let msg = match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::Relaxed) && !halt.load(Ordering::Relaxed) {
                    interrupted = true;
                    halt.store(true, Ordering::Relaxed);
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match msg {
            Msg::Part { worker, interval } => {
                let key = (interval.phase, interval.index);
                last[worker] = Some(key);
                match pending.get_mut(&key) {
                    Some(acc) => acc.absorb(&interval),
                    None => {
                        pending.insert(key, *interval);
                    }
                }
            }
            Msg::Done { worker, result } => {
                done[worker] = true;
                remaining -= 1;
                if let Err(e) = result {
                    halt.store(true, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
            }
        }
        emit_ready(&mut pending, &last, &done);
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok((finished, interrupted || stop.load(Ordering::Relaxed)))
}

#[cfg(test)]
mod tests;
