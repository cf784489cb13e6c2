//! One series of repetitions, the ground both a case's description and its ratio to a
//! baseline stand on: the input checks and their errors, the order statistics (mean, median,
//! trimmed mean) and the percentile interval of a bootstrap.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Bootstrap resamples per interval. Efron & Tibshirani (1993) ask for B of about 1000 or
/// more for percentile intervals (against 50–200 for a standard error); 2000 keeps the 2.5 %
/// and 97.5 % points steady at the second decimal that
/// [`Verdict::sentence`](super::Verdict::sentence) prints.
pub const RESAMPLES: usize = 2000;

/// Which input a [`CompareError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// The one series given to [`Describe::of`](super::Describe::of).
    Samples,
    /// The first series given to [`Ratio::of`](super::Ratio::of).
    Case,
    /// The series [`Ratio::of`](super::Ratio::of) divides by.
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

/// The 2.5 % and 97.5 % points of `stats` as Efron & Tibshirani define them: the B·α-th and
/// B·(1 − α)-th ordered values, 1-based (the 50th and 1950th of 2000).
pub(super) fn percentile_ci(stats: &mut [f64]) -> Ci {
    stats.sort_by(f64::total_cmp);
    let b = stats.len();
    let k = ((b as f64 * 0.025).round() as usize).clamp(1, b / 2);
    Ci {
        lo: stats[k - 1],
        hi: stats[b - k - 1],
    }
}

pub(super) fn check(samples: &[f64], group: Group) -> Result<(), CompareError> {
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

pub(super) fn positive(
    samples: &[f64],
    group: Group,
    ok: fn(f64) -> bool,
) -> Result<(), CompareError> {
    match samples.iter().position(|&x| !ok(x)) {
        Some(index) => Err(CompareError::OutOfRange {
            group,
            index,
            value: samples[index],
        }),
        None => Ok(()),
    }
}

pub(super) fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

pub(super) fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Median of a sorted, non-empty slice.
pub(super) fn median_of_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Mean of a sorted, non-empty slice without its first and last value when n ≥ 3.
pub(super) fn trimmed_mean_of_sorted(s: &[f64]) -> f64 {
    let kept = if s.len() >= 3 { &s[1..s.len() - 1] } else { s };
    mean(kept).clamp(kept[0], kept[kept.len() - 1])
}
