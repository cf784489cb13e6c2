//! Reverse mode: the workload a number of disks serves at a read share, and its write-only
//! and read-only ceilings, at the target utilization. The inverse of [`crate::size`]:
//!
//! ```text
//! hardware = disks × per_disk × target_util
//! workload = hardware / (read_share × (1 − read_cache_hit) + (1 − read_share) × write_penalty)
//! ```

use crate::sizing::{enclosures, Basis};
use crate::sizing::{Disk, Layout, Model};
use crate::units::{Iops, MiBps};
use serde::Serialize;

/// Reverse mode: what `disks` disks serve at a read share, kept at the target utilization.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Capacity {
    #[serde(flatten)]
    pub basis: Basis,
    /// Fraction of reads in the workload, 0..1.
    pub read_share: f64,
    pub disks: u64,
    pub enclosures: Option<u64>,
    pub enclosures_exact: Option<f64>,
    /// Disk IOPS available: disks × per-disk IOPS × target utilization.
    pub hardware_iops: Iops,
    /// Application IOPS the disks serve at the read share.
    pub workload_iops: Iops,
    pub read_iops: Iops,
    pub write_iops: Iops,
    /// Application IOPS if every I/O were a write.
    pub write_only_iops: Iops,
    /// Application IOPS if every I/O were a read (after the cache).
    pub read_only_iops: Iops,
    /// The utilization the ceilings are computed at (the target).
    pub utilization: f64,
    pub hardware_mbps: Option<MiBps>,
    pub workload_mbps: Option<MiBps>,
    /// The same disks and enclosures, repeated for MB/s (when the per-disk MB/s is known) so
    /// every mode has the same keys.
    pub disks_mbps: Option<u64>,
    pub enclosures_mbps: Option<u64>,
    pub write_only_mbps: Option<MiBps>,
    pub read_only_mbps: Option<MiBps>,
    pub utilization_mbps: Option<f64>,
}

/// The workload `disks` disks can serve: hardware ÷ cost per application I/O.
pub fn capacity(
    disks: u64,
    read_share: f64,
    model: &Model,
    disk: &Disk,
    per_enclosure: Option<u32>,
) -> Capacity {
    let n = disks as f64;
    let hardware_iops = n * disk.iops.0 * model.target_util;
    let workload = hardware_iops / model.cost(read_share);
    let hardware_mbps = disk.mbps.map(|m| n * m.0 * model.target_util);
    let (enclosures_exact, enclosures) = enclosures(n, disks, per_enclosure);
    let layout = Layout {
        per_enclosure,
        disks: Some(disks),
    };
    Capacity {
        basis: Basis::of(model, disk, &layout),
        read_share,
        disks,
        enclosures,
        enclosures_exact,
        hardware_iops: Iops(hardware_iops),
        workload_iops: Iops(workload),
        read_iops: Iops(workload * read_share),
        write_iops: Iops(workload * (1.0 - read_share)),
        write_only_iops: Iops(hardware_iops / model.cost(0.0)),
        read_only_iops: Iops(hardware_iops / model.cost(1.0)),
        utilization: model.target_util,
        hardware_mbps: hardware_mbps.map(MiBps),
        workload_mbps: hardware_mbps.map(|h| MiBps(h / model.cost(read_share))),
        disks_mbps: hardware_mbps.map(|_| disks),
        enclosures_mbps: hardware_mbps.and(enclosures),
        write_only_mbps: hardware_mbps.map(|h| MiBps(h / model.cost(0.0))),
        read_only_mbps: hardware_mbps.map(|h| MiBps(h / model.cost(1.0))),
        utilization_mbps: hardware_mbps.map(|_| model.target_util),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{size, Redundancy, Workload};
    use proptest::prelude::*;

    fn disk(iops: f64) -> Disk {
        Disk {
            iops: Iops(iops),
            mbps: None,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn reverse_capacity() {
        // (disks, per disk, read share, redundancy, workload, write-only)
        let table = [
            // An array rated 50,000 disk write IOPS serves 25,000 application writes.
            (250, 200.0, 0.0, Redundancy::Mirror, 25_000.0, 25_000.0),
            (168, 180.0, 0.0, Redundancy::Mirror, 15_120.0, 15_120.0),
            (168, 180.0, 0.5, Redundancy::Mirror, 20_160.0, 15_120.0),
            (100, 500.0, 0.5, Redundancy::ThreeWay, 25_000.0, 16_666.667),
            (100, 500.0, 1.0, Redundancy::Raid6, 50_000.0, 8_333.333),
        ];
        for (n, per, share, r, want, write_only) in table {
            let c = capacity(n, share, &Model::new(r), &disk(per), None);
            assert!((c.workload_iops.0 - want).abs() < 1e-3, "{n} {r}: {c:?}");
            assert!((c.write_only_iops.0 - write_only).abs() < 1e-3, "{n} {r}");
            assert!(close(c.read_iops.0 + c.write_iops.0, c.workload_iops.0));
        }
    }

    proptest! {
        /// Reverse is the inverse of forward: the capacity of N disks, sized back, needs N.
        #[test]
        fn capacity_sized_back_needs_the_same_disks(
            n in 1u64..2000, per in 50.0f64..500_000.0, share in 0.0f64..=1.0,
            penalty in 1.0f64..8.0, hit in 0.0f64..0.95, target in 0.1f64..=1.0,
        ) {
            let mut m = Model::new(Redundancy::custom(penalty).unwrap());
            m.read_cache_hit = hit;
            m.target_util = target;
            let c = capacity(n, share, &m, &disk(per), None);
            let w = Workload { read_iops: c.read_iops, write_iops: c.write_iops, ..Default::default() };
            let s = size(&w, &m, &disk(per), &Layout::default());
            prop_assert_eq!(s.disks, n);
            prop_assert!((s.utilization - target).abs() < 1e-6);
        }
    }
}
