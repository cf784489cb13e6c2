//! The lines `iogauge campaign` prints as it goes: a run's headline figures, and at the end,
//! per headline metric, each case's figures and verdict.

use super::limits::limits_text;
use crate::num::fmt_num;
use iogauge_campaign::{CampaignView, MetricCase};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Metrics a campaign prints first, in this order, when a run has them.
const HEADLINE: &[&str] = &[
    "iops",
    "max_iops",
    "ops_s",
    "mbps",
    "max_mbps",
    "db_physical_reads_s",
    "read_lat_p99_ms",
    "write_lat_p99_ms",
    "latency_ms",
    "op_read_lat_p99_ms",
    "op_update_lat_p99_ms",
];

/// The headline figures of a run, labelled.
pub(crate) fn headline(metrics: &BTreeMap<String, f64>) -> String {
    let parts: Vec<String> = HEADLINE
        .iter()
        .filter_map(|k| {
            let m = iogauge_campaign::digest::metric(k)?;
            let v = metrics.get(*k)?;
            Some(if m.unit == "ms" {
                format!("{} {} ms", m.label, fmt_num(*v))
            } else {
                format!("{} {}", fmt_num(*v), m.unit)
            })
        })
        .take(4)
        .collect();
    parts.join(", ")
}

/// The verdict; else the bare ratio when there are too few repetitions for one.
fn judgement(view: &CampaignView, c: &MetricCase) -> String {
    match (&c.verdict, &c.ratio, view.baseline_of(&c.case)) {
        _ if view.is_baseline(&c.case) => "(baseline)".into(),
        (Some(v), _, _) => v.clone(),
        (None, Some(r), Some(b)) => {
            format!(
                "{:.2}× {b} (too few repetitions for a verdict)",
                r.headline()
            )
        }
        _ => String::new(),
    }
}

/// The end-of-campaign summary: per headline metric, each case's mean, spread and verdict.
pub fn verdicts_text(view: &CampaignView) -> String {
    let mut s = format!(
        "\ncampaign {}: {} cases, baseline {:?}, ratios of {}\n",
        view.name,
        view.cases.len(),
        view.baseline,
        view.statistic.plural()
    );
    // A metric only baselines have compares nothing (a raw stand-in's IOPS in a database
    // campaign).
    let shown = view
        .metrics
        .iter()
        .filter(|m| HEADLINE.contains(&m.key.as_str()))
        .filter(|m| m.cases.iter().any(|c| !view.is_baseline(&c.case)))
        .take(4);
    for m in shown {
        let _ = writeln!(s, "\n{} ({}):", m.label, m.unit);
        for c in &m.cases {
            let d = &c.describe;
            let _ = writeln!(
                s,
                "  {:<28} n={:<3} mean {:>10}  median {:>10}  trimmed {:>10}  CV {:>5}  {}",
                c.case,
                d.n,
                fmt_num(d.mean),
                fmt_num(d.median),
                fmt_num(d.trimmed_mean),
                d.cv.map_or("-".into(), |v| format!("{:.1}%", v * 100.0)),
                judgement(view, c)
            );
        }
    }
    limits_text(&mut s, view);
    for w in &view.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}
