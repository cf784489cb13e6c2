//! Running a job: lay the targets out as one space, start the workers on a common gate, and
//! merge their interval parts into one series as they arrive (min start, max end, counters
//! and histograms added). The series is handed to the caller interval by interval, in order.

use crate::error::EngineError;
use crate::offsets::{check_fits, Extent, OpGen, Space};
use crate::spec::{fmt_size, EngineKind, JobSpec};
use crate::target::Target;
use crate::worker::{Gate, Msg, Plan};
use crate::{psync, uring, WorkerCtx};
use iogauge_probe::{Sampler, Snapshot};
use iogauge_stats::{Interval, Nanos, Phase};
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
    /// /proc snapshots of the targets' devices and the CPU at every interval boundary,
    /// `at_ns` from the job's start.
    pub samples: Vec<Snapshot>,
    /// Why device sampling stopped early, if it did.
    pub sample_error: Option<String>,
}

/// Lays the targets' regions out as the logical space (concat), checking each region is
/// inside its target and holds the largest block.
pub fn layout(spec: &JobSpec, targets: &[Target]) -> Result<Space, EngineError> {
    let align = spec.align();
    let mut extents = Vec::with_capacity(targets.len());
    for (i, t) in targets.iter().enumerate() {
        if t.info.size < spec.bs.max() {
            return Err(EngineError::Region {
                path: t.info.path.clone(),
                why: format!(
                    "its {} bytes are smaller than the block size {}; use a larger target or a smaller --bs",
                    t.info.size,
                    fmt_size(spec.bs.max())
                ),
            });
        }
        let (start, end) = spec.region.resolve(t.info.size, align).ok_or_else(|| EngineError::Region {
            path: t.info.path.clone(),
            why: format!(
                "--region {} lies outside its {} bytes (or holds no aligned block); pick a region inside the target",
                spec.region, t.info.size
            ),
        })?;
        extents.push(Extent {
            target: i as u32,
            start,
            len: end - start,
        });
    }
    let space = Space::new(extents);
    check_fits(&space, spec.bs.max()).map_err(|e| EngineError::Region {
        path: targets[e.target as usize].info.path.clone(),
        why: format!(
            "the tested span ({} bytes of --region {}) is smaller than the block size {}; use a larger --size or region",
            e.len,
            spec.region,
            fmt_size(spec.bs.max())
        ),
    })?;
    Ok(space)
}

/// Splits `total` into `n` nearly equal shares (the first ones one larger).
fn share(total: u64, n: u64, i: u64) -> u64 {
    total / n + u64::from(i < total % n)
}

