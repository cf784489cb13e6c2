//! Forward sizing: a workload → hardware IOPS and MB/s → disks → enclosures (reverse mode is
//! in `capacity`).
//!
//! The model, per dimension (IOPS, and MB/s when both sides give it):
//!
//! ```text
//! hardware = reads × (1 − read_cache_hit) + writes × write_penalty
//! disks    = ⌈hardware / (per_disk × target_util)⌉        (at least 1)
//! enclosures = ⌈disks / per_enclosure⌉, and disks_exact / per_enclosure as a fraction
//! utilization = hardware / (configured disks × per_disk)
//! ```
//!
//! Writes always reach the disks: a write-back cache or a flash log absorbs their latency,
//! not the work, which is destaged to every copy in the end. MB/s uses the same penalty,
//! exact for mirrors (each copy writes the bytes) and conservative for parity RAID doing
//! full-stripe writes. The configuration is the larger of the two disk counts (the binding
//! constraint), or the `--disks` given.

use crate::redundancy::Redundancy;
use crate::units::{Iops, MiBps};
use serde::Serialize;

/// The redundancy and headroom a plan assumes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    pub redundancy: Redundancy,
    /// Share of reads a cache in front of the disks serves, 0 ≤ h < 1.
    pub read_cache_hit: f64,
    /// Highest disk utilization to size for, 0 < u ≤ 1.
    pub target_util: f64,
}

impl Model {
    /// No cache, sized to 100% utilization.
    pub fn new(redundancy: Redundancy) -> Model {
        Model {
            redundancy,
            read_cache_hit: 0.0,
            target_util: 1.0,
        }
    }

    /// Disk operations (or bytes) per second an application load becomes.
    pub fn hardware(&self, read: f64, write: f64) -> f64 {
        read * (1.0 - self.read_cache_hit) + write * self.redundancy.write_penalty()
    }

    /// Disk operations per application operation for a read share `r` (the inverse of the
    /// workload the disks can serve per unit of hardware).
    pub(crate) fn cost(&self, read_share: f64) -> f64 {
        self.hardware(read_share, 1.0 - read_share)
    }
}

/// What the application does.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Workload {
    pub read_iops: Iops,
    pub write_iops: Iops,
    pub read_mbps: Option<MiBps>,
    pub write_mbps: Option<MiBps>,
}

impl Workload {
    /// A total split by a read share (0..=1); MB/s split by the same share.
    pub fn mix(iops: f64, read_share: f64, mbps: Option<f64>) -> Workload {
        Workload {
            read_iops: Iops(iops * read_share),
            write_iops: Iops(iops * (1.0 - read_share)),
            read_mbps: mbps.map(|m| MiBps(m * read_share)),
            write_mbps: mbps.map(|m| MiBps(m * (1.0 - read_share))),
        }
    }

    fn mbps(&self) -> Option<(f64, f64)> {
        Some((self.read_mbps?.0, self.write_mbps?.0))
    }
}

/// What one disk does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Disk {
    pub iops: Iops,
    pub mbps: Option<MiBps>,
}

/// How disks are grouped and how many there are.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Layout {
    /// Disks per enclosure (shelf, cell).
    pub per_enclosure: Option<u32>,
    /// Disks on hand: forward sizing reports the utilization of this many instead of the
    /// number needed; reverse mode requires it.
    pub disks: Option<u64>,
}

/// The assumptions a result was computed under, repeated in every result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Basis {
    pub redundancy: String,
    pub write_penalty: f64,
    /// Fraction of reads served by cache, 0..1.
    pub read_cache_hit: f64,
    /// Fraction, 0..1.
    pub target_util: f64,
    pub disk_iops: Iops,
    pub disk_mbps: Option<MiBps>,
    pub per_enclosure: Option<u32>,
}

impl Basis {
    pub(crate) fn of(model: &Model, disk: &Disk, layout: &Layout) -> Basis {
        Basis {
            redundancy: model.redundancy.to_string(),
            write_penalty: model.redundancy.write_penalty(),
            read_cache_hit: model.read_cache_hit,
            target_util: model.target_util,
            disk_iops: disk.iops,
            disk_mbps: disk.mbps,
            per_enclosure: layout.per_enclosure,
        }
    }
}

