//! Statistics over repeated runs of one configuration (a campaign "case"), and the comparison
//! of a case with a baseline: descriptive figures, a bootstrap confidence interval, outlier
//! flags, the ratio to the baseline with its uncertainty, and a plain-language verdict.
//!
//! The field's filesystem-comparison habit (10 repetitions, drop the highest and the lowest,
//! normalise to the raw device = 1, report the spread) is [`Statistic::Trimmed`]: the ratio,
//! its interval, the verdict and the normalised samples then all rest on trimmed means
//! ([`Describe::trimmed_mean`]); [`Statistic::Mean`] rests them on plain means. The
//! bootstrap interval and the verdict say whether a difference is larger than the noise.
//!
//! Pure and deterministic: no clock, no I/O, and the bootstrap draws from a seeded generator,
//! so the same input always gives the same interval. Input is one figure per repetition
//! (IOPS, MB/s, a latency mean or p99, physical reads/s ...), all in the same unit.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::fmt;

mod ratio;
pub use ratio::{Ratio, Statistic, Verdict};

/// Bootstrap resamples per interval. Efron & Tibshirani (1993) ask for B of about 1000 or
/// more for percentile intervals (against 50–200 for a standard error); 2000 keeps the 2.5 %
/// and 97.5 % points steady at the second decimal that [`Verdict::sentence`] prints.
pub const RESAMPLES: usize = 2000;

/// Seed of [`Describe::of`]'s bootstrap ("iogauge" in ASCII). [`Ratio::of`] takes its own.
pub const DESCRIBE_SEED: u64 = 0x0069_6f67_6175_6765;

/// Fewest repetitions per side for which [`Verdict::of`] gives a verdict.
pub const MIN_REPETITIONS: usize = 3;

/// Modified z-score above which a sample is flagged (Iglewicz & Hoaglin 1993).
pub const OUTLIER_Z: f64 = 3.5;

/// Which input a [`CompareError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// The one series given to [`Describe::of`].
    Samples,
    /// The first series given to [`Ratio::of`].
    Case,
    /// The series [`Ratio::of`] divides by.
    Baseline,
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Group::Samples => "samples",
            Group::Case => "case",
            Group::Baseline => "baseline",
        })
    }
}

/// Input the statistics refuse. Rejected rather than skipped: a NaN from a failed run must
/// not silently shrink n.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("{group}: no samples; run the case at least once")]
    Empty { group: Group },
    #[error(
        "{group}: sample {index} is {value}, not a finite number; drop or re-run that repetition"
    )]
    NonFinite {
        group: Group,
        index: usize,
        value: f64,
    },
    #[error("{group}: sample {index} is {value}; a ratio needs every case sample >= 0 and every baseline sample > 0")]
    OutOfRange {
        group: Group,
        index: usize,
        value: f64,
    },
}

/// A 95 % confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ci {
    pub lo: f64,
    pub hi: f64,
}

