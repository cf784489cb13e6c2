//! A history sized at a peak: per-period hardware IOPS (and MB/s), their percentiles, a
//! histogram, the top periods for drill-down, and a sizing at the chosen percentile.
//!
//! Percentiles are **nearest rank**: the P-th percentile of N values is the value of rank
//! ⌈P/100 × N⌉ (counting from 1, at least 1) in ascending order — definition 1 of Hyndman &
//! Fan (1996), the "nearest-rank method" of most statistics texts. It is always an observed
//! value, so the sized period is a real one with a timestamp to look into, and p100 is the
//! maximum. The percentile is taken over hardware IOPS, not workload IOPS: with the write
//! penalty, a write-heavy period can need more disks than a busier read-heavy one.

use crate::history::Period;
use crate::sizing::{ceil_count, disks_for, size, Disk, Layout, Model, Sizing, Workload};
use crate::units::{Iops, MiBps};
use serde::Serialize;

/// The 0-based index of the nearest-rank P-th percentile (0 < P ≤ 100) among `n` ≥ 1
/// sorted values.
pub fn nearest_rank(n: usize, p: f64) -> usize {
    // p × n / 100 rather than p / 100 × n: exact for whole percents and n < 2^53.
    let rank = ceil_count(p * n as f64 / 100.0).max(1) as usize;
    rank.min(n) - 1
}

/// p50, p90, p95, p99 and max (nearest rank) of some values.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Percentiles {
    /// Of `values` in any order; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Percentiles> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let at = |p| v[nearest_rank(v.len(), p)];
        Some(Percentiles {
            p50: at(50.0),
            p90: at(90.0),
            p95: at(95.0),
            p99: at(99.0),
            max: v[v.len() - 1],
        })
    }
}

/// The percentiles of each per-period figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub workload_iops: Percentiles,
    pub hardware_iops: Percentiles,
    /// Disks each period needs for its IOPS.
    pub disks: Percentiles,
    pub workload_mbps: Option<Percentiles>,
    pub hardware_mbps: Option<Percentiles>,
    pub disks_mbps: Option<Percentiles>,
}

/// One bar of the histogram of hardware IOPS: periods with `from ≤ hardware < to` (the last
/// bar includes `to`), and the disks a period at `to` needs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Bucket {
    pub from: Iops,
    pub to: Iops,
    pub periods: usize,
    pub disks: u64,
}

/// Counts `values` in `bars` equal-width bars from their minimum to their maximum: (from,
/// to, count). One bar when all values are equal; none when there are no values.
pub fn histogram(values: &[f64], bars: usize) -> Vec<(f64, f64, usize)> {
    let (Some(lo), Some(hi)) = (
        values.iter().copied().min_by(f64::total_cmp),
        values.iter().copied().max_by(f64::total_cmp),
    ) else {
        return Vec::new();
    };
    let bars = if hi > lo { bars.max(1) } else { 1 };
    let width = (hi - lo) / bars as f64;
    let mut counts = vec![0; bars];
    for &v in values {
        let i = if width > 0.0 {
            ((v - lo) / width) as usize
        } else {
            0
        };
        counts[i.min(bars - 1)] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let to = if i + 1 == bars {
                hi
            } else {
                lo + width * (i + 1) as f64
            };
            (lo + width * i as f64, to, c)
        })
        .collect()
}

/// A period among the busiest, for drill-down.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Peak {
    pub line: u64,
    pub timestamp: String,
    pub read_iops: Iops,
    pub write_iops: Iops,
    pub workload_iops: Iops,
    pub hardware_iops: Iops,
    pub disks: u64,
    pub hardware_mbps: Option<MiBps>,
}