/// Runs the job on prepared targets. `stop` ends it early (Ctrl-C); `on_interval` sees each
/// merged interval as soon as every worker has reported it.
pub fn run(
    spec: &JobSpec,
    targets: &[Target],
    stop: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<JobOutcome, EngineError> {
    let space = layout(spec, targets)?;
    // psync has one I/O per thread: QD N becomes N threads.
    let (threads, qd) = match spec.engine {
        EngineKind::IoUring => (spec.workers as usize, spec.qd),
        EngineKind::Psync => ((spec.workers * spec.qd) as usize, 1),
    };
    let n = threads as u64;
    let gate = Gate::new(threads);
    let devices = devices_of(targets);
    let done = AtomicBool::new(false);
    let halt = AtomicBool::new(false);
    let (tx, rx) = channel::<Msg>();

    std::thread::scope(|scope| {
        for id in 0..threads {
            let ctx = WorkerCtx {
                id,
                spec,
                targets,
                gen: OpGen::new(spec, space.clone(), id as u32, threads as u32),
                plan: Plan {
                    ramp: spec.ramp,
                    time: spec.time,
                    ios: spec.ios.map(|t| share(t, n, id as u64)),
                    every: spec.interval,
                    rate: spec.rate_iops.map(|r| r as f64 / n as f64),
                },
                qd,
                gate: &gate,
                halt: &halt,
                tx: tx.clone(),
            };
            let builder = std::thread::Builder::new().name(format!("iogauge-w{id}"));
            let spawned = builder.spawn_scoped(scope, move || {
                let tx = ctx.tx.clone();
                let result = match spec.engine {
                    EngineKind::IoUring => uring::run(ctx),
                    EngineKind::Psync => psync::run(ctx),
                };
                let _ = tx.send(Msg::Done { worker: id, result });
            });
            if let Err(e) = spawned {
                // Threads already started wait at the gate for all `threads`: they would hang.
                // This only happens when the OS refuses threads; abort outright.
                eprintln!("error: cannot start worker thread: {e}");
                std::process::exit(1);
            }
        }
        drop(tx);
        let sampler = scope.spawn(|| sample_devices(&devices, spec, &gate, &done));
        let mut outcome = collect(threads, &rx, stop, &halt, &gate, on_interval);
        done.store(true, Ordering::Relaxed);
        let (samples, sample_error) = sampler.join().expect("sampler thread");
        if let Ok(o) = &mut outcome {
            o.samples = samples;
            o.sample_error = sample_error;
        }
        outcome
    })
}

/// The block devices whose counters a job records: each target's device and the disks at
/// the bottom of its chain (partition -> disk, loop -> backing disk, md/dm -> members).
pub fn devices_of(targets: &[Target]) -> Vec<String> {
    let mut names: Vec<String> = targets
        .iter()
        .filter_map(|t| t.info.device.clone())
        .collect();
    names.extend(disks_of(targets));
    names.sort();
    names.dedup();
    names
}

/// The whole disks at the bottom of the targets' device chains, each once: what to sum for
/// "the hardware" without counting a partition and its disk twice.
pub fn disks_of(targets: &[Target]) -> Vec<String> {
    let sys = iogauge_probe::Sysfs::system();
    let mut names: Vec<String> = Vec::new();
    for name in targets.iter().filter_map(|t| t.info.device.as_deref()) {
        match sys.by_name(name, &iogauge_probe::file_dev) {
            Ok(dev) => names.extend(iogauge_probe::leaves(&dev).iter().map(|d| d.name.clone())),
            Err(_) => names.push(name.to_string()),
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Samples /proc at the job's start, at every interval boundary of its grid (ramp, then
/// measured window) and once at its end, so device intervals line up with workload ones.
/// A sampling error stops sampling (the run goes on) and is returned as text.
fn sample_devices(
    devices: &[String],
    spec: &JobSpec,
    gate: &Gate,
    done: &AtomicBool,
) -> (Vec<Snapshot>, Option<String>) {
    let mut out = Vec::new();
    if devices.is_empty() {
        return (out, None);
    }
    let sampler = Sampler::new(Some(devices.to_vec()));
    let t0 = loop {
        if let Some(t) = gate.t0() {
            break t;
        }
        if done.load(Ordering::Relaxed) {
            return (out, None);
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let ramp_end = t0 + spec.ramp;
    let mut next = t0;
    loop {
        let finished = loop {
            if done.load(Ordering::Relaxed) {
                break true;
            }
            let now = Instant::now();
            if now >= next {
                break false;
            }
            std::thread::sleep((next - now).min(Duration::from_millis(20)));
        };
        let at = Nanos::from_duration(Instant::now().saturating_duration_since(t0)).0;
        match sampler.sample(at) {
            Ok(s) => out.push(s),
            Err(e) => return (out, Some(format!("device sampling stopped: {e}"))),
        }
        if finished {
            return (out, None);
        }
        next += spec.interval;
        if next > ramp_end && next - spec.interval < ramp_end {
            next = ramp_end;
        }
    }
}

/// Merges worker parts in (phase, index) order; an interval is complete when every worker
/// has reported it or a later one, or has finished.
fn collect(
    threads: usize,
    rx: &std::sync::mpsc::Receiver<Msg>,
    stop: &AtomicBool,
    halt: &AtomicBool,
    gate: &Gate,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<JobOutcome, EngineError> {
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
                let iv = pending.remove(&key).expect("key just seen");
                on_interval(&iv);
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
                        pending.insert(key, interval);
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
    Ok(JobOutcome {
        started: gate.started().unwrap_or_else(SystemTime::now),
        intervals: finished,
        interrupted: interrupted || stop.load(Ordering::Relaxed),
        samples: Vec::new(),
        sample_error: None,
    })
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn shares_add_up() {
        for (total, n) in [(10u64, 3u64), (7, 7), (1, 4), (1_000_003, 64)] {
            let s: u64 = (0..n).map(|i| share(total, n, i)).sum();
            assert_eq!(s, total);
        }
    }
}
