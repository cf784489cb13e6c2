//! The one device and CPU sampler of every measured job (a synthetic run, a calibration point,
//! a database run): from a thread of its own it samples /proc at the job's t0, at every
//! boundary of the job's interval grid and once more when the job says it is done, so device
//! intervals line up with the workload's. Also: which devices a target's I/O lands on.

use crate::fs::backing_device;
use crate::sample::Sampler;
use crate::sysfs::{file_dev, Sysfs};
use iogauge_model::preflight::leaves;
use iogauge_model::system::Snapshot;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the sampler looks at its clock and at `done` while it waits.
const TICK: Duration = Duration::from_millis(20);

/// Samples once `t0` gives the job's time zero (polled until it does, or until `done`), then
/// at each of `boundaries` (offsets from t0, ascending; may be endless) and once more when
/// `done` is raised. A job that ends before it started gets no samples. A sampling error
/// stops sampling and is returned as text (the job goes on).
pub fn sample_grid(
    sampler: &Sampler,
    t0: impl Fn() -> Option<Instant>,
    boundaries: impl IntoIterator<Item = Duration>,
    done: &AtomicBool,
) -> (Vec<Snapshot>, Option<String>) {
    sample_grid_with(|ns| sampler.sample(ns), t0, boundaries, done)
}

/// [`sample_grid`] with the sampling step given: `sample(at_ns)`, e.g. the sampler's snapshot
/// with another sampler's counters (the session's block-layer tracer) added at the same
/// moment.
pub fn sample_grid_with<E: std::fmt::Display>(
    sample: impl Fn(u64) -> Result<Snapshot, E>,
    t0: impl Fn() -> Option<Instant>,
    boundaries: impl IntoIterator<Item = Duration>,
    done: &AtomicBool,
) -> (Vec<Snapshot>, Option<String>) {
    let mut out = Vec::new();
    first_in_line();
    let t0 = loop {
        if let Some(t) = t0() {
            break t;
        }
        if done.load(Ordering::Relaxed) {
            return (out, None);
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let mut next = std::iter::once(Duration::ZERO).chain(boundaries);
    loop {
        let at = next.next();
        let finished = loop {
            if done.load(Ordering::Relaxed) {
                break true;
            }
            match at {
                Some(a) if Instant::now() < t0 + a => {
                    let left = (t0 + a).saturating_duration_since(Instant::now());
                    std::thread::sleep(left.min(TICK));
                }
                Some(_) => break false,
                None => std::thread::sleep(TICK),
            }
        };
        let ns = t0.elapsed().as_nanos() as u64;
        match sample(ns) {
            Ok(s) => out.push(s),
            Err(e) => return (out, Some(format!("device sampling stopped: {e}"))),
        }
        if finished {
            return (out, None);
        }
    }
}

/// Puts the calling thread (the sampler's own) first in line for a CPU: `SCHED_FIFO` at the
/// lowest real-time priority. A sample stamps its moment and then reads many files (one per
/// thread of the job for its run-queue wait); behind a job that keeps every CPU it may use
/// busy (`diagnose::io::cpu_bound`: 500 threads on one CPU), an ordinary thread got a slice
/// every second or so, and a sample stamped at t = 0 s read its counters at 3 s. The sampler
/// sleeps between samples and reads for a few ms, so it takes little from the job. Without
/// the privilege (`CAP_SYS_NICE`), the thread stays as it was.
fn first_in_line() {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param for SCHED_FIFO.
    // The result is not needed: refused, the thread keeps its ordinary policy.
    let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
}

/// The boundaries of a job's grid, without end: ramp intervals of `every` from t0, then
/// measured intervals of `every` from the end of the `ramp` (so a ramp that ends off the grid
/// gets a boundary of its own, and the measured window's intervals start on it). A ramp
/// decided while the job runs (`--steady`, always on the grid) is `Duration::ZERO` here.
pub fn phase_grid(every: Duration, ramp: Duration) -> impl Iterator<Item = Duration> {
    let every = every.max(Duration::from_nanos(1));
    let in_ramp = (1u32..)
        .map(move |k| every * k)
        .take_while(move |b| *b < ramp);
    let ramp_end = (!ramp.is_zero()).then_some(ramp);
    let measured = (1u32..).map(move |k| ramp + every * k);
    in_ramp.chain(ramp_end).chain(measured)
}

/// The block devices a job's targets sit on, each chain resolved once: what to sample (each
/// target's device and the whole disks at the bottom of its chain) and the disks alone (what
/// to sum for "the hardware" without counting a partition and its disk twice). Kernel names,
/// sorted, each once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Devices {
    pub sampled: Vec<String>,
    pub disks: Vec<String>,
}

impl Devices {
    /// The chains under `devices` (the targets' own block devices).
    pub fn under<'a>(devices: impl IntoIterator<Item = &'a str>) -> Devices {
        let mut d = Devices::default();
        for dev in devices {
            let disks = disks_under(dev);
            d.sampled.push(dev.to_string());
            d.sampled.extend(disks.iter().cloned());
            d.disks.extend(disks);
        }
        for v in [&mut d.sampled, &mut d.disks] {
            v.sort();
            v.dedup();
        }
        d
    }
}

