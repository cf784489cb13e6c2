//! `export --relative`: a campaign's Markdown, CSV and JSON with every figure a ratio to its
//! baseline case (= 1), made from [`iogauge_campaign::RelativeView`] alone, so no absolute
//! figure (IOPS, MiB/s, ms, counts) can slip in. A ratio whose reference lacks the metric or
//! has 0 in it is "-" in Markdown, empty in CSV (as every missing CSV figure) and null in JSON.

use super::md::{code, text as cell};
use super::tables::environment;
use iogauge_campaign::{relative, CampaignView, RelativeFigure, RelativeView};
use iogauge_stats::compare::Statistic;
use std::fmt::Write as _;

/// The sentence every relative output opens with: what the figures are relative to.
pub(super) fn relative_note(r: &RelativeView) -> String {
    let own = r.cases.iter().any(|c| c.relative_to != r.relative_to);
    let what = match r.statistic {
        Statistic::Mean => "mean",
        Statistic::Trimmed => "trimmed mean (highest and lowest run dropped)",
    };
    let to = if own {
        "each case's own baseline (column \"relative to\"; a baseline = 1.000)".to_string()
    } else {
        format!("case {} ({} = 1.000)", r.relative_to, r.relative_to)
    };
    format!(
        "Figures are relative to {to}: each ratio is a case's {what} ÷ the reference's, each run is divided by the reference's {what}. No absolute figure is shown; \"-\" where the reference lacks the metric or has 0 in it."
    )
}

/// A ratio to 3 decimals (3 significant digits below 0.1); "-" when there is none.
pub(super) fn rel(x: Option<f64>) -> String {
    match x.filter(|x| x.is_finite()) {
        None => "-".into(),
        Some(x) if x > 0.0 && x < 0.1 => {
            let d = (-x.log10()).ceil() as usize + 2;
            format!("{x:.d$}")
        }
        Some(x) => format!("{x:.3}"),
    }
}

/// The 95 % interval of a figure, "lo–hi", or "-".
/// Each run's ratio, comma-separated; `-` without runs.
pub(super) fn runs_text(f: &RelativeFigure) -> String {
    let runs: Vec<String> = f.runs.iter().map(|(_, x)| rel(Some(*x))).collect();
    if runs.is_empty() {
        "-".into()
    } else {
        runs.join(", ")
    }
}

pub(super) fn rel_ci(f: &RelativeFigure) -> String {
    match (f.ratio, f.ci95) {
        (Some(_), Some(ci)) => format!("{}–{}", rel(Some(ci.lo)), rel(Some(ci.hi))),
        _ => "-".into(),
    }
}

/// Markdown: the note, the cases, one table of ratios per metric (each run's too), the
/// environment and the campaign file.
pub fn campaign_markdown_relative(view: &CampaignView) -> String {
    let r = relative(view);
    let mut s = String::new();
    let _ = writeln!(s, "# Campaign {} (relative)\n", cell(&r.name));
    let _ = writeln!(s, "{}\n", cell(&relative_note(&r)));
    let _ = writeln!(
        s,
        "`iogauge {}`, {} cases × {} repetitions{}.\n",
        r.command,
        r.cases.len(),
        r.repeat,
        if r.smoke { ", smoke scale" } else { "" }
    );
    let _ = writeln!(
        s,
        "| case | relative to | variables | measured runs | reads | command line |"
    );
    let _ = writeln!(s, "|---|---|---|--:|--:|---|");
    for c in &r.cases {
        let vars: Vec<String> = c.vars.iter().map(|(k, x)| format!("{k}={x}")).collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            cell(&c.name),
            cell(&c.relative_to),
            cell(&vars.join(", ")),
            c.measured,
            c.read_share
                .map_or("-".into(), |x| format!("{:.0}%", x * 100.0)),
            code(&c.args.join(" "))
        );
    }
    s.push('\n');
    for m in &r.metrics {
        let _ = writeln!(
            s,
            "## {} ({} is better)\n",
            m.label,
            if m.higher_is_better {
                "higher"
            } else {
                "lower"
            }
        );
        let _ = writeln!(
            s,
            "| case | relative to | n | ratio | 95% CI | each run | verdict |"
        );
        let _ = writeln!(s, "|---|---|--:|--:|--:|---|---|");
        for f in &m.cases {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} |",
                cell(&f.case),
                cell(&f.relative_to),
                f.n,
                rel(f.ratio),
                rel_ci(f),
                runs_text(f),
                cell(f.verdict.as_deref().unwrap_or("-"))
            );
        }
        s.push('\n');
    }
    let _ = writeln!(s, "Findings, warnings, latency curves and the runs' time series are left out: they quote absolute figures.\n");
    environment(&mut s, view);
    s
}

/// The relative CSV's header.
const CSV_HEADER: [&str; 11] = [
    "campaign",
    "case",
    "relative_to",
    "metric",
    "n",
    "ratio",
    "ratio_lo",
    "ratio_hi",
    "statistic",
    "runs",
    "verdict",
];

/// CSV: one row per metric and case, `CSV_HEADER`'s columns: the headline ratio to
/// `relative_to` (exactly 1 for the reference itself) with its 95 % interval, and `runs`,
/// each run divided by the reference's statistic, separated by spaces. Empty where there is
/// no figure.
pub fn campaign_csv_relative(view: &CampaignView) -> String {
    let r = relative(view);
    let opt = |x: Option<f64>| {
        x.filter(|x| x.is_finite())
            .map_or(String::new(), |x| x.to_string())
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_HEADER)
        .expect("writing CSV to memory cannot fail");
    for m in &r.metrics {
        for f in &m.cases {
            let runs: Vec<String> = f.runs.iter().map(|(_, x)| x.to_string()).collect();
            let ci = f.ratio.and(f.ci95);
            w.write_record([
                r.name.clone(),
                f.case.clone(),
                f.relative_to.clone(),
                m.key.clone(),
                f.n.to_string(),
                opt(f.ratio),
                opt(ci.map(|c| c.lo)),
                opt(ci.map(|c| c.hi)),
                r.statistic.name().to_string(),
                runs.join(" "),
                f.verdict.clone().unwrap_or_default(),
            ])
            .expect("writing CSV to memory cannot fail");
        }
    }
    let bytes = w.into_inner().expect("flushing CSV to memory cannot fail");
    String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8")
}

/// The [`RelativeView`] as JSON.
pub fn campaign_json_relative(view: &CampaignView) -> String {
    let mut s =
        serde_json::to_string_pretty(&relative(view)).expect("RelativeView always serialises");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_print_to_three_decimals() {
        for (x, want) in [
            (Some(1.0), "1.000"),
            (Some(0.4567), "0.457"),
            (Some(12.3456), "12.346"),
            (Some(0.01234), "0.0123"),
            (None, "-"),
            (Some(f64::NAN), "-"),
        ] {
            assert_eq!(rel(x), want, "{x:?}");
        }
    }
}
