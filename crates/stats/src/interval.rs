//! The interval series: what the workload did in each slice of time, differential (each record
//! holds only its own I/Os), on a grid shared by all workers.

use crate::counters::{DirStats, PerDir};
use crate::hist::{HistError, LatHist};
use crate::units::{Bytes, Nanos};
use serde::{Deserialize, Serialize};

/// Which part of a job an interval belongs to. Ramp-up is recorded but never summarised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Ramp,
    Measure,
}

/// One slice of time, merged over workers: start and end are offsets from the job's start,
/// the minimum start and maximum end reported by any worker.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    pub phase: Phase,
    pub index: u32,
    pub start: Nanos,
    pub end: Nanos,
    pub io: PerDir<DirStats>,
    /// Under a layout: I/Os each member target completed, `[reads, writes]`, by member.
    pub members: Vec<[u64; 2]>,
}

impl Interval {
    pub fn duration(&self) -> Nanos {
        Nanos(self.end.0.saturating_sub(self.start.0))
    }

    /// Puts both directions' histograms at rest ([`LatHist::pack`]): for a closed interval
    /// kept to the end of a run.
    pub fn pack(&mut self) {
        self.io.read.lat.pack();
        self.io.write.lat.pack();
    }

    /// Folds another worker's part of the same slice into this one.
    pub fn absorb(&mut self, other: &Interval) {
        debug_assert_eq!((self.phase, self.index), (other.phase, other.index));
        self.start = self.start.min(other.start);
        self.end = self.end.max(other.end);
        self.io += &other.io;
        if self.members.len() < other.members.len() {
            self.members.resize(other.members.len(), [0, 0]);
        }
        for (a, b) in self.members.iter_mut().zip(&other.members) {
            a[0] += b[0];
            a[1] += b[1];
        }
    }
}

/// An interval as bytes can carry it between processes (MPI ranks): counts as they are, each
/// direction's latency histogram HDR-encoded ([`LatHist::encode`]), so the receiver merges
/// them exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WireInterval {
    pub phase: Phase,
    pub index: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    /// `[read, write]` I/Os, bytes and encoded histograms.
    pub ios: [u64; 2],
    pub bytes: [u64; 2],
    pub lat: [Vec<u8>; 2],
    pub members: Vec<[u64; 2]>,
}

impl Interval {
    pub fn to_wire(&self) -> Result<WireInterval, HistError> {
        Ok(WireInterval {
            phase: self.phase,
            index: self.index,
            start_ns: self.start.0,
            end_ns: self.end.0,
            ios: [self.io.read.ios, self.io.write.ios],
            bytes: [self.io.read.bytes.0, self.io.write.bytes.0],
            lat: [
                self.io.read.lat.encode_wire()?,
                self.io.write.lat.encode_wire()?,
            ],
            members: self.members.clone(),
        })
    }

    pub fn from_wire(w: &WireInterval) -> Result<Interval, HistError> {
        let dir = |i: usize| -> Result<DirStats, HistError> {
            Ok(DirStats {
                ios: w.ios[i],
                bytes: Bytes(w.bytes[i]),
                lat: LatHist::decode(&w.lat[i])?,
            })
        };
        Ok(Interval {
            phase: w.phase,
            index: w.index,
            start: Nanos(w.start_ns),
            end: Nanos(w.end_ns),
            io: PerDir {
                read: dir(0)?,
                write: dir(1)?,
            },
            members: w.members.clone(),
        })
    }
}

/// Several processes' series of one job merged interval by interval: intervals with the same
/// phase and index (the processes started together, so index `i` is the same slice of time
/// on each) are absorbed into one; an interval only some series have stays as it is. In
/// phase and index order.
pub fn merge_series(series: &[Vec<Interval>]) -> Vec<Interval> {
    let mut out: Vec<Interval> = Vec::new();
    for s in series {
        absorb_series(&mut out, s);
    }
    out
}