/// Which requirement decides the number of disks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Binding {
    Iops,
    MiBps,
}

/// A forward sizing. `disks`/`enclosures`/`utilization` are for IOPS, the `_mbps` fields the
/// same for MB/s (null without MB/s on both sides); `configured_*` is what both utilizations
/// are measured against.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sizing {
    #[serde(flatten)]
    pub basis: Basis,
    pub read_iops: Iops,
    pub write_iops: Iops,
    pub workload_iops: Iops,
    pub hardware_iops: Iops,
    pub disks: u64,
    pub disks_exact: f64,
    pub enclosures: Option<u64>,
    pub enclosures_exact: Option<f64>,
    /// Fraction of the configuration's IOPS the requirement uses.
    pub utilization: f64,
    pub read_mbps: Option<MiBps>,
    pub write_mbps: Option<MiBps>,
    pub workload_mbps: Option<MiBps>,
    pub hardware_mbps: Option<MiBps>,
    pub disks_mbps: Option<u64>,
    pub disks_mbps_exact: Option<f64>,
    pub enclosures_mbps: Option<u64>,
    pub enclosures_mbps_exact: Option<f64>,
    pub utilization_mbps: Option<f64>,
    pub binding: Binding,
    pub configured_disks: u64,
    pub configured_enclosures: Option<u64>,
}

/// `⌈x⌉` for counts, never below 0, where a figure within floating-point noise of a whole
/// number is that number (14,400 / 180 is 80 disks, not 81). The noise allowed is one part
/// in 10^12 of `x` (the inputs carry at most 15–17 significant digits and pass through a
/// handful of operations, each off by half a unit in the last place), and never more than a
/// thousandth: a slack proportional to `x` alone, subtracted before the ceiling, made an
/// exact 600,000,000,000 disks 599,999,999,400 (issue #25 row 13).
pub fn ceil_count(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let nearest = x.round();
    let noise = (x * 1e-12).min(1e-3);
    let c = if (x - nearest).abs() <= noise {
        nearest
    } else {
        x.ceil()
    };
    c as u64
}

/// Disks for a hardware load: (exact at the target utilization, rounded up and at least 1).
pub(crate) fn disks_for(hardware: f64, per_disk: f64, target_util: f64) -> (f64, u64) {
    let exact = hardware / (per_disk * target_util);
    (exact, ceil_count(exact).max(1))
}

pub(crate) fn enclosures(
    disks_exact: f64,
    disks: u64,
    per: Option<u32>,
) -> (Option<f64>, Option<u64>) {
    match per {
        Some(p) => (
            Some(disks_exact / f64::from(p)),
            Some(disks.div_ceil(u64::from(p))),
        ),
        None => (None, None),
    }
}

