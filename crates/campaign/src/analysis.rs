//! The statistics of a campaign: per catalogue metric and case, the descriptive figures of the
//! measured repetitions, the ratio to the baseline (of means or of trimmed means, as the
//! campaign's `statistic` says) and the verdict in words ([`metrics`]); and the campaign's
//! warnings in sentences ([`warnings`]).
//!
//! Interrupted runs are left out of every figure (they cover only part of a run) and named in
//! a warning instead. Deterministic: each bootstrap is seeded from the metric and the case
//! ([`seed`]), so the same store always gives the same report.

use crate::digest::{catalogue, Metric};
use crate::view::{CaseView, MetricCase, MetricView, RunDigest};
use iogauge_stats::compare::{outliers, Describe, Ratio, Statistic, Verdict, MIN_REPETITIONS};
use std::collections::BTreeMap;

/// Coefficient of variation above which a case's metric is called noisy (10 %).
pub const NOISY_CV: f64 = 0.10;

/// The measured (not interrupted) runs of `case` that have `key`, in repetition order.
fn measured<'a>(case: &'a CaseView, key: &str) -> Vec<(&'a RunDigest, f64)> {
    case.runs
        .iter()
        .filter(|r| !r.interrupted)
        .filter_map(|r| Some((r, *r.metrics.get(key)?)))
        .collect()
}

/// The samples of `key` in `case`: one per measured repetition that has it.
pub fn samples(case: &CaseView, key: &str) -> Vec<f64> {
    measured(case, key).into_iter().map(|(_, v)| v).collect()
}

/// Seed of the ratio bootstrap of metric `key` for case `case`: FNV-1a over the key, a 0xff
/// separator (never in UTF-8) and the case name; stable seeds keep a report reproducible.
pub fn seed(key: &str, case: &str) -> u64 {
    iogauge_stats::fnv1a(key.bytes().chain([0xff]).chain(case.bytes()))
}

/// Every catalogue metric some measured run has, in catalogue order, with one entry per case
/// that has it (case order). The baseline gets no ratio and no verdict; a case gets no ratio
/// when the baseline lacks the metric or the statistics refuse the samples (a baseline sample
/// of 0), and no verdict below [`MIN_REPETITIONS`] a side (as [`crate::MetricCase::verdict`]
/// documents; [`warnings`] says so once for the campaign). `statistic` (the campaign file's)
/// makes each ratio's headline, and so its verdict.
pub fn metrics(cases: &[CaseView], baseline: &str, statistic: Statistic) -> Vec<MetricView> {
    metrics_with(cases, statistic, |c| {
        (c.name != baseline).then_some(baseline)
    })
}

/// As [`metrics`], each case against its own [`CaseView::baseline`] (`baseline = { fs =
/// "raw" }`: every workload normalised to its raw device).
pub fn metrics_per_case(cases: &[CaseView], statistic: Statistic) -> Vec<MetricView> {
    metrics_with(cases, statistic, |c| c.baseline.as_deref())
}

fn metrics_with<'a>(
    cases: &'a [CaseView],
    statistic: Statistic,
    base_of: impl Fn(&'a CaseView) -> Option<&'a str>,
) -> Vec<MetricView> {
    catalogue()
        .iter()
        .filter_map(|m| {
            let per_case: Vec<MetricCase> = cases
                .iter()
                .filter_map(|c| {
                    let base = base_of(c);
                    let base_samples = base
                        .and_then(|b| cases.iter().find(|x| x.name == b))
                        .map(|b| samples(b, m.key))
                        .unwrap_or_default();
                    metric_case(m, c, &base_samples, base, statistic)
                })
                .collect();
            (!per_case.is_empty()).then(|| MetricView {
                key: m.key.into(),
                label: m.label.into(),
                unit: m.unit.into(),
                higher_is_better: m.higher_is_better,
                cases: per_case,
            })
        })
        .collect()
}

