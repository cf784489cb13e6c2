//! Sampling on a run's interval grid from a thread of its own: at t0, at every boundary,
//! and once more when the run says it is done, so device intervals line up with the
//! workload's. Also: which devices a path's I/O lands on.

use crate::fs::backing_device;
use crate::sample::Sampler;
use crate::sysfs::{file_dev, Sysfs};
use iogauge_model::preflight::leaves;
use iogauge_model::system::Snapshot;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Samples at `t0`, at each of `boundaries` (offsets from t0, ascending) and at the end
/// (when `done` is raised). A sampling error stops sampling and is returned as text.
pub fn sample_grid(
    sampler: &Sampler,
    t0: Instant,
    boundaries: &[Duration],
    done: &AtomicBool,
) -> (Vec<Snapshot>, Option<String>) {
    let mut out = Vec::with_capacity(boundaries.len() + 2);
    let mut next = std::iter::once(Duration::ZERO).chain(boundaries.iter().copied());
    loop {
        let at = next.next();
        let finished = loop {
            if done.load(Ordering::Relaxed) {
                break true;
            }
            match at {
                Some(a) if Instant::now() < t0 + a => {
                    let left = (t0 + a).saturating_duration_since(Instant::now());
                    std::thread::sleep(left.min(Duration::from_millis(20)));
                }
                Some(_) => break false,
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let ns = t0.elapsed().as_nanos() as u64;
        match sampler.sample(ns) {
            Ok(s) => out.push(s),
            Err(e) => return (out, Some(format!("device sampling stopped: {e}"))),
        }
        if finished {
            return (out, None);
        }
    }
}

/// The device holding `path` and the whole disks under it (through partition, loop, md,
/// dm), each once, by kernel name; empty when the path is not on a block device.
pub fn devices_of_path(path: &Path) -> Vec<String> {
    let Some(dev) = std::fs::metadata(path)
        .ok()
        .and_then(|m| backing_device(m.dev()))
    else {
        return Vec::new();
    };
    let mut names = vec![dev.clone()];
    if let Ok(d) = Sysfs::system().by_name(&dev, &file_dev) {
        names.extend(leaves(&d).iter().map(|l| l.name.clone()));
    }
    names.sort();
    names.dedup();
    names
}

/// The whole disks under `path` (the bottom of its device chain).
pub fn disks_of_path(path: &Path) -> Vec<String> {
    let Some(dev) = std::fs::metadata(path)
        .ok()
        .and_then(|m| backing_device(m.dev()))
    else {
        return Vec::new();
    };
    match Sysfs::system().by_name(&dev, &file_dev) {
        Ok(d) => {
            let mut v: Vec<String> = leaves(&d).iter().map(|l| l.name.clone()).collect();
            v.sort();
            v.dedup();
            v
        }
        Err(_) => vec![dev],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_at_start_boundaries_and_end() {
        let s = Sampler::new(Some(vec![]));
        let done = AtomicBool::new(false);
        let t0 = Instant::now();
        let grid = [Duration::from_millis(50), Duration::from_millis(100)];
        let (snaps, err) = std::thread::scope(|sc| {
            let h = sc.spawn(|| sample_grid(&s, t0, &grid, &done));
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
    fn the_root_filesystem_has_a_device() {
        // Integration-ish: on every test machine / is on a block device (vda here).
        let devs = devices_of_path(Path::new("/"));
        let disks = disks_of_path(Path::new("/"));
        if devs.is_empty() {
            panic!("/ is not on a block device here: cannot test device resolution");
        }
        assert!(disks.iter().all(|d| devs.contains(d)), "{devs:?} {disks:?}");
    }
}
