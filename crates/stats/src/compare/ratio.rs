//! A case against its baseline: the ratio of means and of trimmed means, each with a
//! two-sample bootstrap interval, which of them is the headline ([`Statistic`]), and the
//! verdict in words.

use super::samples::{
    check, mean, percentile_ci, positive, sorted, trimmed_mean_of_sorted, Ci, CompareError, Group,
    RESAMPLES,
};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Fewest repetitions per side for which [`Verdict::of`] gives a verdict.
pub const MIN_REPETITIONS: usize = 3;

/// The figure of each side a [`Ratio`] divides: its headline, the interval the verdict
/// reads, and the unit of its normalised samples. A campaign file's `statistic = …`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Statistic {
    /// The arithmetic mean of every repetition.
    #[default]
    Mean,
    /// The mean without the highest and the lowest repetition
    /// ([`Describe::trimmed_mean`](super::Describe::trimmed_mean)): the filesystem study's
    /// method, where one disturbed run must not move the result.
    Trimmed,
}

impl Statistic {
    /// Both, in the order an error message lists them.
    pub const ALL: [Statistic; 2] = [Statistic::Trimmed, Statistic::Mean];

    /// The word a campaign file uses (`"mean"`, `"trimmed"`), as serde spells it.
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Mean => "mean",
            Statistic::Trimmed => "trimmed",
        }
    }

    /// The statistic a campaign file's word names.
    pub fn parse(word: &str) -> Option<Statistic> {
        Statistic::ALL.into_iter().find(|s| s.name() == word)
    }

    /// How a report names the figure: "mean", "trimmed mean".
    pub fn label(self) -> &'static str {
        match self {
            Statistic::Mean => "mean",
            Statistic::Trimmed => "trimmed mean",
        }
    }

    /// How a summary names what its ratios are of: "means", "trimmed means (highest and
    /// lowest run dropped)".
    pub fn plural(self) -> &'static str {
        match self {
            Statistic::Mean => "means",
            Statistic::Trimmed => "trimmed means (highest and lowest run dropped)",
        }
    }

    /// The figure of `samples` (non-empty, finite).
    fn of(self, samples: &[f64]) -> f64 {
        match self {
            Statistic::Mean => mean(samples),
            Statistic::Trimmed => trimmed_mean_of_sorted(&sorted(samples)),
        }
    }
}

impl fmt::Display for Statistic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A case compared with a baseline on one metric: case / baseline, baseline = 1.00. Both the
/// ratio of means and the ratio of trimmed means are kept, each with its interval;
/// [`Ratio::statistic`] says which one is the headline ([`Ratio::headline`]) that the verdict
/// and the normalised samples follow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// The statistic of the headline (documents from before it existed used the mean).
    #[serde(default)]
    pub statistic: Statistic,
    pub n_case: usize,
    pub n_baseline: usize,
    /// mean(case) / mean(baseline).
    pub ratio: f64,
    /// 95 % interval of the ratio of means, by bootstrap (see [`Ratio::of`]); `None` when
    /// either side has a single sample.
    pub ci95: Option<Ci>,
    /// trimmed_mean(case) / trimmed_mean(baseline), each trimmed as
    /// [`Describe::trimmed_mean`](super::Describe::trimmed_mean).
    pub trimmed_ratio: f64,
    /// 95 % interval of the ratio of trimmed means, from the same resamples as
    /// [`Ratio::ci95`]; `None` when either side has a single sample.
    #[serde(default)]
    pub trimmed_ci95: Option<Ci>,
    /// Each case sample divided by the baseline's [`Ratio::statistic`] (its mean or its
    /// trimmed mean), in input order: the field's "normalised to the raw device = 1"; its
    /// spread is the case's spread in baseline units.
    pub normalised: Vec<f64>,
}

impl Ratio {
    /// Compares `case` with `baseline`, with `statistic` as the headline. Every sample must
    /// be finite, case samples ≥ 0 and baseline samples > 0: the metrics compared are rates,
    /// sizes and latencies, and a baseline sample of 0 lets a resample's baseline mean be 0,
    /// so the ratio would be infinite.
    ///
    /// Intervals: two-sample percentile bootstrap (Efron & Tibshirani 1993, §8.3 for two
    /// independent samples, §13.3 for the percentile interval). Each of [`RESAMPLES`] rounds
    /// draws n_case values from `case` and, independently, n_baseline values from `baseline`,
    /// both with replacement, and records mean(case*) / mean(baseline*) and
    /// trimmed_mean(case*) / trimmed_mean(baseline*); each interval is the 50th and 1950th
    /// of its 2000 sorted ratios. The generator is xoshiro256++ seeded with `seed`, so a
    /// given seed gives the same intervals every time, whatever the statistic.
    pub fn of(
        case: &[f64],
        baseline: &[f64],
        statistic: Statistic,
        seed: u64,
    ) -> Result<Ratio, CompareError> {
        check(case, Group::Case)?;
        check(baseline, Group::Baseline)?;
        positive(case, Group::Case, |x| x >= 0.0)?;
        positive(baseline, Group::Baseline, |x| x > 0.0)?;
        let (ci95, trimmed_ci95) = if case.len() >= 2 && baseline.len() >= 2 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let (mut means, mut trimmed) =
                (Vec::with_capacity(RESAMPLES), Vec::with_capacity(RESAMPLES));
            let (mut c, mut b) = (Vec::new(), Vec::new());
            for _ in 0..RESAMPLES {
                let (cm, ct) = resample(case, &mut rng, &mut c);
                let (bm, bt) = resample(baseline, &mut rng, &mut b);
                means.push(cm / bm);
                trimmed.push(ct / bt);
            }
            (
                Some(percentile_ci(&mut means)),
                Some(percentile_ci(&mut trimmed)),
            )
        } else {
            (None, None)
        };
        let base = statistic.of(baseline);
        Ok(Ratio {
            statistic,
            n_case: case.len(),
            n_baseline: baseline.len(),
            ratio: Statistic::Mean.of(case) / Statistic::Mean.of(baseline),
            ci95,
            trimmed_ratio: Statistic::Trimmed.of(case) / Statistic::Trimmed.of(baseline),
            trimmed_ci95,
            normalised: case.iter().map(|x| x / base).collect(),
        })
    }

    /// The headline ratio: of means or of trimmed means, as [`Ratio::statistic`] says.
    pub fn headline(&self) -> f64 {
        match self.statistic {
            Statistic::Mean => self.ratio,
            Statistic::Trimmed => self.trimmed_ratio,
        }
    }

    /// The 95 % interval of [`Ratio::headline`].
    pub fn headline_ci(&self) -> Option<Ci> {
        match self.statistic {
            Statistic::Mean => self.ci95,
            Statistic::Trimmed => self.trimmed_ci95,
        }
    }
}