/// One case's figures on one metric; `None` when no measured run has it. Digests hold only
/// finite values, so `Describe::of` fails only on an empty slice. `baseline` is the case it
/// is compared with (`None` for a baseline).
fn metric_case(
    m: &Metric,
    c: &CaseView,
    base: &[f64],
    baseline: Option<&str>,
    statistic: Statistic,
) -> Option<MetricCase> {
    let samples = samples(c, m.key);
    let describe = Describe::of(&samples).ok()?;
    let ratio = baseline
        .filter(|_| !base.is_empty())
        .and_then(|_| Ratio::of(&samples, base, statistic, seed(m.key, &c.name)).ok());
    let verdict = ratio.as_ref().and_then(|r| match Verdict::of(r) {
        Verdict::TooFew { .. } => None,
        v => Some(v.sentence(&c.name, baseline.unwrap_or(""), m.higher_is_better)),
    });
    Some(MetricCase {
        case: c.name.clone(),
        samples,
        describe,
        ratio,
        verdict,
    })
}

/// Modified z-score of every sample, as [`outliers`] computes it (Iglewicz & Hoaglin 1993,
/// "How to Detect and Handle Outliers", §3.2): M_i = 0.6745 (x_i − x̃) / MAD, or when MAD = 0,
/// (x_i − x̃) / (1.253314 · MeanAD). `None` when every sample equals the median.
pub fn modified_z(samples: &[f64]) -> Option<Vec<f64>> {
    let median = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        }
    };
    if samples.is_empty() {
        return None;
    }
    let med = median(samples);
    let dev: Vec<f64> = samples.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&dev);
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        1.253314 * dev.iter().sum::<f64>() / dev.len() as f64
    };
    (scale > 0.0).then(|| samples.iter().map(|x| (x - med) / scale).collect())
}

/// The campaign's warnings, one sentence each: repetitions below what a verdict needs, then
/// per case (in order) interrupted runs, cases short of `repeat` measured runs, outlying
/// repetitions (modified z-score above 3.5, per run over the `watched` metrics), noisy
/// metrics (CV above [`NOISY_CV`], of the watched ones), and the runs' own warnings, each once with how many runs gave it (once
/// for the whole campaign when every run of every case gave it).
pub fn warnings(cases: &[CaseView], repeat: u32) -> Vec<String> {
    let mut out = Vec::new();
    if (repeat as usize) < MIN_REPETITIONS {
        out.push(format!(
            "each case is repeated {repeat} time{}: a verdict needs at least {MIN_REPETITIONS} repetitions per case, so none is given; raise repeat",
            plural(repeat as usize)
        ));
    }
    let run_warnings = recurring(cases);
    out.extend(run_warnings.common);
    for c in cases {
        let name = &c.name;
        for r in c.runs.iter().filter(|r| r.interrupted) {
            out.push(format!(
                "case {name}, repetition {} (run {}) was interrupted and is left out of the statistics",
                r.rep, r.id
            ));
        }
        let n = c.runs.iter().filter(|r| !r.interrupted).count();
        if n < repeat as usize {
            out.push(format!(
                "case {name} has {n} measured run{} of the {repeat} asked for; run the campaign again to complete it",
                plural(n)
            ));
        }
        out.extend(outlier_warnings(c));
        let noisy: Vec<String> = catalogue()
            .iter()
            .filter(|m| watched(m))
            .filter_map(|m| {
                let cv = Describe::of(&samples(c, m.key)).ok()?.cv?;
                (cv.abs() > NOISY_CV).then(|| format!("{} {:.1}%", m.key, cv.abs() * 100.0))
            })
            .collect();
        if !noisy.is_empty() {
            out.push(format!(
                "case {name} is noisy (coefficient of variation above {:.0}%): {}",
                NOISY_CV * 100.0,
                noisy.join(", ")
            ));
        }
        out.extend(
            run_warnings
                .per_case
                .get(name)
                .into_iter()
                .flatten()
                .cloned(),
        );
    }
    out
}

