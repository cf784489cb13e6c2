//! `calibrate` over ranks, what goes up the tree after each point: a subtree's series of the
//! point merged exactly (one per kind: a curve's point one, a matrix cell two) and one row
//! per rank (its workers, I/Os, failure).

use crate::ranks::{join_rows, lost_rows, Bundle, RankRow};
use anyhow::anyhow;
use iogauge_stats::{absorb_series, Interval, WireInterval};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// One rank's share of one point.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct PointRow {
    pub rank: u32,
    pub workers: u32,
    /// The I/Os of its measured window (of its first job).
    pub ios: u64,
    pub interrupted: bool,
    pub error: Option<String>,
    /// Bytes of the message that carried its part (and its subtree's) up.
    pub sent: u64,
}

impl RankRow for PointRow {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn sent_mut(&mut self) -> &mut u64 {
        &mut self.sent
    }

    fn lost(rank: u32, why: String) -> PointRow {
        PointRow {
            rank,
            interrupted: true,
            error: Some(why),
            ..PointRow::default()
        }
    }
}

/// A subtree's part of one point.
#[derive(Default, Serialize, Deserialize)]
pub(super) struct PointPart {
    /// Each kind's series (small, then large), merged over the subtree; a kind no rank of it
    /// had a share of is empty.
    series: Vec<Vec<WireInterval>>,
    /// Decoded while this rank folds its children in (encoded by `seal`).
    #[serde(skip)]
    open: Option<Vec<Vec<Interval>>>,
    pub rows: Vec<PointRow>,
}

impl PointPart {
    /// One rank's part: its row and its series, one per kind.
    pub fn own(row: PointRow, series: Vec<Vec<Interval>>) -> PointPart {
        PointPart {
            series: Vec::new(),
            open: Some(series),
            rows: vec![row],
        }
    }

    fn decoded(&mut self) -> anyhow::Result<Vec<Vec<Interval>>> {
        match self.open.take() {
            Some(o) => Ok(o),
            None => std::mem::take(&mut self.series)
                .iter()
                .map(|s| s.iter().map(Interval::from_wire).collect())
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow!("a rank's point: {e}")),
        }
    }

    /// Kind `k`'s series merged over every rank (rank 0, once the tree is folded).
    pub fn kind(&mut self, k: usize) -> anyhow::Result<Vec<Interval>> {
        let mut all = self.decoded()?;
        let out = all.get(k).cloned().unwrap_or_default();
        self.open = Some(std::mem::take(&mut all));
        Ok(out)
    }
}

impl Bundle for PointPart {
    fn absorb(&mut self, mut child: PointPart, bytes: u64) -> anyhow::Result<()> {
        let mut mine = self.decoded()?;
        let theirs = child.decoded()?;
        if mine.len() < theirs.len() {
            mine.resize_with(theirs.len(), Vec::new);
        }
        for (m, t) in mine.iter_mut().zip(&theirs) {
            absorb_series(m, t);
        }
        self.open = Some(mine);
        join_rows(&mut self.rows, std::mem::take(&mut child.rows), bytes);
        Ok(())
    }

    fn lost(lost: Range<u32>, heard: (u64, [u64; 2])) -> PointPart {
        PointPart {
            rows: lost_rows(lost, heard),
            ..PointPart::default()
        }
    }

    fn seal(&mut self) -> anyhow::Result<()> {
        if let Some(open) = self.open.take() {
            self.series = open
                .iter()
                .map(|s| s.iter().map(Interval::to_wire).collect())
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow!("this rank's point: {e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranks::{fold, Shape};
    use iogauge_stats::{merge_series, DirStats, Nanos, PerDir, Phase};

    fn series(rank: u32, reads: u64) -> Vec<Interval> {
        (0..3)
            .map(|i| {
                let mut io = PerDir::<DirStats>::default();
                for k in 0..reads {
                    io.read
                        .record(8192, 10_000 + (k * 7919 + u64::from(rank)) % 900_000);
                }
                Interval {
                    phase: Phase::Measure,
                    index: i,
                    start: Nanos(u64::from(i) * 1_000_000_000),
                    end: Nanos(u64::from(i + 1) * 1_000_000_000),
                    io,
                    members: Vec::new(),
                }
            })
            .collect()
    }

    /// A matrix cell over 5 ranks, rank 3 with no share of the large kind and rank 4 failed:
    /// each kind merged up the tree is the flat merge of the ranks that had a share.
    #[test]
    fn a_points_kinds_merge_up_the_tree_as_flat() {
        let kinds = |r: u32| match r {
            3 => vec![series(r, 50), Vec::new()],
            4 => Vec::new(),
            r => vec![series(r, 40 + u64::from(r)), series(r + 10, 5)],
        };
        let parts = (0..5)
            .map(|r| {
                let row = PointRow {
                    rank: r,
                    error: (r == 4).then(|| "I/O error".to_string()),
                    ..PointRow::default()
                };
                PointPart::own(row, kinds(r))
            })
            .collect();
        let mut whole = fold(Shape::Binomial, parts);
        for k in 0..2 {
            let flat = merge_series(
                &(0..5)
                    .filter_map(|r| kinds(r).get(k).cloned())
                    .collect::<Vec<_>>(),
            );
            let enc = |s: &[Interval]| -> Vec<Vec<u8>> {
                s.iter().map(|i| i.io.read.lat.encode().unwrap()).collect()
            };
            let got = whole.kind(k).unwrap();
            assert_eq!(enc(&got), enc(&flat), "kind {k}");
            assert_eq!(got, flat, "kind {k}");
        }
        let ranks: Vec<u32> = whole.rows.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, [0, 1, 2, 3, 4]);
        assert!(whole.rows[4].error.is_some());
    }
}
