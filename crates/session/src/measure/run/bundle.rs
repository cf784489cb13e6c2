//! `run` over ranks, what goes up the tree at the end: a subtree's interval series merged
//! exactly (intervals by index, HDR histograms added bucket by bucket) and one small row per
//! rank (its summary, devices, error, not its series unless `--keep-rank-series`).

use crate::ranks::{join_rows, lost_rows, Bundle, RankRow};
use anyhow::anyhow;
use iogauge_model::hardware::Hardware;
use iogauge_model::iopath::IoPath;
use iogauge_model::run::{IntervalReport, Summary};
use iogauge_model::spec::Region;
use iogauge_model::target::TargetInfo;
use iogauge_stats::{absorb_series, Interval, WireInterval};
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::PathBuf;

/// One rank's row: what the job's document keeps of it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Row {
    pub rank: u32,
    pub host: String,
    pub targets: Vec<PathBuf>,
    pub infos: Vec<TargetInfo>,
    pub region: Option<Region>,
    /// Wall clock when the rank's job started (after the barrier), ns since the epoch; 0
    /// for a rank that never started.
    pub started_ns: u64,
    /// The rank's own measured window and devices; `None` when it has no document.
    pub summary: Option<Summary>,
    pub hardware: Option<Hardware>,
    pub interrupted: bool,
    pub warnings: Vec<String>,
    pub error: Option<String>,
    /// Bytes it sent on its way to rank 0 (live reports, then its part).
    pub sent_bytes: u64,
    /// Its own series, with `--keep-rank-series`.
    pub intervals: Vec<IntervalReport>,
}

impl RankRow for Row {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn sent_mut(&mut self) -> &mut u64 {
        &mut self.sent_bytes
    }

    fn lost(rank: u32, why: String) -> Row {
        Row {
            rank,
            interrupted: true,
            error: Some(why),
            ..Row::default()
        }
    }
}

/// A subtree's part: its ranks' series merged, their rows by rank, and the I/O path of the
/// lowest rank that ran.
#[derive(Default, Serialize, Deserialize)]
pub(super) struct Part {
    series: Vec<WireInterval>,
    /// The series decoded while this rank folds its children in (encoded by `seal`).
    #[serde(skip)]
    open: Option<Vec<Interval>>,
    pub rows: Vec<Row>,
    io_path: Option<(u32, IoPath)>,
}

impl Part {
    /// One rank's part: its row, its series (the job's intervals) and I/O path.
    pub fn own(row: Row, intervals: Vec<Interval>, io_path: Option<IoPath>) -> Part {
        Part {
            series: Vec::new(),
            io_path: io_path.map(|p| (row.rank, p)),
            rows: vec![row],
            open: Some(intervals),
        }
    }

    fn decoded(&mut self) -> anyhow::Result<Vec<Interval>> {
        match self.open.take() {
            Some(o) => Ok(o),
            None => std::mem::take(&mut self.series)
                .iter()
                .map(Interval::from_wire)
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow!("a rank's series: {e}")),
        }
    }

    /// The I/O path of the lowest rank that ran (taken).
    #[cfg(feature = "mpi")]
    pub fn io_path(&mut self) -> Option<IoPath> {
        self.io_path.take().map(|(_, p)| p)
    }

    /// The merged series (sealed: decoded once more, as rank 0 reads it).
    pub fn intervals(&mut self) -> anyhow::Result<Vec<Interval>> {
        self.decoded()
    }
}

impl Bundle for Part {
    fn absorb(&mut self, mut child: Part, bytes: u64) -> anyhow::Result<()> {
        let mut mine = self.decoded()?;
        absorb_series(&mut mine, &child.decoded()?);
        self.open = Some(mine);
        join_rows(&mut self.rows, std::mem::take(&mut child.rows), bytes);
        self.io_path = match (self.io_path.take(), child.io_path) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        Ok(())
    }

    fn lost(lost: Range<u32>, heard: (u64, [u64; 2])) -> Part {
        Part {
            rows: lost_rows(lost, heard),
            ..Part::default()
        }
    }

