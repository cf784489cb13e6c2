//! Workload I/O against hardware I/O: what the job issued next to what the devices under it
//! completed over the same window, from /proc/diskstats snapshots taken on the interval grid.
//! They differ for reasons a user must hear about in words: a cache absorbs reads, mirroring
//! and journaling multiply writes, other processes share the disk.

use crate::derive::{derive_over, per_cpu, Derived, DiskRates, PerCpuRates};
use crate::summary::Summary;
use crate::system::Snapshot;
use iogauge_stats::Nanos;
use serde::{Deserialize, Serialize};

/// One direction: issued by the workload, completed by the disks, and their ratio.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirCompare {
    pub workload_iops: f64,
    pub workload_mbps: f64,
    pub device_iops: f64,
    pub device_mbps: f64,
    /// device_iops / workload_iops; `None` when the workload issued none.
    pub ratio: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    /// The whole disks summed (the bottom of each target's device chain).
    pub disks: Vec<String>,
    pub read: DirCompare,
    pub write: DirCompare,
    /// Sentences where the two differed by more than 10%, in documents stored before the
    /// findings (`page-cache-reads`, `page-cache-writes`, `read-ahead`,
    /// `write-multiplication`, made by the diagnosis from the whole result, say it now);
    /// empty in new ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Every device of the targets' chains on its own row (the target's md/dm/loop device
    /// and each member disk), when there is more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceRow>,
}

/// One device over the measured window: its name and iostat -x figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceRow {
    pub name: String,
    #[serde(flatten)]
    pub rates: DiskRates,
}

/// The snapshot taken closest to `t`.
fn nearest(samples: &[Snapshot], t: Nanos) -> Option<usize> {
    (0..samples.len()).min_by_key(|&i| samples[i].at_ns.abs_diff(t.0))
}

/// The snapshots nearest `start` and `end`, at least one apart: a window shorter than half
/// the gap between two snapshots (a cached run of a few milliseconds) is nearest the same
/// one at both ends, and is then measured between that one and the next (or the previous).
fn span(samples: &[Snapshot], start: Nanos, end: Nanos) -> Option<(usize, usize)> {
    let (i, j) = (nearest(samples, start)?, nearest(samples, end)?);
    match (i, j) {
        _ if j > i => Some((i, j)),
        _ if i + 1 < samples.len() => Some((i, i + 1)),
        _ if i > 0 => Some((i - 1, i)),
        _ => None,
    }
}

/// Device, CPU and memory figures between the snapshots nearest `start` and `end`.
pub fn system_between(samples: &[Snapshot], start: Nanos, end: Nanos) -> Option<Derived> {
    let (i, j) = span(samples, start, end)?;
    derive_over(samples.get(i..=j)?)
}

/// Each CPU's figures between the snapshots nearest `start` and `end` (empty when the
/// snapshots have no per-CPU lines).
pub fn per_cpu_between(samples: &[Snapshot], start: Nanos, end: Nanos) -> Vec<PerCpuRates> {
    match span(samples, start, end) {
        Some((i, j)) => per_cpu(&samples[i], &samples[j]),
        None => Vec::new(),
    }
}

/// Compares the measured window's workload with what `disks` completed in it; `None` when
/// none of them was sampled in the window: their figures were not measured, and a sum over
/// no disk would read as 0 (f64's empty sum is even -0.0, which older documents hold).
pub fn compare(
    summary: &Summary,
    window: (Nanos, Nanos),
    samples: &[Snapshot],
    disks: &[String],
) -> Option<Hardware> {
    let d = system_between(samples, window.0, window.1)?;
    let disks: Vec<String> = disks
        .iter()
        .filter(|n| d.disks.contains_key(*n))
        .cloned()
        .collect();
    if disks.is_empty() {
        return None;
    }
    let sum = |f: &dyn Fn(&DiskRates) -> f64| -> f64 {
        disks.iter().filter_map(|n| d.disks.get(n)).map(f).sum()
    };
    let dir = |iops: f64, mbps: f64, dev_iops: f64, dev_mbps: f64| DirCompare {
        workload_iops: iops,
        workload_mbps: mbps,
        device_iops: dev_iops,
        device_mbps: dev_mbps,
        ratio: (iops > 0.0).then(|| dev_iops / iops),
    };
    let read = dir(
        summary.read.iops,
        summary.read.mbps,
        sum(&|r| r.r_s),
        sum(&|r| r.r_mb_s),
    );
    let write = dir(
        summary.write.iops,
        summary.write.mbps,
        sum(&|r| r.w_s),
        sum(&|r| r.w_mb_s),
    );
    let devices = if d.disks.len() > 1 {
        d.disks
            .iter()
            .map(|(name, r)| DeviceRow {
                name: name.clone(),
                rates: r.clone(),
            })
            .collect()
    } else {
        Vec::new()
    };
    Some(Hardware {
        disks,
        read,
        write,
        notes: Vec::new(),
        devices,
    })
}