/// Smallest deviation from the median, as a share of it, that an outlier warning names.
pub const MATERIAL: f64 = 0.02;

/// Metrics whose noise and outliers are worth a warning: rates and mean latencies. Tail
/// percentiles (p99 and beyond) of short runs rest on a handful of I/Os and vary by nature;
/// their spread is in the tables and charts, not in the warnings.
fn watched(m: &Metric) -> bool {
    m.higher_is_better
        || m.key.ends_with("_mean_ms")
        || m.key == "latency_ms"
        || m.key == "db_avg_read_ms"
}

/// One sentence per outlying repetition of `c`, naming every metric it is an outlier in
/// (of the [`watched`] ones).
fn outlier_warnings(c: &CaseView) -> Vec<String> {
    let mut by_run: BTreeMap<(u32, i64), Vec<String>> = BTreeMap::new();
    for m in catalogue().iter().filter(|m| watched(m)) {
        let runs = measured(c, m.key);
        let values: Vec<f64> = runs.iter().map(|(_, v)| *v).collect();
        let flagged = outliers(&values);
        let Some(z) = modified_z(&values).filter(|_| !flagged.is_empty()) else {
            continue;
        };
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let median = Describe::of(&sorted).map_or(0.0, |d| d.median);
        // A repetition 0.3% off runs that agree to 0.1% has a huge z-score and no meaning:
        // only deviations of at least MATERIAL of the median are worth a warning.
        for i in flagged
            .into_iter()
            .filter(|&i| (values[i] - median).abs() >= MATERIAL * median.abs())
        {
            let r = runs[i].0;
            by_run
                .entry((r.rep, r.id))
                .or_default()
                .push(format!("{} (modified z {:.1})", m.key, z[i]));
        }
    }
    by_run
        .into_iter()
        .map(|((rep, id), what)| {
            format!(
                "case {}: repetition {rep} (run {id}) is an outlier in {}; check what else ran on the machine then, or re-run it",
                c.name,
                what.join(", ")
            )
        })
        .collect()
}

struct Recurring {
    /// Warnings every run of every case gave.
    common: Vec<String>,
    per_case: BTreeMap<String, Vec<String>>,
}

/// The runs' own warnings, grouped. "interrupted: …" is left out: [`warnings`] names
/// interrupted runs itself.
fn recurring(cases: &[CaseView]) -> Recurring {
    let total: usize = cases.iter().map(|c| c.runs.len()).sum();
    // Warning → per case, the runs that gave it; in first-seen order.
    let mut seen: Vec<(&str, BTreeMap<&str, Vec<&RunDigest>>)> = Vec::new();
    for c in cases {
        for r in &c.runs {
            for (k, w) in r.warnings.iter().enumerate() {
                if w.starts_with("interrupted") || r.warnings[..k].contains(w) {
                    continue;
                }
                let at = match seen.iter().position(|(s, _)| s == w) {
                    Some(i) => i,
                    None => {
                        seen.push((w.as_str(), BTreeMap::new()));
                        seen.len() - 1
                    }
                };
                seen[at].1.entry(c.name.as_str()).or_default().push(r);
            }
        }
    }
    let mut out = Recurring {
        common: Vec::new(),
        per_case: BTreeMap::new(),
    };
    for (w, by_case) in seen {
        let count: usize = by_case.values().map(Vec::len).sum();
        if total > 1 && count == total {
            out.common.push(format!("every run: {w}"));
            continue;
        }
        for c in cases {
            let Some(runs) = by_case.get(c.name.as_str()) else {
                continue;
            };
            let text = match runs.as_slice() {
                [r] if c.runs.len() > 1 => {
                    format!("case {}, repetition {} (run {}): {w}", c.name, r.rep, r.id)
                }
                _ => format!(
                    "case {}, {} of {} runs: {w}",
                    c.name,
                    runs.len(),
                    c.runs.len()
                ),
            };
            out.per_case.entry(c.name.clone()).or_default().push(text);
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
