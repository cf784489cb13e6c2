//! The results table of the campaign report: per metric and case, the descriptive figures,
//! the interval, the outlier flags, the headline ratio to the baseline (of means or of
//! trimmed means, as the campaign's statistic says, and named so) and the verdict sentence; and
//! the colour swatch that names a case there and in the run details.

use super::cases::case_index;
use crate::svg::page::{colour, esc};
use iogauge_campaign::{CampaignView, MetricCase, MetricView};
use iogauge_stats::compare::{Statistic, Verdict};
use std::fmt::Write as _;

/// A colour swatch for case `name`, matching its bars and lines.
pub(super) fn swatch(out: &mut String, view: &CampaignView, name: &str) {
    let _ = write!(
        out,
        "<span class=\"sw\" style=\"background:{}\"></span>",
        colour(case_index(view, name))
    );
}

/// A figure for a table: four significant digits (thousands grouped with commas above
/// 1000), trailing zeros dropped; a dash when not finite.
pub(super) fn val(out: &mut String, x: f64) {
    if !x.is_finite() {
        out.push('—');
        return;
    }
    let a = x.abs();
    if a >= 999.5 {
        let digits = format!("{:.0}", a);
        if x < 0.0 {
            out.push('-');
        }
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        return;
    }
    let d = if a == 0.0 {
        0
    } else {
        (3 - a.log10().floor() as i32).clamp(0, 9) as usize
    };
    let s = format!("{x:.d$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    out.push_str(if s == "-0" { "0" } else { s });
}

/// A ratio: two decimals, two significant digits below 0.1.
fn times(out: &mut String, x: f64) {
    if !x.is_finite() {
        out.push('—');
    } else if x > 0.0 && x < 0.1 {
        let d = (-x.log10()).ceil() as usize + 1;
        let _ = write!(out, "{x:.d$}");
    } else {
        let _ = write!(out, "{x:.2}");
    }
}

/// The CSS class of a verdict: better, worse, same (within noise) or few (withheld).
fn verdict_class(c: &MetricCase, higher_is_better: bool) -> &'static str {
    match c.ratio.as_ref().map(Verdict::of) {
        Some(Verdict::Different { ratio, .. }) if (ratio > 1.0) == higher_is_better => "better",
        Some(Verdict::Different { .. }) => "worse",
        Some(Verdict::NoDifference { .. }) => "same",
        _ => "few",
    }
}

/// The table's columns (HTML); the ratio's header names the campaign's statistic.
fn columns(st: Statistic) -> [&'static str; 13] {
    [
        "case",
        "n",
        "mean",
        "median",
        "stddev",
        "CV",
        "min",
        "max",
        "trimmed",
        "95% CI of mean",
        "outliers",
        // Two lines, so the header is no wider than its figures and leaves the verdict room.
        match st {
            Statistic::Mean => "ratio (95% CI)<br><span class=\"u\">of means</span>",
            Statistic::Trimmed => "ratio (95% CI)<br><span class=\"u\">of trimmed means</span>",
        },
        "verdict",
    ]
}

/// The note under the heading: how each figure is made, and what the ratio divides.
fn note(st: Statistic) -> &'static str {
    match st {
        Statistic::Mean => "ratio = case mean ÷ baseline mean (the campaign's statistic = \"mean\"), and the verdict reads its interval.",
        Statistic::Trimmed => "ratio = case trimmed mean ÷ baseline trimmed mean (the campaign's statistic = \"trimmed\"), its interval from the trimmed means of the resamples, and the verdict reads that interval.",
    }
}

