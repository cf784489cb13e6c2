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

mod ratio;
mod samples;
pub use ratio::{Ratio, Statistic, Verdict, MIN_REPETITIONS};
use samples::{check, mean, median_of_sorted, percentile_ci, sorted, trimmed_mean_of_sorted};
pub use samples::{Ci, CompareError, Group, RESAMPLES};

/// Seed of [`Describe::of`]'s bootstrap ("iogauge" in ASCII). [`Ratio::of`] takes its own.
pub const DESCRIBE_SEED: u64 = 0x0069_6f67_6175_6765;

/// Modified z-score above which a sample is flagged (Iglewicz & Hoaglin 1993).
pub const OUTLIER_Z: f64 = 3.5;

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

#[cfg(test)]
mod tests;
