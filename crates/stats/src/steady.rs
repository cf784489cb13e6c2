//! Steady-state detection on a per-interval IOPS series: when a rolling window first meets
//! fio's `iops` (max deviation) or `iops_slope` criterion, and whether the run later leaves
//! steady state (a sustained drop below the steady mean).
//!
//! The criteria follow fio's HOWTO, option `steadystate=` (alias `ss=`), with `ss_dur` as the
//! window: `iops:X%` holds when every IOPS sample in the window is within X% of the window's
//! mean; `iops_slope:X%` holds when the least-squares slope of the window's samples, as a
//! percentage of the mean, is at most X per second. fio checks once the window is full and
//! then after every further sample; so does this module. Two deliberate differences: limits
//! here are always percentages (fio also takes absolute IOPS), and a limit is met when the
//! figure is *at most* X (fio's `steadystate.c` compares with a strict `<`; the two differ only
//! at exact equality).
//!
//! Pure: no clock, no I/O. Input is one IOPS figure per interval, intervals of equal length.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which of fio's two IOPS criteria a window must meet.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SteadyCriterion {
    /// fio `iops:X%`: max |sample − mean| ≤ `pct` % of the mean.
    Deviation { pct: f64 },
    /// fio `iops_slope:X%`: |least-squares slope| ≤ `pct_per_s` % of the mean per second.
    Slope { pct_per_s: f64 },
}

impl SteadyCriterion {
    /// Whether a window's figures meet this criterion. A figure that is undefined (mean 0,
    /// or a slope over fewer than two samples) never meets it.
    pub fn is_met(&self, w: &WindowStats) -> bool {
        match *self {
            SteadyCriterion::Deviation { pct } => w.max_dev_pct.is_some_and(|d| d <= pct),
            SteadyCriterion::Slope { pct_per_s } => {
                w.slope_pct_per_s.is_some_and(|s| s <= pct_per_s)
            }
        }
    }

    fn limit(&self) -> f64 {
        match *self {
            SteadyCriterion::Deviation { pct } => pct,
            SteadyCriterion::Slope { pct_per_s } => pct_per_s,
        }
    }
}

/// How to look for steady state and for leaving it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyConfig {
    pub criterion: SteadyCriterion,
    /// Rolling window length in intervals (fio's `ss_dur` divided by the interval length).
    pub window: usize,
    /// Length of one interval in seconds; the slope's x axis is `index × interval_s`.
    pub interval_s: f64,
    /// Leaving steady state: IOPS below `(1 − drop_pct/100) × steady mean` ...
    pub drop_pct: f64,
    /// ... for this many consecutive intervals.
    pub drop_intervals: usize,
}

impl SteadyConfig {
    /// Checks the configuration; the message names the field and the accepted range.
    ///
    /// `window` must be at least 2: a 1-sample window has no slope, and its deviation is
    /// always 0, so every series would be "steady" at its first interval.
    pub fn validate(&self) -> Result<(), String> {
        let limit = self.criterion.limit();
        if !(limit.is_finite() && limit >= 0.0) {
            return Err(format!(
                "criterion: limit must be a finite percentage >= 0, got {limit}"
            ));
        }
        if self.window < 2 {
            return Err(format!(
                "window: must be at least 2 intervals (a slope needs two points), got {}",
                self.window
            ));
        }
        if !(self.interval_s.is_finite() && self.interval_s > 0.0) {
            return Err(format!(
                "interval_s: must be a finite number of seconds > 0, got {}",
                self.interval_s
            ));
        }
        if !(self.drop_pct > 0.0 && self.drop_pct < 100.0) {
            return Err(format!(
                "drop_pct: must be between 0 and 100 (exclusive), got {}",
                self.drop_pct
            ));
        }
        if self.drop_intervals == 0 {
            return Err("drop_intervals: must be at least 1, got 0".to_string());
        }
        Ok(())
    }
}