/// What a [`Ratio`] says, in words a report can print; `ratio`, `lo` and `hi` are its
/// headline ([`Ratio::headline`]) and that headline's interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Verdict {
    /// The 95 % interval of the headline ratio excludes 1.0.
    Different {
        ratio: f64,
        lo: f64,
        hi: f64,
        #[serde(default)]
        statistic: Statistic,
    },
    /// The 95 % interval of the headline ratio includes 1.0 (bounds inclusive).
    NoDifference {
        ratio: f64,
        lo: f64,
        hi: f64,
        #[serde(default)]
        statistic: Statistic,
    },
    /// Withheld: a side has fewer than [`MIN_REPETITIONS`] samples. With n = 2 the bootstrap
    /// sees only three distinct resample means per side, and its interval (already too narrow
    /// at small n: Hesterberg 2015, "What Teachers Should Know About the Bootstrap", The
    /// American Statistician 69(4)) would make noise look like a difference.
    TooFew { n_case: usize, n_baseline: usize },
}

impl Verdict {
    /// The verdict on `r`, read from its headline; see the variants for the rules.
    pub fn of(r: &Ratio) -> Verdict {
        let few = r.n_case < MIN_REPETITIONS || r.n_baseline < MIN_REPETITIONS;
        match r.headline_ci() {
            Some(ci) if !few => {
                let (ratio, lo, hi, statistic) = (r.headline(), ci.lo, ci.hi, r.statistic);
                if ci.contains(1.0) {
                    Verdict::NoDifference {
                        ratio,
                        lo,
                        hi,
                        statistic,
                    }
                } else {
                    Verdict::Different {
                        ratio,
                        lo,
                        hi,
                        statistic,
                    }
                }
            }
            _ => Verdict::TooFew {
                n_case: r.n_case,
                n_baseline: r.n_baseline,
            },
        }
    }

    /// One line for a report, e.g. "B is 1.42× A (95% CI 1.35–1.49), better", or with
    /// trimmed means "B is 1.42× A (trimmed means, 95% CI 1.35–1.49), better". The trailing
    /// "better"/"worse" follows `higher_is_better` (false for latencies); only
    /// [`Verdict::Different`] gets one.
    pub fn sentence(&self, case: &str, baseline: &str, higher_is_better: bool) -> String {
        // Ratios of means read as they always have; a ratio of trimmed means says so.
        let trimmed = |s: Statistic, then: &str| match s {
            Statistic::Mean => String::new(),
            Statistic::Trimmed => format!("trimmed means{then}"),
        };
        match *self {
            Verdict::Different {
                ratio,
                lo,
                hi,
                statistic,
            } => {
                let better = (ratio > 1.0) == higher_is_better;
                format!(
                    "{case} is {}× {baseline} ({}95% CI {}–{}), {}",
                    num(ratio),
                    trimmed(statistic, ", "),
                    num(lo),
                    num(hi),
                    if better { "better" } else { "worse" }
                )
            }
            Verdict::NoDifference {
                ratio,
                lo,
                hi,
                statistic,
            } => format!(
                "no difference between {case} and {baseline} beyond noise ({}{}×, 95% CI {}–{})",
                trimmed(statistic, " "),
                num(ratio),
                num(lo),
                num(hi)
            ),
            Verdict::TooFew { n_case, n_baseline } if n_case == n_baseline => {
                format!("too few repetitions to tell: n={n_case}")
            }
            Verdict::TooFew { n_case, n_baseline } => format!(
                "too few repetitions to tell: n={n_case} for {case}, n={n_baseline} for {baseline}"
            ),
        }
    }
}

/// A ratio for a sentence: two decimals, or two significant digits below 0.1 so that a
/// tiny ratio never prints as "0.00".
fn num(x: f64) -> String {
    if x > 0.0 && x < 0.1 {
        let decimals = (-x.log10()).ceil() as usize + 1;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.2}")
    }
}

/// Draws `samples.len()` values from `samples` with replacement into `buf` (the same draws
/// [`super::bootstrap_mean_ci`] makes) and returns their mean and trimmed mean.
fn resample(samples: &[f64], rng: &mut impl Rng, buf: &mut Vec<f64>) -> (f64, f64) {
    let n = samples.len();
    buf.clear();
    buf.extend((0..n).map(|_| samples[rng.random_range(0..n)]));
    // Summed in draw order, as the mean's own bootstrap sums, before sorting for the trimmed
    // mean: the ratio-of-means interval stays what it was before trimmed means were added.
    let sum: f64 = buf.iter().sum();
    buf.sort_by(f64::total_cmp);
    let mean = (sum / n as f64).clamp(buf[0], buf[n - 1]);
    (mean, trimmed_mean_of_sorted(buf))
}