/// Folds `other` into `into` (both in phase and index order, as [`merge_series`] leaves
/// them): intervals of the same phase and index absorbed, the others taken as they are, in
/// one pass over both.
pub fn absorb_series(into: &mut Vec<Interval>, other: &[Interval]) {
    let key = |i: &Interval| (i.phase, i.index);
    let in_order = |v: &[Interval]| v.windows(2).all(|w| key(&w[0]) <= key(&w[1]));
    if !in_order(into) {
        into.sort_by_key(key);
    }
    let sorted;
    let other = match in_order(other) {
        true => other,
        false => {
            sorted = {
                let mut o = other.to_vec();
                o.sort_by_key(key);
                o
            };
            &sorted[..]
        }
    };
    let mut out: Vec<Interval> = Vec::with_capacity(into.len().max(other.len()));
    // An interval whose phase and index the last one kept has is absorbed into it.
    let mut keep = |iv: std::borrow::Cow<'_, Interval>| match out.last_mut() {
        Some(last) if key(last) == key(&iv) => last.absorb(&iv),
        _ => out.push(iv.into_owned()),
    };
    let mut mine = std::mem::take(into).into_iter().peekable();
    let mut theirs = other.iter().peekable();
    loop {
        let take_mine = match (mine.peek(), theirs.peek()) {
            (Some(a), Some(b)) => key(a) <= key(b),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        match take_mine {
            true => keep(std::borrow::Cow::Owned(mine.next().expect("peeked"))),
            false => keep(std::borrow::Cow::Borrowed(theirs.next().expect("peeked"))),
        }
    }
    *into = out;
}

/// The measured window of a finished series: totals over `Phase::Measure` intervals and the
/// time they span (first start to last end).
pub fn measured_totals(intervals: &[Interval]) -> (PerDir<DirStats>, Nanos) {
    let mut total = PerDir::<DirStats>::default();
    let mut first: Option<Nanos> = None;
    let mut last = Nanos(0);
    for iv in intervals.iter().filter(|i| i.phase == Phase::Measure) {
        total += &iv.io;
        first = Some(first.map_or(iv.start, |f| f.min(iv.start)));
        last = last.max(iv.end);
    }
    let elapsed = first.map_or(Nanos(0), |f| Nanos(last.0.saturating_sub(f.0)));
    (total, elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(phase: Phase, index: u32, start: u64, end: u64, reads: u64) -> Interval {
        let mut io = PerDir::<DirStats>::default();
        for _ in 0..reads {
            io.read.record(4096, 1000);
        }
        Interval {
            phase,
            index,
            start: Nanos(start),
            end: Nanos(end),
            io,
            members: Vec::new(),
        }
    }

    #[test]
    fn totals_skip_ramp_and_span_measured_window() {
        let series = [
            iv(Phase::Ramp, 0, 0, 1_000, 7),
            iv(Phase::Measure, 0, 1_000, 2_000, 3),
            iv(Phase::Measure, 1, 2_000, 2_500, 2),
        ];
        let (t, el) = measured_totals(&series);
        assert_eq!(t.read.ios, 5);
        assert_eq!(t.read.lat.count(), 5);
        assert_eq!(el, Nanos(1_500));
    }

    #[test]
    fn wire_round_trip_and_exact_merge() {
        let mut a = iv(Phase::Measure, 0, 0, 1_000, 0);
        for lat in [1_000, 5_000, 90_000] {
            a.io.read.record(8192, lat);
        }
        a.io.write.record(4096, 7_000);
        a.members = vec![[3, 1]];
        let back = Interval::from_wire(&a.to_wire().unwrap()).unwrap();
        assert_eq!(back, a);
        // Two ranks: the merged histogram is the one a single process would have recorded.
        let mut b = iv(Phase::Measure, 0, 10, 1_010, 0);
        b.io.read.record(8192, 2_000_000);
        let ramp = iv(Phase::Ramp, 0, 0, 500, 4);
        let m = merge_series(&[vec![a.clone()], vec![ramp.clone(), b.clone()]]);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].phase, m[1].phase), (Phase::Ramp, Phase::Measure));
        let mut one = a.io.read.lat.clone();
        one.merge(&b.io.read.lat);
        assert_eq!(m[1].io.read.lat, one);
        assert_eq!(
            (m[1].io.read.ios, m[1].start, m[1].end),
            (4, Nanos(0), Nanos(1_010))
        );
    }

    #[test]
    fn absorb_takes_min_start_max_end() {
        let mut a = iv(Phase::Measure, 3, 100, 200, 1);
        a.absorb(&iv(Phase::Measure, 3, 90, 250, 2));
        assert_eq!((a.start, a.end, a.io.read.ios), (Nanos(90), Nanos(250), 3));
        assert_eq!(measured_totals(&[]).1, Nanos(0));
    }
}