/// One window's figures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowStats {
    /// Arithmetic mean IOPS; 0 for an empty window.
    pub mean: f64,
    /// max |sample − mean| / mean × 100; `None` when the mean is not positive.
    pub max_dev_pct: Option<f64>,
    /// |least-squares slope| / mean × 100, in % of the mean per second; `None` when the mean
    /// is not positive or there are fewer than two samples.
    pub slope_pct_per_s: Option<f64>,
}

/// What [`detect`] found. All `None` when the series never reached steady state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    /// Index of the first interval of the first window that met the criterion; measured
    /// figures start here.
    pub reached_at: Option<usize>,
    /// Mean IOPS of that window.
    pub steady_mean: Option<f64>,
    /// That window's max deviation, % of its mean.
    pub window_deviation_pct: Option<f64>,
    /// That window's |slope|, % of its mean per second.
    pub window_slope_pct_per_s: Option<f64>,
    /// First interval of the first run of `drop_intervals` consecutive intervals below
    /// `(1 − drop_pct/100) × steady_mean`, at or after `reached_at`.
    pub left_at: Option<usize>,
    /// The drop over that whole below-threshold run (it may be longer than
    /// `drop_intervals`): `(1 − run mean / steady_mean) × 100`.
    pub drop_pct_observed: Option<f64>,
}

