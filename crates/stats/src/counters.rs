//! Per-direction I/O counters. Workers keep their own and merge with `+=` at interval
//! boundaries, so the hot path takes no lock.

use crate::hist::LatHist;
use crate::units::{Bytes, Nanos, MIB};
use serde::{Deserialize, Serialize};
use std::ops::{AddAssign, Index, IndexMut};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Read,
    Write,
}

impl Direction {
    pub const ALL: [Direction; 2] = [Direction::Read, Direction::Write];

    pub fn name(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
        }
    }
}

/// A pair of anything, one per direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerDir<T> {
    pub read: T,
    pub write: T,
}

impl<T> Index<Direction> for PerDir<T> {
    type Output = T;
    fn index(&self, d: Direction) -> &T {
        match d {
            Direction::Read => &self.read,
            Direction::Write => &self.write,
        }
    }
}

impl<T> IndexMut<Direction> for PerDir<T> {
    fn index_mut(&mut self, d: Direction) -> &mut T {
        match d {
            Direction::Read => &mut self.read,
            Direction::Write => &mut self.write,
        }
    }
}

impl<T: for<'a> AddAssign<&'a T>> AddAssign<&PerDir<T>> for PerDir<T> {
    fn add_assign(&mut self, o: &PerDir<T>) {
        self.read += &o.read;
        self.write += &o.write;
    }
}

/// Completed I/Os of one direction: count, bytes and the latency of each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: Bytes,
    pub lat: LatHist,
}

impl DirStats {
    #[inline]
    pub fn record(&mut self, bytes: u64, lat_ns: u64) {
        self.ios += 1;
        self.bytes.0 += bytes;
        self.lat.record(lat_ns);
    }

    pub fn clear(&mut self) {
        self.ios = 0;
        self.bytes = Bytes(0);
        self.lat.clear();
    }

    /// I/Os per second over `elapsed`; 0 for an empty window.
    pub fn iops(&self, elapsed: Nanos) -> f64 {
        rate(self.ios as f64, elapsed)
    }

    /// MiB per second over `elapsed`; 0 for an empty window.
    pub fn mbps(&self, elapsed: Nanos) -> f64 {
        rate(self.bytes.0 as f64 / MIB, elapsed)
    }
}

fn rate(amount: f64, elapsed: Nanos) -> f64 {
    if elapsed.0 == 0 {
        0.0
    } else {
        amount / elapsed.as_secs_f64()
    }
}

impl AddAssign<&DirStats> for DirStats {
    fn add_assign(&mut self, o: &DirStats) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.lat += &o.lat;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_table() {
        let mut d = DirStats::default();
        for _ in 0..1000 {
            d.record(8192, 100_000);
        }
        let two_s = Nanos(2_000_000_000);
        assert_eq!(d.iops(two_s), 500.0);
        assert_eq!(d.mbps(two_s), 1000.0 * 8192.0 / MIB / 2.0);
        assert_eq!(d.iops(Nanos(0)), 0.0);
    }

    #[test]
    fn per_dir_adds_each_side() {
        let mut a: PerDir<DirStats> = PerDir::default();
        let mut b: PerDir<DirStats> = PerDir::default();
        a[Direction::Read].record(4096, 10);
        b[Direction::Read].record(4096, 20);
        b[Direction::Write].record(8192, 30);
        a += &b;
        assert_eq!(a.read.ios, 2);
        assert_eq!(a.read.bytes, Bytes(8192));
        assert_eq!(a.write.ios, 1);
        assert_eq!(a.write.lat.count(), 1);
    }
}