    fn seal(&mut self) -> anyhow::Result<()> {
        if let Some(open) = self.open.take() {
            self.series = open
                .iter()
                .map(Interval::to_wire)
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow!("this rank's series: {e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranks::{fold, Shape};
    use iogauge_stats::{merge_series, DirStats, Nanos, PerDir, Phase};

    /// Rank `rank`'s series: `n` intervals of reads and writes with latencies of its own.
    fn series(rank: u32, n: u32) -> Vec<Interval> {
        let mut seed = u64::from(rank) * 7919 + 17;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        (0..n)
            .map(|i| {
                let mut io = PerDir::<DirStats>::default();
                for _ in 0..200 + next() % 300 {
                    io.read.record(8192, 20_000 + next() % 5_000_000);
                }
                for _ in 0..next() % 100 {
                    io.write.record(8192, 50_000 + next() % 90_000_000);
                }
                Interval {
                    phase: if i < 2 { Phase::Ramp } else { Phase::Measure },
                    index: if i < 2 { i } else { i - 2 },
                    start: Nanos(u64::from(i) * 1_000_000_000 + next() % 1000),
                    end: Nanos(u64::from(i + 1) * 1_000_000_000 + next() % 1000),
                    io,
                    members: Vec::new(),
                }
            })
            .collect()
    }

    /// An interval as the job's document stores it: index, start, end, I/Os, histograms.
    type Stored = (u32, u64, u64, [u64; 2], [Vec<u8>; 2]);

    fn row(rank: u32) -> Row {
        Row {
            rank,
            host: "h".into(),
            ..Row::default()
        }
    }

    /// The tree's merge is the flat merge, byte for byte (every interval's counts, times and
    /// encoded histograms), with 2, 3, 5 and 8 ranks, one of them failing mid-job (its
    /// series cut short, its error kept) and one failing before any I/O; every rank has its
    /// row, in rank order.
    #[test]
    fn the_tree_merge_is_the_flat_merge_byte_for_byte() {
        for size in [2u32, 3, 5, 8] {
            let all: Vec<Vec<Interval>> = (0..size)
                .map(|r| match r {
                    // Failed mid-job: three intervals in.
                    1 => series(r, 3),
                    // Failed before any I/O (a bad target).
                    4 => Vec::new(),
                    r => series(r, 6 + r % 2),
                })
                .collect();
            // As the job's document stores them: counts, times, histograms encoded at rest.
            let stored = |s: &[Interval]| -> Vec<Stored> {
                s.iter()
                    .map(|i| {
                        let lat = [i.io.read.lat.encode(), i.io.write.lat.encode()];
                        let [r, w] = lat.map(Result::unwrap);
                        let ios = [i.io.read.ios, i.io.write.ios];
                        (i.index, i.start.0, i.end.0, ios, [r, w])
                    })
                    .collect()
            };
            let flat = stored(&merge_series(&all));
            for shape in [Shape::Binomial, Shape::Star] {
                let parts = all
                    .iter()
                    .enumerate()
                    .map(|(r, s)| {
                        let mut row = row(r as u32);
                        if r == 1 || r == 4 {
                            row.error = Some("I/O error".into());
                        }
                        Part::own(row, s.clone(), None)
                    })
                    .collect();
                let mut merged = fold(shape, parts);
                assert_eq!(
                    stored(&merged.intervals().unwrap()),
                    flat,
                    "{shape:?} {size}"
                );
                let ranks: Vec<u32> = merged.rows.iter().map(|r| r.rank).collect();
                assert_eq!(ranks, (0..size).collect::<Vec<_>>());
                let errors = merged.rows.iter().filter(|r| r.error.is_some()).count();
                assert_eq!(errors, if size > 4 { 2 } else { 1 }, "{size}");
            }
        }
    }

    /// A rank lost with its subtree: every rank of it has a row saying so, the first as the
    /// one that died, with what it reported live.
    #[test]
    fn a_lost_subtree_names_each_of_its_ranks() {
        let mut p = Part::own(row(0), series(0, 4), None);
        p.absorb(Part::lost(4..8, (3, [120, 7])), 0).unwrap();
        p.seal().unwrap();
        assert_eq!(p.rows.len(), 5);
        let e4 = p.rows[1].error.as_deref().unwrap();
        assert!(e4.contains("120 reads and 7 writes"), "{e4}");
        let e6 = p.rows[3].error.as_deref().unwrap();
        assert!(e6.contains("through rank 4"), "{e6}");
        assert_eq!(p.series.len(), 4);
    }
}