/// The `n` periods with the most hardware IOPS, busiest first; ties keep file order.
pub fn top_periods(periods: &[Period], model: &Model, disk: &Disk, n: usize) -> Vec<Peak> {
    let hw = |p: &Period| model.hardware(p.read_iops.0, p.write_iops.0);
    let mut order: Vec<&Period> = periods.iter().collect();
    order.sort_by(|a, b| hw(b).total_cmp(&hw(a)));
    order
        .into_iter()
        .take(n)
        .map(|p| Peak {
            line: p.line,
            timestamp: p.timestamp.clone(),
            read_iops: p.read_iops,
            write_iops: p.write_iops,
            workload_iops: Iops(p.read_iops.0 + p.write_iops.0),
            hardware_iops: Iops(hw(p)),
            disks: disks_for(hw(p), disk.iops.0, model.target_util).1,
            hardware_mbps: hardware_mbps(p, model).map(MiBps),
        })
        .collect()
}

fn hardware_mbps(p: &Period, model: &Model) -> Option<f64> {
    Some(model.hardware(p.read_mbps?.0, p.write_mbps?.0))
}

/// How many periods `top` lists.
pub const TOP: usize = 10;
/// How many bars the histogram has.
pub const BARS: usize = 10;

/// A history and its sizing at a percentile. The sizing (flattened, so the top-level keys are
/// those of a plain sizing) uses the reads and writes of the period at the percentile of
/// hardware IOPS, and for MB/s those of the period at the percentile of hardware MB/s.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryPlan {
    /// Number of periods in the file.
    pub periods: usize,
    /// The percentile sized for, 0 < P ≤ 100.
    pub percentile: f64,
    /// The period at that percentile of hardware IOPS.
    pub sized_line: u64,
    pub sized_timestamp: String,
    /// The period at that percentile of hardware MB/s (when the file has MB/s).
    pub sized_line_mbps: Option<u64>,
    pub percentiles: Spread,
    pub histogram: Vec<Bucket>,
    pub top: Vec<Peak>,
    #[serde(flatten)]
    pub sizing: Sizing,
}

/// The period at the nearest-rank percentile of `key`; ties keep file order.
fn at_percentile(periods: &[Period], p: f64, key: impl Fn(&Period) -> f64) -> &Period {
    let mut order: Vec<&Period> = periods.iter().collect();
    order.sort_by(|a, b| key(a).total_cmp(&key(b)));
    order[nearest_rank(order.len(), p)]
}