/// Mean, max deviation and least-squares slope of one window of IOPS samples taken every
/// `interval_s` seconds.
///
/// Slope: ordinary least squares of y on x with x_i = i × `interval_s`,
/// b = Σ(x_i − x̄)(y_i − ȳ) / Σ(x_i − x̄)² (e.g. NIST/SEMATECH e-Handbook of Statistical
/// Methods, §4.1.4.1 "Linear Least Squares Regression"); the centred form avoids the
/// cancellation of fio's Σxy − ΣxΣy/n. Reported as |b| / ȳ × 100, as fio's `iops_slope:X%`.
pub fn window_stats(iops: &[f64], interval_s: f64) -> WindowStats {
    let n = iops.len();
    if n == 0 {
        return WindowStats {
            mean: 0.0,
            max_dev_pct: None,
            slope_pct_per_s: None,
        };
    }
    let mean = iops.iter().sum::<f64>() / n as f64;
    if mean.is_nan() || mean <= 0.0 {
        return WindowStats {
            mean,
            max_dev_pct: None,
            slope_pct_per_s: None,
        };
    }
    let max_dev = iops.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
    let x_mean = (n - 1) as f64 / 2.0 * interval_s;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in iops.iter().enumerate() {
        let dx = i as f64 * interval_s - x_mean;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    let slope_pct_per_s = (sxx > 0.0 && sxx.is_finite()).then(|| (sxy / sxx).abs() / mean * 100.0);
    WindowStats {
        mean,
        max_dev_pct: Some(max_dev / mean * 100.0),
        slope_pct_per_s,
    }
}

/// Finds where a finished series reached steady state and whether it left it.
///
/// Windows `iops[s..s + window]` are tried for s = 0, 1, ...; the first one that meets the
/// criterion sets `reached_at = s`. A series shorter than the window, an empty series or a
/// window of 0 never reaches steady state. With a window of 1 (rejected by
/// [`SteadyConfig::validate`]) the deviation criterion holds at the first positive sample and
/// the slope criterion never holds.
pub fn detect(iops: &[f64], cfg: &SteadyConfig) -> SteadyReport {
    let w = cfg.window;
    if w == 0 || iops.len() < w {
        return SteadyReport::default();
    }
    let Some((start, ws)) = (0..=iops.len() - w)
        .map(|s| (s, window_stats(&iops[s..s + w], cfg.interval_s)))
        .find(|(_, ws)| cfg.criterion.is_met(ws))
    else {
        return SteadyReport::default();
    };
    let (left_at, drop_pct_observed) = find_drop(iops, start, ws.mean, cfg);
    SteadyReport {
        reached_at: Some(start),
        steady_mean: Some(ws.mean),
        window_deviation_pct: ws.max_dev_pct,
        window_slope_pct_per_s: ws.slope_pct_per_s,
        left_at,
        drop_pct_observed,
    }
}

/// The first run of at least `drop_intervals` samples below the threshold, from `from` on:
/// its start and the drop of its mean from `steady_mean`, in %.
fn find_drop(
    iops: &[f64],
    from: usize,
    steady_mean: f64,
    cfg: &SteadyConfig,
) -> (Option<usize>, Option<f64>) {
    let threshold = steady_mean * (1.0 - cfg.drop_pct / 100.0);
    let need = cfg.drop_intervals.max(1);
    let mut i = from;
    while i < iops.len() {
        let run = iops[i..].iter().take_while(|&&y| y < threshold).count();
        if run >= need {
            let run_mean = iops[i..i + run].iter().sum::<f64>() / run as f64;
            return (Some(i), Some((1.0 - run_mean / steady_mean) * 100.0));
        }
        i += run + 1;
    }
    (None, None)
}

/// Incremental form of [`detect`]'s reaching test, for `--steady`: push each interval's IOPS
/// as the run goes; `push` returns true once a window has met the criterion, and keeps
/// returning true (the state latches, as fio stops checking once attained).
#[derive(Clone, Debug)]
pub struct SteadyDetector {
    cfg: SteadyConfig,
    buf: VecDeque<f64>,
    pushed: usize,
    reached_at: Option<usize>,
}

impl SteadyDetector {
    pub fn new(cfg: SteadyConfig) -> Self {
        SteadyDetector {
            buf: VecDeque::with_capacity(cfg.window),
            cfg,
            pushed: 0,
            reached_at: None,
        }
    }

    /// Adds one interval's IOPS; true once steady state has been reached.
    pub fn push(&mut self, iops: f64) -> bool {
        if self.reached_at.is_some() {
            return true;
        }
        self.pushed += 1;
        let w = self.cfg.window;
        if w == 0 {
            return false;
        }
        if self.buf.len() == w {
            self.buf.pop_front();
        }
        self.buf.push_back(iops);
        if self.buf.len() == w {
            let ws = window_stats(self.buf.make_contiguous(), self.cfg.interval_s);
            if self.cfg.criterion.is_met(&ws) {
                self.reached_at = Some(self.pushed - w);
            }
        }
        self.reached_at.is_some()
    }

    /// Index of the first interval of the window that met the criterion, as in [`detect`].
    pub fn reached_at(&self) -> Option<usize> {
        self.reached_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV5: SteadyCriterion = SteadyCriterion::Deviation { pct: 5.0 };

    fn cfg(criterion: SteadyCriterion, window: usize) -> SteadyConfig {
        SteadyConfig {
            criterion,
            window,
            interval_s: 1.0,
            drop_pct: 20.0,
            drop_intervals: 3,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    /// (samples, interval_s, mean, max dev %, slope %/s)
    type StatsCase = (&'static [f64], f64, f64, Option<f64>, Option<f64>);
    /// (name, series, config, reached_at, (left_at, drop_pct_observed))
    type DetectCase = (
        &'static str,
        Vec<f64>,
        SteadyConfig,
        Option<usize>,
        Option<(usize, f64)>,
    );

    fn series(parts: &[(f64, usize)]) -> Vec<f64> {
        parts.iter().flat_map(|&(v, n)| vec![v; n]).collect()
    }

    #[test]
    fn window_stats_against_hand_computation() {
        let third = 100.0 / 6.0; // 2 / 12 × 100
        let cases: [StatsCase; 6] = [
            // slope: Σdx·dy = (−1)(−2) + 0 + (1)(2) = 4, Σdx² = 2 → 2/s = 16.67 % of 12.
            (&[10.0, 12.0, 14.0], 1.0, 12.0, Some(third), Some(third)),
            // same samples every 2 s: half the slope per second.
            (
                &[10.0, 12.0, 14.0],
                2.0,
                12.0,
                Some(third),
                Some(third / 2.0),
            ),
            // falling series: |slope|.
            (&[14.0, 12.0, 10.0], 1.0, 12.0, Some(third), Some(third)),
            // flat: zero deviation and slope.
            (&[500.0; 4], 1.0, 500.0, Some(0.0), Some(0.0)),
            // one sample: deviation 0, no slope.
            (&[7.0], 1.0, 7.0, Some(0.0), None),
            // mean 0: percentages undefined.
            (&[0.0, 0.0, 0.0], 1.0, 0.0, None, None),
        ];
        for (ys, dt, mean, dev, slope) in cases {
            let w = window_stats(ys, dt);
            assert!(close(w.mean, mean), "{ys:?}: mean {}", w.mean);
            for (got, want) in [(w.max_dev_pct, dev), (w.slope_pct_per_s, slope)] {
                match (got, want) {
                    (Some(g), Some(e)) => assert!(close(g, e), "{ys:?} @{dt}: {g} vs {e}"),
                    (g, e) => assert_eq!(g, e, "{ys:?} @{dt}"),
                }
            }
        }
        assert_eq!(window_stats(&[], 1.0).max_dev_pct, None);
    }

    #[test]
    fn detect_table() {
        // Deterministic "noise": ±0.4 % around 1000, repeating.
        let noisy: Vec<f64> = (0..20)
            .map(|i| 1000.0 + [3.0, -2.0, 4.0, -1.0, 0.0, -4.0, 2.0][i % 7])
            .collect();
        // Slow linear ramp centred on 1000: slope 5/s = exactly 0.5 % of the mean per second.
        let slow_ramp: Vec<f64> = (0..10).map(|i| 1000.0 + 5.0 * (i as f64 - 4.5)).collect();
        let sawtooth: Vec<f64> = (0..30).map(|i| [100.0, 200.0][i % 2]).collect();
        let growth: Vec<f64> = (0..30).map(|i| 100.0 * 1.1f64.powi(i)).collect();
        let ramp_then_flat = series(&[(100.0, 1), (200.0, 1), (300.0, 1), (400.0, 1), (500.0, 10)]);
        let flat_drop = series(&[(1000.0, 20), (700.0, 5)]);
        let dip_drop = series(&[(1000.0, 10), (600.0, 2), (1000.0, 5), (750.0, 3)]);
        let shallow = series(&[(1000.0, 10), (850.0, 10)]);
        let slope = |x| SteadyCriterion::Slope { pct_per_s: x };
        let dev = |x| SteadyCriterion::Deviation { pct: x };

        #[rustfmt::skip]
        let cases: [DetectCase; 16] = [
            // First all-flat window starts at 4; [400, 500 × 4] deviates 16.7 %.
            ("ramp then flat", ramp_then_flat, cfg(DEV5, 5), Some(4), None),
            ("flat then drop", flat_drop, cfg(DEV5, 5), Some(0), Some((20, 30.0))),
            // A 2-interval dip is no departure with drop_intervals = 3; the later 3 are.
            ("dip then drop", dip_drop, cfg(DEV5, 5), Some(0), Some((17, 25.0))),
            // A 15 % drop is within drop_pct = 20.
            ("shallow drop", shallow, cfg(DEV5, 5), Some(0), None),
            ("sawtooth", sawtooth, cfg(DEV5, 5), None, None),
            ("steady growth", growth.clone(), cfg(DEV5, 5), None, None),
            ("steady growth, slope", growth, cfg(slope(1.0), 5), None, None),
            ("noise within threshold", noisy.clone(), cfg(DEV5, 5), Some(0), None),
            ("noise above threshold", noisy, cfg(dev(0.1), 5), None, None),
            ("slow ramp, slope 1", slow_ramp.clone(), cfg(slope(1.0), 10), Some(0), None),
            ("slow ramp, slope 0.1", slow_ramp, cfg(slope(0.1), 10), None, None),
            ("empty", vec![], cfg(DEV5, 5), None, None),
            ("window longer than series", vec![1000.0; 4], cfg(DEV5, 5), None, None),
            ("all zero", vec![0.0; 10], cfg(DEV5, 5), None, None),
            // Window of 1 (rejected by validate): deviation holds at once, slope never.
            ("window 1, deviation", vec![0.0, 9.0, 1.0], cfg(DEV5, 1), Some(1), None),
            ("window 1, slope", vec![9.0, 9.0], cfg(slope(1.0), 1), None, None),
        ];
        for (name, ys, c, reached, left) in cases {
            let r = detect(&ys, &c);
            assert_eq!(r.reached_at, reached, "{name}: reached_at");
            assert_eq!(
                r.steady_mean.is_some(),
                reached.is_some(),
                "{name}: steady_mean"
            );
            assert_eq!(r.left_at, left.map(|l| l.0), "{name}: left_at");
            match (r.drop_pct_observed, left) {
                (Some(g), Some((_, e))) => assert!(close(g, e), "{name}: drop {g} vs {e}"),
                (g, e) => assert_eq!(g, e.map(|l| l.1), "{name}: drop"),
            }

            // The incremental detector agrees, and push turns true at the window's last sample.
            let mut d = SteadyDetector::new(c.clone());
            let flips: Vec<bool> = ys.iter().map(|&y| d.push(y)).collect();
            assert_eq!(d.reached_at(), reached, "{name}: detector");
            let first_true = flips.iter().position(|&b| b);
            assert_eq!(
                first_true,
                reached.map(|s| s + c.window - 1),
                "{name}: push"
            );
            assert!(
                flips.iter().skip_while(|&&b| !b).all(|&b| b),
                "{name}: latch"
            );
        }
    }

    #[test]
    fn report_carries_the_reaching_window() {
        let r = detect(
            &[100.0, 990.0, 1010.0, 1000.0],
            &cfg(SteadyCriterion::Deviation { pct: 1.0 }, 3),
        );
        assert_eq!(r.reached_at, Some(1));
        assert!(close(r.steady_mean.unwrap(), 1000.0));
        assert!(close(r.window_deviation_pct.unwrap(), 1.0));
        // x = 0, 1, 2; y − ȳ = −10, 10, 0 → Σdx·dy = 10, Σdx² = 2 → 5/s = 0.5 %/s.
        assert!(close(r.window_slope_pct_per_s.unwrap(), 0.5));
    }

    #[test]
    fn validate_table() {
        let ok = cfg(DEV5, 30);
        assert_eq!(ok.validate(), Ok(()));
        let with = |f: fn(&mut SteadyConfig)| {
            let mut c = ok.clone();
            f(&mut c);
            c
        };
        let bad = [
            (with(|c| c.window = 1), "window"),
            (with(|c| c.window = 0), "window"),
            (with(|c| c.interval_s = 0.0), "interval_s"),
            (with(|c| c.interval_s = f64::INFINITY), "interval_s"),
            (with(|c| c.drop_pct = 0.0), "drop_pct"),
            (with(|c| c.drop_pct = 100.0), "drop_pct"),
            (with(|c| c.drop_intervals = 0), "drop_intervals"),
            (
                with(|c| c.criterion = SteadyCriterion::Deviation { pct: -1.0 }),
                "criterion",
            ),
            (
                with(|c| {
                    c.criterion = SteadyCriterion::Slope {
                        pct_per_s: f64::NAN,
                    }
                }),
                "criterion",
            ),
        ];
        for (c, field) in bad {
            let e = c.validate().unwrap_err();
            assert!(e.starts_with(field), "{c:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
