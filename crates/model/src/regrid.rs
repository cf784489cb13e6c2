//! Re-rendering a stored run at a coarser interval (`iogauge show ID --interval 5s`).
//!
//! Workload intervals are merged from their stored per-interval histograms, so percentiles
//! of the coarse intervals are exact (an average of p99s is not a p99); device, CPU and
//! memory figures are derived again from the raw /proc snapshots, which lie on the recorded
//! grid and therefore on every coarser grid that is a whole multiple of it.

use crate::calib::{point_label, CalibrationReport, POINT_INTERVAL};
use crate::derive::Derived;
use crate::hardware::system_between;
use crate::run::{IntervalReport, RunReport};
use crate::Document;
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
    named_interval_label(phase, index, dir.name())
}

/// The store label of one interval's histogram of `name` (a direction, or a database
/// run's `read` / `update` operations): `iv/measure/12/update`.
pub fn named_interval_label(phase: Phase, index: u32, name: &str) -> String {
    let phase = match phase {
        Phase::Ramp => "ramp",
        Phase::Measure => "measure",
    };
    format!("iv/{phase}/{index}/{name}")
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

/// How many `recorded` intervals make one of `every`, and the stored histograms to merge
/// them by; `None` when `every` is the recorded interval (nothing to merge).
pub(crate) fn merging<'a>(
    every: Duration,
    recorded: Duration,
    hists: &'a [(String, Vec<u8>)],
) -> Result<Option<(u32, Hists<'a>)>, RegridError> {
    let ratio = ratio_of(every, recorded)?;
    Ok((ratio > 1).then(|| (ratio, Hists::new(hists, recorded))))
}

/// `every` ÷ `recorded`, when `every` is a whole multiple of it.
fn ratio_of(every: Duration, recorded: Duration) -> Result<u32, RegridError> {
    let ratio = every.as_nanos() / recorded.as_nanos().max(1);
    if ratio == 0 || !every.as_nanos().is_multiple_of(recorded.as_nanos().max(1)) {
        return Err(RegridError::NotMultiple {
            asked: every,
            recorded,
        });
    }
    u32::try_from(ratio).map_err(|_| RegridError::TooCoarse {
        asked: every,
        recorded,
    })
}

/// The recorded intervals of one coarse interval: (position in the list, index within its
/// phase) each.
pub type Members = Vec<(usize, u32)>;

/// The recorded intervals (given by phase, in order) grouped onto a grid `ratio` times
/// coarser, each phase cut from its own start: per group its phase and members, each as
/// (position in the list, recorded index within its phase).
pub fn groups(phases: impl Iterator<Item = Phase>, ratio: u32) -> Vec<(Phase, Members)> {
    let mut seen: BTreeMap<Phase, u32> = BTreeMap::new();
    let mut out: Vec<(Phase, u32, Members)> = Vec::new();
    for (i, phase) in phases.enumerate() {
        let slot = seen.entry(phase).or_insert(0);
        let index = *slot;
        *slot += 1;
        match out.last_mut() {
            Some((p, g, members)) if *p == phase && *g == index / ratio => members.push((i, index)),
            _ => out.push((phase, index / ratio, vec![(i, index)])),
        }
    }
    out.into_iter().map(|(p, _, m)| (p, m)).collect()
}

/// Stored histograms by label, decoded on demand; a missing one means the result was
/// stored without per-interval histograms.
pub(crate) struct Hists<'a> {
    by_label: BTreeMap<&'a str, &'a [u8]>,
    recorded: Duration,
}

impl<'a> Hists<'a> {
    pub(crate) fn new(hists: &'a [(String, Vec<u8>)], recorded: Duration) -> Self {
        Hists {
            by_label: hists
                .iter()
                .map(|(l, d)| (l.as_str(), d.as_slice()))
                .collect(),
            recorded,
        }
    }

    pub(crate) fn get(&self, label: &str) -> Result<LatHist, RegridError> {
        let Some(bytes) = self.by_label.get(label) else {
            return Err(RegridError::NoHistograms {
                recorded: self.recorded,
            });
        };
        LatHist::decode(bytes).map_err(|e| RegridError::Corrupt {
            label: label.to_string(),
            why: e.to_string(),
        })
    }
}

impl RunReport {
    /// This run's intervals at `every` (a whole multiple of the recorded interval), each
    /// phase cut separately from its own start; the summary and everything else unchanged.
    pub fn regrid(
        &self,
        every: Duration,
        hists: &[(String, Vec<u8>)],
    ) -> Result<RunReport, RegridError> {
        let mut out = self.clone();
        let Some((ratio, hists)) = merging(every, self.options.interval, hists)? else {
            return Ok(out);
        };
        out.intervals = regrid_intervals(&self.intervals, ratio, &hists, "", &|iv, _| {
            if self.samples.is_empty() {
                None
            } else {
                system_between(&self.samples, iv.start, iv.end)
            }
        })?;
        Ok(out)
    }
}

