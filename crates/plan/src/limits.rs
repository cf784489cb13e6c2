//! The range of every figure a plan accepts. Every input (flags, history rows, a stored
//! calibration) is checked against these before any arithmetic, so a result is always finite:
//! with the extremes below, the most disks a plan can ask for is about 10^13 (10^9 workload
//! IOPS, all writes at penalty 100, on 1-IOPS disks at 1% utilization), well inside both `u64`
//! and the integers an `f64` holds exactly. Without them `--iops 1e308` overflowed to "inf%
//! busy" and `--disk-iops 1e-300` to u64::MAX disks.
//!
//! The bounds are far beyond any real system, not a judgement of what is plausible: the
//! largest arrays today do tens of millions of IOPS and hundreds of GB/s; a disk does at least
//! tens of IOPS and MB/s.

/// A closed range `min..=max` for one kind of figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    pub min: f64,
    pub max: f64,
}

/// Workload IOPS (a flag or a history row): up to a billion.
pub const WORKLOAD_IOPS: Limit = Limit { min: 0.0, max: 1e9 };
/// Workload MB/s: up to 100 million (100 TB/s).
pub const WORKLOAD_MBPS: Limit = Limit { min: 0.0, max: 1e8 };
/// IOPS of one disk: 1 to 100 million.
pub const DISK_IOPS: Limit = Limit { min: 1.0, max: 1e8 };
/// MB/s of one disk: 1 to a million (1 TB/s).
pub const DISK_MBPS: Limit = Limit { min: 1.0, max: 1e6 };
/// Disk I/Os per application write: 1 (no redundancy) to 100.
pub const WRITE_PENALTY: Limit = Limit {
    min: 1.0,
    max: 100.0,
};
/// Target utilization, percent: 1% to 100%.
pub const TARGET_UTIL_PCT: Limit = Limit {
    min: 1.0,
    max: 100.0,
};
/// Disks on hand (`--disks`): up to a billion.
pub const MAX_DISKS: u64 = 1_000_000_000;

impl Limit {
    /// Whether `v` is finite and within the range.
    pub fn holds(&self, v: f64) -> bool {
        v.is_finite() && v >= self.min && v <= self.max
    }

    /// The range in words: "a number from 1 to 100000000".
    pub fn describe(&self) -> String {
        format!("a number from {} to {}", self.min, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{size, Disk, Iops, Layout, MiBps, Model, Redundancy, Workload};

    #[test]
    fn the_extremes_give_finite_results() {
        let mut m = Model::new(Redundancy::custom(WRITE_PENALTY.max).unwrap());
        m.target_util = TARGET_UTIL_PCT.min / 100.0;
        let d = Disk {
            iops: Iops(DISK_IOPS.min),
            mbps: Some(MiBps(DISK_MBPS.min)),
        };
        let w = Workload::mix(WORKLOAD_IOPS.max, 0.0, Some(WORKLOAD_MBPS.max));
        let s = size(&w, &m, &d, &Layout::default());
        assert!(
            s.disks_exact.is_finite() && s.disks < u64::MAX / 1000,
            "{s:?}"
        );
        assert!(s.utilization.is_finite() && s.utilization_mbps.unwrap().is_finite());
        assert!((s.disks as f64 - s.disks_exact).abs() <= 1e-9 * s.disks_exact + 1.0);
    }

    #[test]
    fn out_of_range_values_do_not_hold() {
        for v in [f64::NAN, f64::INFINITY, -1.0, 1e-7, 1e308] {
            assert!(!DISK_IOPS.holds(v), "{v}");
        }
        assert!(DISK_IOPS.holds(180.0) && WORKLOAD_IOPS.holds(0.0));
        assert_eq!(DISK_IOPS.describe(), "a number from 1 to 100000000");
    }
}
