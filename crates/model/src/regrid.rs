//! Re-rendering a stored run at a coarser interval (`iogauge show ID --interval 5s`).
//!
//! Workload intervals are merged from their stored per-interval histograms, so percentiles
//! of the coarse intervals are exact (an average of p99s is not a p99); device, CPU and
//! memory figures are derived again from the raw /proc snapshots, which lie on the recorded
//! grid and therefore on every coarser grid that is a whole multiple of it.

use crate::hardware::system_between;
use crate::run::{IntervalReport, RunReport};
use iogauge_stats::{DirStats, Direction, HistError, Interval, LatHist, Nanos, PerDir, Phase};
use std::collections::BTreeMap;
use std::time::Duration;

/// Why a run cannot be shown at the interval asked for.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RegridError {
    #[error("--interval {asked:?} is not a whole multiple of the run's recorded {recorded:?} interval; use a multiple of it")]
    NotMultiple { asked: Duration, recorded: Duration },
    #[error("--interval {asked:?} is more than 2^32 of the run's recorded {recorded:?} intervals; use a shorter one")]
    TooCoarse { asked: Duration, recorded: Duration },
    #[error("the run was stored without per-interval histograms (stored by an older iogauge); only --interval {recorded:?} can be shown")]
    NoHistograms { recorded: Duration },
    #[error("stored histogram {label} does not decode: {why}")]
    Corrupt { label: String, why: String },
}

/// The store label of one interval's histogram: `iv/measure/12/read`.
pub fn interval_label(phase: Phase, index: u32, dir: Direction) -> String {
    let phase = match phase {
        Phase::Ramp => "ramp",
        Phase::Measure => "measure",
    };
    format!("iv/{phase}/{index}/{}", dir.name())
}

/// Every interval's non-empty latency histograms, encoded, labelled for the store.
pub fn interval_histograms(intervals: &[Interval]) -> Result<Vec<(String, Vec<u8>)>, HistError> {
    let mut out = Vec::with_capacity(intervals.len() * 2);
    for iv in intervals {
        for dir in [Direction::Read, Direction::Write] {
            let d = &iv.io[dir];
            if d.ios > 0 {
                out.push((interval_label(iv.phase, iv.index, dir), d.lat.encode()?));
            }
        }
    }
    Ok(out)
}

fn nanos(s: f64) -> Nanos {
    Nanos((s * 1e9).round() as u64)
}