pub(super) fn results(out: &mut String, view: &CampaignView) {
    let _ = writeln!(
        out,
        "<h2 id=\"results\">Results</h2>\n<p class=\"note\">Per metric and case, over the measured repetitions. Trimmed mean drops the highest and the lowest run; the 95% intervals are percentile bootstraps; outliers (modified z-score above 3.5) are flagged, never removed; {}</p>",
        note(view.statistic)
    );
    if view.metrics.is_empty() {
        out.push_str("<p class=\"note\">No metric was recorded by any run.</p>\n");
        return;
    }
    let columns = columns(view.statistic);
    out.push_str("<div class=\"tw\"><table class=\"res\"><thead><tr>");
    for (i, c) in columns.iter().enumerate() {
        let class = if i == 0 || i == columns.len() - 1 {
            " class=\"l\""
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{c}</th>");
    }
    out.push_str("</tr></thead>\n");
    for m in &view.metrics {
        let _ = write!(
            out,
            "<tbody><tr class=\"mh\"><th colspan=\"{}\">",
            columns.len()
        );
        esc(out, &m.label);
        out.push_str(" <span class=\"u\">(");
        if m.unit != m.label {
            esc(out, &m.unit);
            out.push_str("; ");
        }
        out.push_str(if m.higher_is_better {
            "higher is better)"
        } else {
            "lower is better)"
        });
        out.push_str("</span></th></tr>\n");
        for c in &m.cases {
            result_row(out, view, m, c);
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table></div>\n");
}

fn result_row(out: &mut String, view: &CampaignView, m: &MetricView, c: &MetricCase) {
    let d = &c.describe;
    out.push_str("<tr><td class=\"l\">");
    swatch(out, view, &c.case);
    esc(out, &c.case);
    let is_base = view.is_baseline(&c.case);
    if is_base {
        out.push_str("<span class=\"tag\">baseline</span>");
    }
    let _ = write!(out, "</td><td>{}</td>", d.n);
    for x in [d.mean, d.median] {
        out.push_str("<td>");
        val(out, x);
        out.push_str("</td>");
    }
    out.push_str("<td>");
    match d.stddev {
        Some(s) => val(out, s),
        None => out.push('—'),
    }
    out.push_str("</td><td>");
    match d.cv.filter(|x| x.is_finite()) {
        Some(cv) => {
            let _ = write!(out, "{:.1}%", cv * 100.0);
        }
        None => out.push('—'),
    }
    out.push_str("</td>");
    for x in [d.min, d.max, d.trimmed_mean] {
        out.push_str("<td>");
        val(out, x);
        out.push_str("</td>");
    }
    out.push_str("<td>");
    match d.ci95 {
        Some(ci) => {
            val(out, ci.lo);
            out.push('–');
            val(out, ci.hi);
        }
        None => out.push('—'),
    }
    out.push_str("</td><td>");
    if d.outliers.is_empty() {
        out.push('—');
    } else {
        // The run numbers in the cell, their values in the tooltip.
        out.push_str("<span class=\"flag\" title=\"modified z-score above 3.5:");
        for i in &d.outliers {
            let _ = write!(out, " #{} = ", i + 1);
            val(out, c.samples.get(*i).copied().unwrap_or(f64::NAN));
        }
        out.push_str("\">⚑");
        for (k, i) in d.outliers.iter().enumerate() {
            let sep = if k > 0 { ", " } else { " " };
            let _ = write!(out, "{sep}#{}", i + 1);
        }
        out.push_str("</span>");
    }
    out.push_str("</td><td>");
    match &c.ratio {
        Some(r) => {
            times(out, r.headline());
            out.push('×');
            if let Some(ci) = r.headline_ci() {
                out.push_str("<span class=\"ci\">");
                times(out, ci.lo);
                out.push('–');
                times(out, ci.hi);
                out.push_str("</span>");
            }
        }
        None if is_base => out.push_str("1×"),
        None => out.push('—'),
    }
    let _ = write!(
        out,
        "</td><td class=\"v {}\">",
        verdict_class(c, m.higher_is_better)
    );
    match &c.verdict {
        Some(v) => esc(out, v),
        None if is_base => out.push_str("<span class=\"u\">baseline</span>"),
        None => out.push('—'),
    }
    out.push_str("</td></tr>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_figures_have_four_significant_digits() {
        for (x, want) in [
            (45231.4, "45,231"),
            (1234567.0, "1,234,567"),
            (-2500.0, "-2,500"),
            (123.45, "123.5"),
            (0.5, "0.5"),
            (0.012345, "0.01235"),
            (0.0, "0"),
            (-0.00001, "-0.00001"),
            (f64::NAN, "—"),
            (f64::NEG_INFINITY, "—"),
        ] {
            let mut s = String::new();
            val(&mut s, x);
            assert_eq!(s, want, "{x}");
        }
        let mut s = String::new();
        times(&mut s, 0.0123);
        assert_eq!(s, "0.012");
    }
}
