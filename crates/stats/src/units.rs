//! Units as types, so a byte count never passes for a latency.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign};

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
    fn nanos_conversions() {
        assert_eq!(Nanos(1_500).as_micros_f64(), 1.5);
        assert_eq!(Nanos(2_000_000_000).as_secs_f64(), 2.0);
        assert_eq!(
            Nanos::from_duration(std::time::Duration::from_micros(3)),
            Nanos(3_000)
        );
    }
}