impl Ci {
    /// Whether `x` lies inside the closed interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// Descriptive statistics of one case's repetitions of one metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Describe {
    pub n: usize,
    /// Arithmetic mean, clamped to [min, max] so rounding never puts it outside the data
    /// (three copies of 0.1 sum to 0.30000000000000004).
    pub mean: f64,
    /// Middle value; the mean of the two middle values when n is even.
    pub median: f64,
    /// Sample standard deviation √(Σ(x − x̄)² / (n − 1)); `None` when n = 1.
    pub stddev: Option<f64>,
    /// Coefficient of variation stddev / mean; `None` when the mean is 0 or n = 1.
    pub cv: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Mean without the one highest and the one lowest sample when n ≥ 3 (the field's "drop
    /// high and low"; with n = 3 it equals the median); the plain mean when n < 3.
    pub trimmed_mean: f64,
    /// 95 % percentile-bootstrap interval of the mean (see [`bootstrap_mean_ci`]); `None`
    /// when n = 1, where resampling has nothing to vary.
    pub ci95: Option<Ci>,
    /// Indices (into the input, ascending) of samples whose modified z-score exceeds
    /// [`OUTLIER_Z`] (see [`outliers`]). Flagged, never removed.
    pub outliers: Vec<usize>,
}

impl Describe {
    /// Describes `samples`, one figure per repetition, in input order. Errors on an empty
    /// slice or a NaN/infinite sample (the first one found). The bootstrap uses
    /// [`DESCRIBE_SEED`], so equal inputs give equal intervals.
    pub fn of(samples: &[f64]) -> Result<Describe, CompareError> {
        check(samples, Group::Samples)?;
        let n = samples.len();
        let sorted = sorted(samples);
        let (min, max) = (sorted[0], sorted[n - 1]);
        let mean = mean(samples).clamp(min, max);
        let stddev = (n >= 2).then(|| {
            let ss: f64 = samples.iter().map(|x| (x - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        });
        let cv = stddev.filter(|_| mean != 0.0).map(|s| s / mean);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(DESCRIBE_SEED);
        Ok(Describe {
            n,
            mean,
            median: median_of_sorted(&sorted),
            stddev,
            cv,
            min,
            max,
            trimmed_mean: trimmed_mean_of_sorted(&sorted),
            ci95: (n >= 2).then(|| bootstrap_mean_ci(samples, &mut rng)),
            outliers: outliers(samples),
        })
    }
}

/// Indices of the samples whose modified z-score M_i = 0.6745 (x_i − x̃) / MAD exceeds
/// [`OUTLIER_Z`] in absolute value, with x̃ the median and MAD = median |x_i − x̃|
/// (Iglewicz & Hoaglin 1993, "How to Detect and Handle Outliers", ASQC, §3.2).
///
/// MAD = 0 (more than half the samples equal the median, common for quantised figures such
/// as histogram p99s): the score is instead (x_i − x̃) / (1.253314 · MeanAD), with
/// MeanAD = mean |x_i − x̃|, as IBM Cognos Analytics documents ("Modified z score"). So a
/// sample equal to the median is never flagged, all-equal data flags nothing, and a lone
/// sample off a repeated value is flagged when n ≥ 5 (its score is n / 1.253314), however
/// small the difference: when 9 runs agree exactly, the 10th is worth a look.
pub fn outliers(samples: &[f64]) -> Vec<usize> {
    if samples.is_empty() {
        return Vec::new();
    }
    let med = median_of_sorted(&sorted(samples));
    let dev: Vec<f64> = samples.iter().map(|x| (x - med).abs()).collect();
    let mad = median_of_sorted(&sorted(&dev));
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        1.253314 * mean(&dev)
    };
    if scale <= 0.0 {
        return Vec::new();
    }
    (0..samples.len())
        .filter(|&i| dev[i] / scale > OUTLIER_Z)
        .collect()
}

/// 95 % percentile-bootstrap interval of the mean of `samples` (Efron & Tibshirani 1993,
/// "An Introduction to the Bootstrap", Chapman & Hall, §13.3): draw [`RESAMPLES`] resamples
/// of n values with replacement, take each one's mean, sort, and report the B·α-th and
/// B·(1 − α)-th values with α = 0.025, i.e. the 50th and the 1950th. Every resample mean lies
/// within [min, max] (clamped against rounding), so the interval does too.
///
/// Coverage is below 95 % at small n (the percentile interval is too narrow, by about
/// √((n − 1)/n) and more for skewed data: Hesterberg 2015);
/// [`Verdict`] therefore withholds a verdict below [`MIN_REPETITIONS`].
pub fn bootstrap_mean_ci(samples: &[f64], rng: &mut impl Rng) -> Ci {
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| resample_mean(samples, rng))
        .collect();
    percentile_ci(&mut means)
}

/// The 2.5 % and 97.5 % points of `stats` as Efron & Tibshirani define them: the B·α-th and
/// B·(1 − α)-th ordered values, 1-based (the 50th and 1950th of 2000).
fn percentile_ci(stats: &mut [f64]) -> Ci {
    stats.sort_by(f64::total_cmp);
    let b = stats.len();
    let k = ((b as f64 * 0.025).round() as usize).clamp(1, b / 2);
    Ci {
        lo: stats[k - 1],
        hi: stats[b - k - 1],
    }
}

/// Mean of `samples.len()` values drawn from `samples` with replacement, clamped to the
/// samples' range.
fn resample_mean(samples: &[f64], rng: &mut impl Rng) -> f64 {
    let n = samples.len();
    let (mut sum, mut lo, mut hi) = (0.0, f64::INFINITY, f64::NEG_INFINITY);
    for _ in 0..n {
        let x = samples[rng.random_range(0..n)];
        sum += x;
        lo = lo.min(x);
        hi = hi.max(x);
    }
    (sum / n as f64).clamp(lo, hi)
}

fn check(samples: &[f64], group: Group) -> Result<(), CompareError> {
    if samples.is_empty() {
        return Err(CompareError::Empty { group });
    }
    match samples.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(CompareError::NonFinite {
            group,
            index,
            value: samples[index],
        }),
        None => Ok(()),
    }
}

fn positive(samples: &[f64], group: Group, ok: fn(f64) -> bool) -> Result<(), CompareError> {
    match samples.iter().position(|&x| !ok(x)) {
        Some(index) => Err(CompareError::OutOfRange {
            group,
            index,
            value: samples[index],
        }),
        None => Ok(()),
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Median of a sorted, non-empty slice.
fn median_of_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Mean of a sorted, non-empty slice without its first and last value when n ≥ 3.
fn trimmed_mean_of_sorted(s: &[f64]) -> f64 {
    let kept = if s.len() >= 3 { &s[1..s.len() - 1] } else { s };
    mean(kept).clamp(kept[0], kept[kept.len() - 1])
}

#[cfg(test)]
mod tests;