/// Sizes a non-empty history at `percentile` (0 < P ≤ 100).
///
/// # Panics
/// If `periods` is empty ([`crate::parse_history`] never returns an empty history).
pub fn plan_history(
    periods: &[Period],
    model: &Model,
    disk: &Disk,
    layout: &Layout,
    percentile: f64,
) -> HistoryPlan {
    assert!(!periods.is_empty(), "a history has at least one period");
    let hw: Vec<f64> = periods
        .iter()
        .map(|p| model.hardware(p.read_iops.0, p.write_iops.0))
        .collect();
    let disks_of = |h: f64, per: f64| disks_for(h, per, model.target_util).1 as f64;
    let workload: Vec<f64> = periods
        .iter()
        .map(|p| p.read_iops.0 + p.write_iops.0)
        .collect();
    let hw_mbps: Option<Vec<f64>> = periods.iter().map(|p| hardware_mbps(p, model)).collect();
    let workload_mbps: Option<Vec<f64>> = periods
        .iter()
        .map(|p| Some(p.read_mbps?.0 + p.write_mbps?.0))
        .collect();

    let row = at_percentile(periods, percentile, |p| {
        model.hardware(p.read_iops.0, p.write_iops.0)
    });
    let row_mbps = hw_mbps.as_ref().map(|_| {
        at_percentile(periods, percentile, |p| {
            hardware_mbps(p, model).unwrap_or(0.0)
        })
    });
    let w = Workload {
        read_iops: row.read_iops,
        write_iops: row.write_iops,
        read_mbps: row_mbps.and_then(|r| r.read_mbps),
        write_mbps: row_mbps.and_then(|r| r.write_mbps),
    };
    let pct = |v: &[f64]| Percentiles::of(v).expect("non-empty");
    HistoryPlan {
        periods: periods.len(),
        percentile,
        sized_line: row.line,
        sized_timestamp: row.timestamp.clone(),
        sized_line_mbps: row_mbps.map(|r| r.line),
        percentiles: Spread {
            workload_iops: pct(&workload),
            hardware_iops: pct(&hw),
            disks: pct(&hw
                .iter()
                .map(|&h| disks_of(h, disk.iops.0))
                .collect::<Vec<_>>()),
            workload_mbps: workload_mbps.as_deref().map(pct),
            hardware_mbps: hw_mbps.as_deref().map(pct),
            disks_mbps: match (&hw_mbps, disk.mbps) {
                (Some(v), Some(per)) => Some(pct(&v
                    .iter()
                    .map(|&h| disks_of(h, per.0))
                    .collect::<Vec<_>>())),
                _ => None,
            },
        },
        histogram: histogram(&hw, BARS)
            .into_iter()
            .map(|(from, to, periods)| Bucket {
                from: Iops(from),
                to: Iops(to),
                periods,
                disks: disks_for(to, disk.iops.0, model.target_util).1,
            })
            .collect(),
        top: top_periods(periods, model, disk, TOP),
        sizing: size(&w, model, disk, layout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_history, Columns, Redundancy};

    #[test]
    fn nearest_rank_by_hand() {
        // (n, P, 0-based index): rank ⌈P × n / 100⌉.
        let table = [
            (20, 95.0, 18),
            (20, 50.0, 9),
            (20, 100.0, 19),
            (20, 1.0, 0),
            (10, 90.0, 8),
            (10, 99.0, 9),
            (1, 50.0, 0),
            (3, 50.0, 1),
            (4, 50.0, 1),
            (100, 99.0, 98),
            (7, 0.001, 0),
        ];
        for (n, p, want) in table {
            assert_eq!(nearest_rank(n, p), want, "n={n} p={p}");
        }
    }

    #[test]
    fn percentiles_are_observed_values() {
        let v: Vec<f64> = (1..=20).rev().map(|i| f64::from(i) * 10.0).collect();
        let p = Percentiles::of(&v).unwrap();
        assert_eq!(
            (p.p50, p.p90, p.p95, p.p99, p.max),
            (100.0, 180.0, 190.0, 200.0, 200.0)
        );
        assert_eq!(Percentiles::of(&[]), None);
    }

    #[test]
    fn histogram_bars() {
        let h = histogram(&[0.0, 1.0, 2.0, 3.0, 4.0, 10.0], 5);
        let counts: Vec<usize> = h.iter().map(|b| b.2).collect();
        assert_eq!(counts, [2, 2, 1, 0, 1]);
        assert_eq!((h[0].0, h[4].1), (0.0, 10.0));
        assert_eq!(histogram(&[7.0, 7.0], 10), [(7.0, 7.0, 2)]);
        assert!(histogram(&[], 10).is_empty());
    }

    /// Twelve periods; hardware IOPS at normal redundancy are read + 2 × write:
    ///
    /// | line | time  | read | write | hardware |
    /// |------|-------|------|-------|----------|
    /// | 2    | 00:00 | 1000 |  100  | 1200     |
    /// | 3    | 01:00 | 3000 |  200  | 3400     |
    /// | 4    | 02:00 | 2000 | 1000  | 4000     |
    /// | 5    | 03:00 |  500 |  100  |  700     |
    /// | 6    | 04:00 | 4000 |    0  | 4000     |
    /// | 7    | 05:00 | 1000 | 2000  | 5000     |
    /// | 8    | 06:00 |  900 |  900  | 2700     |
    /// | 9    | 07:00 | 6000 |  500  | 7000     |
    /// | 10   | 08:00 |  100 |   50  |  200     |
    /// | 11   | 09:00 | 2500 |  250  | 3000     |
    /// | 12   | 10:00 |    0 | 3000  | 6000     |
    /// | 13   | 11:00 | 1500 |  500  | 2500     |
    ///
    /// Sorted: 200 700 1200 2500 2700 3000 3400 4000(l4) 4000(l6) 5000 6000 7000.
    /// p95: rank ⌈0.95 × 12⌉ = ⌈11.4⌉ = 12 → 7000 (line 9); p90: ⌈10.8⌉ = 11 → 6000 (line 12);
    /// p50: rank 6 → 3000 (line 11). The busiest write-only period (line 12) outranks the
    /// busier-in-workload line 6 (4000 reads).
    const FIXTURE: &str = "timestamp,read_iops,write_iops
00:00,1000,100
01:00,3000,200
02:00,2000,1000
03:00,500,100
04:00,4000,0
05:00,1000,2000
06:00,900,900
07:00,6000,500
08:00,100,50
09:00,2500,250
10:00,0,3000
11:00,1500,500
";

    #[test]
    fn history_percentiles_and_top_periods_by_hand() {
        let periods = parse_history(FIXTURE.as_bytes(), &Columns::default()).unwrap();
        let model = Model::new(Redundancy::Mirror);
        let disk = Disk {
            iops: Iops(180.0),
            mbps: None,
        };
        let layout = Layout {
            per_enclosure: Some(12),
            disks: None,
        };
        // (percentile, sized line, hardware IOPS, disks)
        let table = [
            (95.0, 9, 7000.0, 39),
            (90.0, 12, 6000.0, 34),
            (50.0, 11, 3000.0, 17),
            (100.0, 9, 7000.0, 39),
            (60.0, 4, 4000.0, 23),
        ];
        for (p, line, hw, disks) in table {
            let h = plan_history(&periods, &model, &disk, &layout, p);
            assert_eq!(h.sized_line, line, "p{p}");
            assert_eq!(h.sizing.hardware_iops, Iops(hw), "p{p}");
            assert_eq!(h.sizing.disks, disks, "p{p}");
        }
        let h = plan_history(&periods, &model, &disk, &layout, 95.0);
        let s = &h.percentiles.hardware_iops;
        assert_eq!(
            (s.p50, s.p90, s.p95, s.p99, s.max),
            (3000.0, 6000.0, 7000.0, 7000.0, 7000.0)
        );
        let lines: Vec<u64> = h.top.iter().map(|t| t.line).collect();
        assert_eq!(lines, [9, 12, 7, 4, 6, 3, 11, 8, 13, 2]);
        assert_eq!(h.top[0].timestamp, "07:00");
        assert_eq!(h.histogram.iter().map(|b| b.periods).sum::<usize>(), 12);
        assert_eq!(h.histogram.last().unwrap().disks, 39);
        assert_eq!(h.percentiles.disks.max, 39.0);
        assert_eq!(h.sized_line_mbps, None);
    }

    #[test]
    fn mbps_is_sized_at_its_own_percentile_period() {
        let csv = "timestamp,read_iops,write_iops,read_mbps,write_mbps
a,100,0,10,0
b,1000,0,1,0
c,50,0,400,100
";
        let periods = parse_history(csv.as_bytes(), &Columns::default()).unwrap();
        let disk = Disk {
            iops: Iops(100.0),
            mbps: Some(MiBps(100.0)),
        };
        let h = plan_history(
            &periods,
            &Model::new(Redundancy::Mirror),
            &disk,
            &Layout::default(),
            100.0,
        );
        assert_eq!((h.sized_line, h.sized_line_mbps), (3, Some(4)));
        assert_eq!(h.sizing.hardware_mbps, Some(MiBps(600.0)));
        assert_eq!((h.sizing.disks, h.sizing.disks_mbps), (10, Some(6)));
        assert_eq!(h.sizing.binding, crate::Binding::Iops);
    }
}
