//! The interval series: what the workload did in each slice of time, differential (each record
//! holds only its own I/Os), on a grid shared by all workers.

use crate::counters::{DirStats, PerDir};
use crate::units::Nanos;
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
    fn absorb_takes_min_start_max_end() {
        let mut a = iv(Phase::Measure, 3, 100, 200, 1);
        a.absorb(&iv(Phase::Measure, 3, 90, 250, 2));
        assert_eq!((a.start, a.end, a.io.read.ios), (Nanos(90), Nanos(250), 3));
        assert_eq!(measured_totals(&[]).1, Nanos(0));
    }
}