/// The device named `device` and the whole disks under it (through partition, loop, md, dm),
/// each once, by kernel name.
pub fn devices_under(device: &str) -> Vec<String> {
    let mut names = vec![device.to_string()];
    names.extend(disks_under(device));
    names.sort();
    names.dedup();
    names
}

/// The whole disks at the bottom of `device`'s chain; the device itself when sysfs does not
/// know it.
pub fn disks_under(device: &str) -> Vec<String> {
    match Sysfs::system().by_name(device, &file_dev) {
        Ok(d) => {
            let mut v: Vec<String> = leaves(&d).iter().map(|l| l.name.clone()).collect();
            v.sort();
            v.dedup();
            v
        }
        Err(_) => vec![device.to_string()],
    }
}

/// The block device holding `path`, by kernel name; `None` when it is not on one.
pub fn device_of_path(path: &Path) -> Option<String> {
    std::fs::metadata(path)
        .ok()
        .and_then(|m| backing_device(m.dev()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::OnceLock;

    #[test]
    fn samples_at_start_boundaries_and_end() {
        let s = Sampler::new(Some(vec![]));
        let done = AtomicBool::new(false);
        let start = OnceLock::new();
        let grid = [Duration::from_millis(50), Duration::from_millis(100)];
        let (snaps, err) = std::thread::scope(|sc| {
            let h = sc.spawn(|| sample_grid(&s, || start.get().copied(), grid, &done));
            std::thread::sleep(Duration::from_millis(30));
            start.set(Instant::now()).unwrap();
            std::thread::sleep(Duration::from_millis(180));
            done.store(true, Ordering::Relaxed);
            h.join().unwrap()
        });
        assert!(err.is_none());
        assert_eq!(snaps.len(), 4, "t0, 2 boundaries, end");
        let at: Vec<u64> = snaps.iter().map(|s| s.at_ns / 1_000_000).collect();
        assert!(at[0] < 20 && (50..70).contains(&at[1]) && (100..120).contains(&at[2]));
        assert!(at[3] >= 180, "{at:?}");
    }

    #[test]
    fn a_job_that_never_started_gets_no_samples() {
        let s = Sampler::new(Some(vec![]));
        let done = AtomicBool::new(true);
        let (snaps, err) = sample_grid(&s, || None, [Duration::from_millis(1)], &done);
        assert!(snaps.is_empty() && err.is_none());
    }

    #[test]
    fn the_measured_grid_starts_where_the_ramp_ends() {
        let ms = Duration::from_millis;
        let take = |ramp: u64, n: usize| -> Vec<u128> {
            phase_grid(ms(100), ms(ramp))
                .take(n)
                .map(|d| d.as_millis())
                .collect()
        };
        assert_eq!(take(250, 5), [100, 200, 250, 350, 450]);
        assert_eq!(take(200, 4), [100, 200, 300, 400], "a ramp on the grid");
        assert_eq!(take(0, 3), [100, 200, 300]);
    }

    #[test]
    fn the_root_filesystem_has_a_device() {
        // Integration-ish: on every test machine / is on a block device (vda here).
        let dev = device_of_path(Path::new("/"))
            .expect("/ is not on a block device here: cannot test device resolution");
        let (devs, disks) = (devices_under(&dev), disks_under(&dev));
        assert!(devs.contains(&dev));
        assert!(disks.iter().all(|d| devs.contains(d)), "{devs:?} {disks:?}");
    }
}