impl RunReport {
    /// This run's intervals at `every` (a whole multiple of the recorded interval), each
    /// phase cut separately from its own start; the summary and everything else unchanged.
    pub fn regrid(
        &self,
        every: Duration,
        hists: &[(String, Vec<u8>)],
    ) -> Result<RunReport, RegridError> {
        let recorded = self.options.interval;
        let ratio = every.as_nanos() / recorded.as_nanos().max(1);
        if ratio == 0 || !every.as_nanos().is_multiple_of(recorded.as_nanos().max(1)) {
            return Err(RegridError::NotMultiple {
                asked: every,
                recorded,
            });
        }
        let Ok(ratio) = u32::try_from(ratio) else {
            return Err(RegridError::TooCoarse {
                asked: every,
                recorded,
            });
        };
        if ratio == 1 {
            return Ok(self.clone());
        }
        let by_label: BTreeMap<&str, &[u8]> = hists
            .iter()
            .map(|(l, d)| (l.as_str(), d.as_slice()))
            .collect();
        let mut merged: Vec<Interval> = Vec::new();
        // The recorded index of an interval is its position within its phase.
        let mut seen: BTreeMap<Phase, u32> = BTreeMap::new();
        for r in &self.intervals {
            let slot = seen.entry(r.phase).or_insert(0);
            let index = *slot;
            *slot += 1;
            let mut io = PerDir::<DirStats>::default();
            for (dir, d) in [(Direction::Read, &r.read), (Direction::Write, &r.write)] {
                if d.ios == 0 {
                    continue;
                }
                let label = interval_label(r.phase, index, dir);
                let Some(bytes) = by_label.get(label.as_str()) else {
                    return Err(RegridError::NoHistograms { recorded });
                };
                let lat = LatHist::decode(bytes).map_err(|e| RegridError::Corrupt {
                    label: label.clone(),
                    why: e.to_string(),
                })?;
                io[dir] = DirStats {
                    ios: d.ios,
                    bytes: iogauge_stats::Bytes(d.bytes),
                    lat,
                };
            }
            let iv = Interval {
                phase: r.phase,
                index: index / ratio,
                start: nanos(r.t_s),
                end: nanos(r.t_s + r.dur_s),
                io,
                members: Vec::new(),
            };
            match merged.last_mut() {
                Some(last) if (last.phase, last.index) == (iv.phase, iv.index) => last.absorb(&iv),
                _ => merged.push(iv),
            }
        }
        let mut out = self.clone();
        out.intervals = merged
            .iter()
            .map(|iv| {
                let mut rep = IntervalReport::of(iv);
                if !self.samples.is_empty() {
                    rep.system = system_between(&self.samples, iv.start, iv.end);
                }
                rep
            })
            .collect();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{JobSpec, RwMode};
    use std::time::SystemTime;

    fn series() -> Vec<Interval> {
        // 2 ramp + 5 measured intervals of 1 s; interval i has reads of latency (i+1) ms.
        (0..7u32)
            .map(|i| {
                let (phase, index) = if i < 2 {
                    (Phase::Ramp, i)
                } else {
                    (Phase::Measure, i - 2)
                };
                let mut io = PerDir::<DirStats>::default();
                for _ in 0..(100 * (i + 1)) {
                    io.read.record(4096, u64::from(i + 1) * 1_000_000);
                }
                if i == 4 {
                    io.write.record(8192, 50_000_000);
                }
                Interval {
                    phase,
                    index,
                    start: Nanos(u64::from(i) * 1_000_000_000),
                    end: Nanos(u64::from(i + 1) * 1_000_000_000),
                    io,
                    members: Vec::new(),
                }
            })
            .collect()
    }

    fn report(s: &[Interval]) -> RunReport {
        RunReport::from_series(
            JobSpec::new(RwMode::RandRead),
            vec![],
            SystemTime::UNIX_EPOCH,
            s,
            false,
        )
    }

    #[test]
    fn coarse_intervals_carry_exact_counts_and_percentiles() {
        let s = series();
        let r = report(&s);
        let h = interval_histograms(&s).unwrap();
        assert_eq!(h.len(), 8, "7 read histograms and one write");
        let g = r.regrid(Duration::from_secs(2), &h).unwrap();
        // Ramp 0..2 in one; measured 2..4, 4..6, 6..7.
        let phases: Vec<(Phase, f64, f64)> = g
            .intervals
            .iter()
            .map(|i| (i.phase, i.t_s, i.dur_s))
            .collect();
        assert_eq!(
            phases,
            vec![
                (Phase::Ramp, 0.0, 2.0),
                (Phase::Measure, 2.0, 2.0),
                (Phase::Measure, 4.0, 2.0),
                (Phase::Measure, 6.0, 1.0),
            ]
        );
        // Measured 2..4 holds intervals i=2 (300 reads at 3 ms) and i=3 (400 at 4 ms).
        let m = &g.intervals[1].read;
        assert_eq!(m.ios, 700);
        assert!((m.iops - 350.0).abs() < 1e-9);
        let p50 = m.lat_us.p50;
        assert!((3990.0..4010.0).contains(&p50), "p50 {p50} must be 4 ms");
        let p = g.intervals[1].read.lat_us.p90;
        assert!((3990.0..4010.0).contains(&p));
        assert_eq!(g.intervals[2].write.ios, 1);
        // The measured total is unchanged.
        assert_eq!(g.summary, r.summary);
        let sum: u64 = g
            .intervals
            .iter()
            .filter(|i| i.phase == Phase::Measure)
            .map(|i| i.read.ios)
            .sum();
        assert_eq!(sum, r.summary.read.ios);
    }

    #[test]
    fn refuses_what_it_cannot_do_exactly() {
        let s = series();
        let r = report(&s);
        let h = interval_histograms(&s).unwrap();
        assert!(matches!(
            r.regrid(Duration::from_millis(1500), &h),
            Err(RegridError::NotMultiple { .. })
        ));
        assert!(matches!(
            r.regrid(Duration::from_millis(500), &h),
            Err(RegridError::NotMultiple { .. })
        ));
        assert_eq!(r.regrid(Duration::from_secs(1), &h).unwrap(), r);
        assert!(matches!(
            r.regrid(Duration::from_secs(3), &[]),
            Err(RegridError::NoHistograms { .. })
        ));
        let mut bad = h.clone();
        bad[0].1 = vec![1, 2, 3];
        assert!(matches!(
            r.regrid(Duration::from_secs(3), &bad),
            Err(RegridError::Corrupt { .. })
        ));
    }
}
