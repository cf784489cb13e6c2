//! Per-disk figures for common disk classes, for planning before anything is measured. One
//! number each, chosen from widely quoted rules of thumb; a calibration of the real disks
//! (`--from-run`) beats every one of them.
//!
//! HDD IOPS follow from the service time of a small random I/O, average seek plus half a
//! rotation (the formula every storage sizing text starts from): 7,200 rpm is 4.17 ms half
//! a rotation + ≈ 8.5 ms seek → 79 IOPS (quoted 75–100); 10,000 rpm is 3.0 ms + ≈ 4.5 ms →
//! 133 (quoted 125–150); 15,000 rpm is 2.0 ms + ≈ 3.5 ms → 182 (quoted 175–210). Each is
//! rounded to the nearest 10. HDD MB/s are sustained transfer rates of enterprise
//! drives, quoted around 150–250 MB/s on the outer tracks and about half that on the inner
//! ones; the figures are an average over the platter, not the outer-track peak.
//!
//! SSD figures are sustained mixed random I/O, well below the 4K read at high queue depth a
//! datasheet leads with: a SATA SSD is capped by the 6 Gb/s link (≈ 550 MB/s after 8b/10b
//! encoding; datasheets quote 75–100k 4K read IOPS and far fewer steady-state writes); an
//! NVMe drive on PCIe 3.0 x4 (≈ 3.9 GB/s link) is quoted at 3,000–3,500 MB/s and 500k+
//! read IOPS, 100–200k steady-state mixed.

use std::fmt;
use std::str::FromStr;

/// A disk class with its planning figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskProfile {
    Hdd7200,
    Hdd10k,
    Hdd15k,
    SataSsd,
    Nvme,
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("unknown disk profile {0:?}; use one of 7.2k, 10k, 15k, sata-ssd, nvme")]
pub struct UnknownProfile(pub String);

impl DiskProfile {
    pub const ALL: [DiskProfile; 5] = [
        DiskProfile::Hdd7200,
        DiskProfile::Hdd10k,
        DiskProfile::Hdd15k,
        DiskProfile::SataSsd,
        DiskProfile::Nvme,
    ];

    /// Small random IOPS one disk sustains (see the module doc for where each comes from).
    pub fn iops(self) -> f64 {
        match self {
            DiskProfile::Hdd7200 => 80.0,
            DiskProfile::Hdd10k => 130.0,
            DiskProfile::Hdd15k => 180.0,
            DiskProfile::SataSsd => 50_000.0,
            DiskProfile::Nvme => 200_000.0,
        }
    }

    /// Large-I/O MB/s one disk sustains.
    pub fn mbps(self) -> f64 {
        match self {
            DiskProfile::Hdd7200 => 150.0,
            DiskProfile::Hdd10k => 180.0,
            DiskProfile::Hdd15k => 200.0,
            DiskProfile::SataSsd => 500.0,
            DiskProfile::Nvme => 3_000.0,
        }
    }
}

impl fmt::Display for DiskProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DiskProfile::Hdd7200 => "7.2k",
            DiskProfile::Hdd10k => "10k",
            DiskProfile::Hdd15k => "15k",
            DiskProfile::SataSsd => "sata-ssd",
            DiskProfile::Nvme => "nvme",
        })
    }
}

impl FromStr for DiskProfile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "7.2k" | "7200" | "7k2" => DiskProfile::Hdd7200,
            "10k" | "10000" => DiskProfile::Hdd10k,
            "15k" | "15000" => DiskProfile::Hdd15k,
            "sata-ssd" | "ssd" => DiskProfile::SataSsd,
            "nvme" => DiskProfile::Nvme,
            _ => return Err(UnknownProfile(s.into())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_figures_rise_with_class() {
        let mut last = (0.0, 0.0);
        for p in DiskProfile::ALL {
            assert_eq!(p.to_string().parse::<DiskProfile>(), Ok(p));
            assert!(p.iops() > last.0 && p.mbps() > last.1, "{p}");
            last = (p.iops(), p.mbps());
        }
        assert!("5.4k".parse::<DiskProfile>().is_err());
    }

    #[test]
    fn hdd_iops_match_seek_plus_half_rotation() {
        // (rpm, average seek ms): 1 / (seek + half a rotation), rounded to the nearest 10.
        let table = [
            (DiskProfile::Hdd7200, 7200.0_f64, 8.5_f64),
            (DiskProfile::Hdd10k, 10_000.0, 4.5),
            (DiskProfile::Hdd15k, 15_000.0, 3.5),
        ];
        for (p, rpm, seek_ms) in table {
            let half_rotation_ms: f64 = 60_000.0 / rpm / 2.0;
            let iops = 1000.0 / (seek_ms + half_rotation_ms);
            assert_eq!(p.iops(), (iops / 10.0).round() * 10.0, "{p}");
        }
    }
}