/// Sizes a workload: hardware load, disks and enclosures for IOPS and MB/s.
pub fn size(w: &Workload, model: &Model, disk: &Disk, layout: &Layout) -> Sizing {
    let hardware_iops = model.hardware(w.read_iops.0, w.write_iops.0);
    let (disks_exact, disks) = disks_for(hardware_iops, disk.iops.0, model.target_util);
    let (enclosures_exact, encl) = enclosures(disks_exact, disks, layout.per_enclosure);

    let hardware_mbps = w.mbps().map(|(r, wr)| model.hardware(r, wr));
    let by_mbps = match (hardware_mbps, disk.mbps) {
        (Some(h), Some(per)) => Some(disks_for(h, per.0, model.target_util)),
        _ => None,
    };
    let (enclosures_mbps_exact, enclosures_mbps) = match by_mbps {
        Some((exact, n)) => enclosures(exact, n, layout.per_enclosure),
        None => (None, None),
    };
    let needed = by_mbps.map_or(disks, |(_, n)| n.max(disks));
    // The constraint that needs more disks; on a tie in whole disks, the tighter fraction.
    let binding = match by_mbps {
        Some((exact, n)) if (n, exact) > (disks, disks_exact) => Binding::MiBps,
        _ => Binding::Iops,
    };
    let configured_disks = layout.disks.unwrap_or(needed);
    let configured = configured_disks.max(1) as f64;
    Sizing {
        basis: Basis::of(model, disk, layout),
        read_iops: w.read_iops,
        write_iops: w.write_iops,
        workload_iops: Iops(w.read_iops.0 + w.write_iops.0),
        hardware_iops: Iops(hardware_iops),
        disks,
        disks_exact,
        enclosures: encl,
        enclosures_exact,
        utilization: hardware_iops / (configured * disk.iops.0),
        read_mbps: w.read_mbps,
        write_mbps: w.write_mbps,
        workload_mbps: w.mbps().map(|(r, wr)| MiBps(r + wr)),
        hardware_mbps: hardware_mbps.map(MiBps),
        disks_mbps: by_mbps.map(|b| b.1),
        disks_mbps_exact: by_mbps.map(|b| b.0),
        enclosures_mbps,
        enclosures_mbps_exact,
        utilization_mbps: match (hardware_mbps, disk.mbps) {
            (Some(h), Some(per)) => Some(h / (configured * per.0)),
            _ => None,
        },
        binding,
        configured_disks,
        configured_enclosures: layout
            .per_enclosure
            .map(|p| configured_disks.div_ceil(u64::from(p))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn workload_to_hardware_iops() {
        // (workload IOPS, read %, redundancy, cache hit, hardware IOPS)
        let table = [
            (10_000.0, 50.0, Redundancy::Mirror, 0.0, 15_000.0),
            (10_000.0, 50.0, Redundancy::ThreeWay, 0.0, 20_000.0),
            (10_000.0, 50.0, Redundancy::None, 0.0, 10_000.0),
            (10_000.0, 50.0, Redundancy::Raid5, 0.0, 25_000.0),
            (10_000.0, 50.0, Redundancy::Raid6, 0.0, 35_000.0),
            (10_000.0, 100.0, Redundancy::Raid6, 0.0, 10_000.0),
            (10_000.0, 0.0, Redundancy::Mirror, 0.0, 20_000.0),
            // 60% of 5,000 reads come from cache: 2,000 reads + 10,000 write I/Os.
            (10_000.0, 50.0, Redundancy::Mirror, 0.6, 12_000.0),
            // Writes are never spared by the cache.
            (10_000.0, 0.0, Redundancy::Mirror, 0.9, 20_000.0),
        ];
        for (iops, read_pct, r, hit, want) in table {
            let mut m = Model::new(r);
            m.read_cache_hit = hit;
            let s = size(
                &Workload::mix(iops, read_pct / 100.0, None),
                &m,
                &disk(180.0),
                &Layout::default(),
            );
            assert!(
                close(s.hardware_iops.0, want),
                "{r} {read_pct}% {hit}: {s:?}"
            );
            assert_eq!(s.workload_iops, Iops(iops));
        }
    }

    #[test]
    fn hardware_iops_to_disks_and_enclosures() {
        // (hardware IOPS, per disk, per enclosure, target, disks, exact, enclosures, exact)
        let table = [
            (15_000.0, 180.0, 12, 1.0, 84, 83.333, 7, 6.944),
            (14_400.0, 180.0, 12, 1.0, 80, 80.0, 7, 6.667),
            (14_400.0, 180.0, 10, 1.0, 80, 80.0, 8, 8.0),
            (15_000.0, 180.0, 12, 0.7, 120, 119.048, 10, 9.921),
            (1.0, 180.0, 12, 1.0, 1, 0.006, 1, 0.0005),
        ];
        for (hw, per_disk, per_encl, target, d, de, e, ee) in table {
            let mut m = Model::new(Redundancy::None);
            m.target_util = target;
            let layout = Layout {
                per_enclosure: Some(per_encl),
                disks: None,
            };
            let s = size(&Workload::mix(hw, 1.0, None), &m, &disk(per_disk), &layout);
            assert_eq!((s.disks, s.enclosures), (d, Some(e)), "{hw}");
            assert!((s.disks_exact - de).abs() < 1e-3, "{hw}: {}", s.disks_exact);
            assert!((s.enclosures_exact.unwrap() - ee).abs() < 1e-3, "{hw}");
            assert_eq!(s.configured_disks, d);
            assert!(close(s.utilization, hw / (d as f64 * per_disk)));
        }
    }

    #[test]
    fn ten_thousand_at_fifty_fifty_on_180_iops_disks_in_cells_of_12() {
        let s = size(
            &Workload::mix(10_000.0, 0.5, None),
            &Model::new("normal".parse().unwrap()),
            &disk(180.0),
            &Layout {
                per_enclosure: Some(12),
                disks: None,
            },
        );
        assert_eq!(s.hardware_iops, Iops(15_000.0));
        assert_eq!(
            (s.disks, format!("{:.1}", s.disks_exact)),
            (84, "83.3".into())
        );
        let e = (s.enclosures, format!("{:.1}", s.enclosures_exact.unwrap()));
        assert_eq!(e, (Some(7), "6.9".into()));
        assert_eq!(format!("{:.3}", s.utilization), "0.992");
    }

    #[test]
    fn mbps_can_be_the_binding_constraint() {
        let d = Disk {
            iops: Iops(180.0),
            mbps: Some(MiBps(200.0)),
        };
        // (workload IOPS, MB/s, binding, configured disks)
        let table = [
            (10_000.0, 1_000.0, Binding::Iops, 84),
            (1_000.0, 10_000.0, Binding::MiBps, 75),
        ];
        for (iops, mbps, binding, configured) in table {
            let s = size(
                &Workload::mix(iops, 0.5, Some(mbps)),
                &Model::new(Redundancy::Mirror),
                &d,
                &Layout::default(),
            );
            assert_eq!((s.binding, s.configured_disks), (binding, configured));
            let um = s.utilization_mbps.unwrap();
            assert!(close(
                um,
                s.hardware_mbps.unwrap().0 / (configured as f64 * 200.0)
            ));
            assert!(close(
                s.utilization,
                s.hardware_iops.0 / (configured as f64 * 180.0)
            ));
        }
    }

    #[test]
    fn a_fixed_configuration_reports_its_own_utilization() {
        let s = size(
            &Workload::mix(10_000.0, 0.5, None),
            &Model::new(Redundancy::Mirror),
            &disk(180.0),
            &Layout {
                per_enclosure: Some(12),
                disks: Some(60),
            },
        );
        assert_eq!((s.disks, s.configured_disks), (84, 60));
        assert_eq!(s.configured_enclosures, Some(5));
        assert!(close(s.utilization, 15_000.0 / 10_800.0));
    }

    #[test]
    fn ceil_count_forgives_float_noise() {
        assert_eq!(ceil_count(80.000_000_000_01), 80);
        assert_eq!(ceil_count(79.999_999_999_99), 80);
        assert_eq!(ceil_count(80.01), 81);
        assert_eq!(ceil_count(0.0), 0);
        assert_eq!(ceil_count(-3.0), 0);
        assert_eq!(ceil_count(f64::NAN), 0);
        // Issue #25 row 13: the slack is noise, not 600 disks at 6·10^11.
        assert_eq!(ceil_count(6e11), 600_000_000_000);
        assert_eq!(ceil_count(6e11 + 0.5), 600_000_000_001);
        assert_eq!(ceil_count(6e11 - 0.5), 600_000_000_000);
    }

    /// Issue #25 row 13: `plan --iops 1e9 --read-pct 0 --redundancy raid6 --disk-iops 1
    /// --target-util 1%` is exactly 6·10^11 disks.
    #[test]
    fn the_largest_plans_are_exact() {
        let mut m = Model::new(Redundancy::Raid6);
        m.target_util = 1.0 / 100.0;
        let s = size(
            &Workload::mix(1e9, 0.0, None),
            &m,
            &disk(1.0),
            &Layout::default(),
        );
        assert_eq!(s.disks, 600_000_000_000, "{s:?}");
    }

    proptest! {
        /// More writes or a heavier penalty never needs fewer disks.
        #[test]
        fn disks_are_monotonic(iops in 0.0f64..1e6, share in 0.0f64..=1.0, p in 1.0f64..6.0) {
            let d = disk(180.0);
            let l = Layout::default();
            let w = Workload::mix(iops, share, None);
            let lo = size(&w, &Model::new(Redundancy::custom(p).unwrap()), &d, &l);
            let hi = size(&w, &Model::new(Redundancy::custom(p + 1.0).unwrap()), &d, &l);
            prop_assert!(hi.disks >= lo.disks);
            prop_assert!(lo.hardware_iops.0 >= w.read_iops.0 + w.write_iops.0 - 1e-6);
        }
    }
}