/// `reports` merged onto a grid `ratio` times coarser, percentiles from the histograms
/// stored as `prefix` + [`interval_label`]; each merged interval's device figures from
/// `system(merged, positions of its members)`.
fn regrid_intervals(
    reports: &[IntervalReport],
    ratio: u32,
    hists: &Hists,
    prefix: &str,
    system: &dyn Fn(&Interval, &[usize]) -> Option<Derived>,
) -> Result<Vec<IntervalReport>, RegridError> {
    let mut out = Vec::new();
    for (phase, members) in groups(reports.iter().map(|r| r.phase), ratio) {
        let mut merged: Option<Interval> = None;
        for &(i, index) in &members {
            let r = &reports[i];
            let mut io = PerDir::<DirStats>::default();
            for (dir, d) in [(Direction::Read, &r.read), (Direction::Write, &r.write)] {
                if d.ios == 0 {
                    continue;
                }
                let lat = hists.get(&format!("{prefix}{}", interval_label(phase, index, dir)))?;
                io[dir] = DirStats {
                    ios: d.ios,
                    bytes: iogauge_stats::Bytes(d.bytes),
                    lat,
                };
            }
            let iv = Interval {
                phase,
                index: index / ratio,
                start: nanos(r.t_s),
                end: nanos(r.t_s + r.dur_s),
                io,
                members: Vec::new(),
            };
            match &mut merged {
                Some(m) => m.absorb(&iv),
                None => merged = Some(iv),
            }
        }
        if let Some(m) = merged {
            let positions: Vec<usize> = members.iter().map(|(i, _)| *i).collect();
            let mut rep = IntervalReport::of(&m);
            rep.system = system(&m, &positions);
            out.push(rep);
        }
    }
    Ok(out)
}

impl CalibrationReport {
    /// Every point's intervals at `every` (a whole multiple of [`POINT_INTERVAL`]), from the
    /// per-interval histograms stored under the point's label; device figures combined from
    /// the recorded intervals' ([`Derived::combine`]).
    pub fn regrid(
        &self,
        every: Duration,
        hists: &[(String, Vec<u8>)],
    ) -> Result<CalibrationReport, RegridError> {
        let mut out = self.clone();
        let Some((ratio, hists)) = merging(every, POINT_INTERVAL, hists)? else {
            return Ok(out);
        };
        for (i, p) in out.points.iter_mut().enumerate() {
            let prefix = format!("{}/", point_label(i, &p.point));
            let ivs = &p.intervals;
            p.intervals = regrid_intervals(ivs, ratio, &hists, &prefix, &|_, m| {
                let parts: Vec<(f64, &Derived)> = m
                    .iter()
                    .filter_map(|&k| Some((ivs[k].dur_s, ivs[k].system.as_ref()?)))
                    .collect();
                (parts.len() == m.len())
                    .then(|| Derived::combine(&parts))
                    .flatten()
            })?;
        }
        Ok(out)
    }
}

impl Document {
    /// The document's intervals at `every`, whichever its kind (`iogauge show ID --interval`).
    pub fn regrid(
        &self,
        every: Duration,
        hists: &[(String, Vec<u8>)],
    ) -> Result<Document, RegridError> {
        Ok(match self {
            Document::Run(r) => Document::from(r.regrid(every, hists)?),
            Document::Calibration(c) => Document::from(c.regrid(every, hists)?),
            Document::DbRun(d) => Document::from(d.regrid(every, hists)?),
        })
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

    #[test]
    fn calibration_points_regrid_with_combined_device_figures() {
        let fixture = include_str!("../../campaign/tests/fixtures/calibrate.json");
        let Ok(Document::Calibration(mut c)) = Document::from_json(fixture) else {
            panic!("calibrate.json is a calibration")
        };
        let s = series();
        c.points.truncate(1);
        let p = &mut c.points[0];
        p.intervals = s
            .iter()
            .enumerate()
            .map(|(i, iv)| {
                let mut rep = IntervalReport::of(iv);
                let mut d = Derived::default();
                let rates = crate::derive::DiskRates {
                    r_s: 100.0 * (i as f64 + 1.0),
                    util: 10.0 * i as f64,
                    ..Default::default()
                };
                d.disks.insert("vda".into(), rates);
                rep.system = Some(d);
                rep
            })
            .collect();
        let prefix = format!("{}/", point_label(0, &p.point));
        let h: Vec<(String, Vec<u8>)> = interval_histograms(&s)
            .unwrap()
            .into_iter()
            .map(|(l, b)| (format!("{prefix}{l}"), b))
            .collect();
        let g = c.regrid(Duration::from_secs(2), &h).unwrap();
        let ivs = &g.points[0].intervals;
        assert_eq!(ivs.len(), 4, "ramp 0..2, measured 2..4, 4..6, 6..7");
        assert_eq!(ivs[1].read.ios, 700);
        let p50 = ivs[1].read.lat_us.p50;
        assert!((3990.0..4010.0).contains(&p50), "p50 {p50}");
        let vda = &ivs[1].system.as_ref().unwrap().disks["vda"];
        assert!(
            (vda.r_s - 350.0).abs() < 1e-9,
            "(300 + 400) / 2: {}",
            vda.r_s
        );
        assert!((vda.util - 25.0).abs() < 1e-9);
        assert!(matches!(
            c.regrid(Duration::from_secs(2), &[]),
            Err(RegridError::NoHistograms { .. })
        ));
        assert_eq!(c.regrid(POINT_INTERVAL, &[]).unwrap(), *c);
    }
}
