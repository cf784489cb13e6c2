//! Units as types, so a byte count never passes for a latency, and as users type them:
//! sizes and durations parsed and formatted in one place (`text`) for every flag, campaign
//! option and summary. The one units module of iogauge (`iogauge_model::units` re-exports
//! it for the crates above the model).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign};
use std::str::FromStr;

mod text;
pub use text::{
    fmt_size, opt_secs, parse_duration, parse_size, parse_whole, secs, split_range, split_unit,
    MAX_DURATION,
};

/// Smallest alignment iogauge uses for any I/O: O_DIRECT needs the logical block size, and
/// 512 bytes is the smallest any Linux block device has.
pub const MIN_ALIGN: u64 = 512;

/// Largest block size a job takes.
pub const MAX_BLOCK: u64 = 64 << 20;

/// One mebibyte. iogauge's "MB" is 2^20 bytes, as in iostat's `rMB/s` and fio's `MiB/s`.
pub const MIB: f64 = 1024.0 * 1024.0;

/// A byte count.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// A duration in nanoseconds (latencies, interval lengths).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    pub fn from_duration(d: std::time::Duration) -> Self {
        Nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
}

/// The size of one I/O: a non-zero multiple of 512 bytes, at most 64 MiB. Shown and parsed
/// as users write it (`8k`, `1m`); stored as a plain byte count.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct BlockSize(pub u64);

impl BlockSize {
    pub const fn bytes(self) -> u64 {
        self.0
    }
}

impl FromStr for BlockSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bs = parse_size(s)?;
        if bs == 0 || !bs.is_multiple_of(MIN_ALIGN) {
            return Err(format!(
                "block size '{}' must be a non-zero multiple of 512 bytes",
                crate::echo::bounded(s)
            ));
        }
        if bs > MAX_BLOCK {
            return Err(format!(
                "block size '{}' is above the 64 MiB limit",
                crate::echo::bounded(s)
            ));
        }
        Ok(BlockSize(bs))
    }
}

impl fmt::Display for BlockSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_size(self.0))
    }
}

/// A duration in milliseconds, as databases report the times they count (PostgreSQL's
/// `*_time` columns); fractional.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Millis(pub f64);

impl Millis {
    /// `self − earlier`, never below 0 (a counter reset mid-run).
    pub fn since(self, earlier: Millis) -> Millis {
        Millis((self.0 - earlier.0).max(0.0))
    }

    /// The time per event: `self` over `count` events, `None` without events.
    pub fn per(self, count: u64) -> Option<Millis> {
        (count > 0).then(|| Millis(self.0 / count as f64))
    }
}

impl Add for Millis {
    type Output = Millis;
    fn add(self, o: Millis) -> Millis {
        Millis(self.0 + o.0)
    }
}

impl AddAssign for Millis {
    fn add_assign(&mut self, o: Millis) {
        self.0 += o.0;
    }
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} ms", self.0)
    }
}

/// Bytes per second (a log's volume: not rounded to MiB, where a few KiB/s matter).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BytesPerSec(pub f64);

impl BytesPerSec {
    /// `bytes` over `secs` seconds (0 for an empty window).
    pub fn per(bytes: Bytes, secs: f64) -> BytesPerSec {
        BytesPerSec(if secs > 0.0 {
            bytes.0 as f64 / secs
        } else {
            0.0
        })
    }

    /// In MiB/s.
    pub fn mib(self) -> MiBps {
        MiBps(self.0 / MIB)
    }
}

/// I/Os (or operations) per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Iops(pub f64);

/// Throughput in MiB/s (2^20 bytes per second, iostat's `rMB/s`, fio's `MiB/s`).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MiBps(pub f64);

impl Iops {
    /// `count` events over `secs` seconds (0 for an empty window).
    pub fn per(count: u64, secs: f64) -> Iops {
        Iops(if secs > 0.0 { count as f64 / secs } else { 0.0 })
    }
}

impl MiBps {
    /// `bytes` over `secs` seconds (0 for an empty window).
    pub fn per(bytes: u64, secs: f64) -> MiBps {
        MiBps(if secs > 0.0 {
            bytes as f64 / MIB / secs
        } else {
            0.0
        })
    }
}

impl Add for Iops {
    type Output = Iops;
    fn add(self, o: Iops) -> Iops {
        Iops(self.0 + o.0)
    }
}

impl Add for MiBps {
    type Output = MiBps;
    fn add(self, o: MiBps) -> MiBps {
        MiBps(self.0 + o.0)
    }
}

impl fmt::Display for Iops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.0} IOPS", self.0)
    }
}

impl fmt::Display for MiBps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.1} MiB/s", self.0)
    }
}

impl Add for Bytes {
    type Output = Bytes;
    fn add(self, o: Bytes) -> Bytes {
        Bytes(self.0 + o.0)
    }
}

impl AddAssign for Bytes {
    fn add_assign(&mut self, o: Bytes) {
        self.0 += o.0;
    }
}

impl fmt::Display for Bytes {
    /// Binary units with at most one decimal: `8.0 KiB`, `1.5 GiB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
        let mut v = self.0 as f64;
        let mut u = 0;
        while v >= 1024.0 && u + 1 < UNITS.len() {
            v /= 1024.0;
            u += 1;
        }
        if u == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{v:.1} {}", UNITS[u])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_display_table() {
        for (n, s) in [
            (0, "0 B"),
            (512, "512 B"),
            (8192, "8.0 KiB"),
            (3 << 29, "1.5 GiB"),
            (1 << 40, "1.0 TiB"),
        ] {
            assert_eq!(Bytes(n).to_string(), s);
        }
    }

    #[test]
    fn block_sizes_parse_and_show_as_typed() {
        for (s, v, shown) in [
            ("8k", 8192, "8k"),
            ("512", 512, "512"),
            ("1m", 1 << 20, "1m"),
        ] {
            let b: BlockSize = s.parse().unwrap();
            assert_eq!((b.bytes(), b.to_string().as_str()), (v, shown));
        }
        for bad in ["0", "100", "65m", "x"] {
            assert!(bad.parse::<BlockSize>().is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_over_empty_windows_are_zero() {
        assert_eq!(Iops::per(10, 0.0), Iops(0.0));
        assert_eq!(Iops::per(10, 2.0), Iops(5.0));
        assert_eq!(MiBps::per(1 << 21, 2.0), MiBps(1.0));
        assert_eq!((Iops(1.0) + Iops(2.0)).to_string(), "3 IOPS");
    }

    #[test]
    fn nanos_conversions() {
        assert_eq!(Nanos(1_500).as_micros_f64(), 1.5);
        assert_eq!(Nanos(2_000_000_000).as_secs_f64(), 2.0);
        assert_eq!(
            Nanos::from_duration(std::time::Duration::from_micros(3)),
            Nanos(3_000)
        );
    }
}
