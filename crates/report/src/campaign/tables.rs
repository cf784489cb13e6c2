//! Markdown, CSV and JSON exports of a campaign: the same tables as the HTML report.
//!
//! Markdown is for people (figures to 4 significant digits, CV in percent); CSV is for
//! spreadsheets and scripts (full precision, CV as a fraction, empty where a figure does not
//! exist, quoted as RFC 4180 asks, `\n` line ends as the other CSV iogauge writes). Both
//! show the campaign's headline ratio (of means or of trimmed means) and say which it is.

use super::limits::{case_finding, limits_markdown, time_of};
use super::md::{code, text as cell};
use crate::text::findings::finding_line;
use iogauge_campaign::{CampaignView, CaseView, MetricCase, MetricView, RunDigest};
use iogauge_stats::compare::Statistic;
use std::fmt::Write as _;

/// Metrics shown per run in the runs table, when the campaign has them (the rest are in the
/// per-metric tables).
const RUN_COLUMNS: &[&str] = &[
    "iops",
    "mbps",
    "read_lat_p99_ms",
    "write_lat_p99_ms",
    "max_iops",
    "latency_ms",
    "max_mbps",
    "max_pmbps",
    "ops_s",
    "db_physical_reads_s",
    "db_avg_read_ms",
    "op_read_lat_p99_ms",
    "op_update_lat_p99_ms",
    "device_iops",
];

/// Markdown: summary (cases, headline verdicts, warnings), one table per metric, the runs,
/// the environment.
pub fn campaign_markdown(view: &CampaignView) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Campaign {}\n", cell(&view.name));
    summary(&mut s, view);
    limits_markdown(&mut s, view);
    for m in &view.metrics {
        metric_table(&mut s, m, view);
    }
    runs_table(&mut s, view);
    environment(&mut s, view);
    s
}

fn summary(s: &mut String, v: &CampaignView) {
    let measured: usize = v
        .cases
        .iter()
        .map(|c| c.runs.iter().filter(|r| !r.interrupted).count())
        .sum();
    let _ = writeln!(s, "## Summary\n");
    let _ = writeln!(
        s,
        "`iogauge {}`, {} case{} × {} repetition{}, {measured} measured run{}; baseline **{}**; {}.{}\n",
        v.command,
        v.cases.len(),
        plural(v.cases.len()),
        v.repeat,
        plural(v.repeat as usize),
        plural(measured),
        cell(&v.baseline),
        ratios_of(v.statistic),
        if v.smoke {
            " Smoke scale: the runs check the campaign, their figures are not representative."
        } else {
            ""
        }
    );
    let _ = writeln!(s, "| case | variables | runs | command line |");
    let _ = writeln!(s, "|---|---|--:|---|");
    for c in &v.cases {
        let vars: Vec<String> = c.vars.iter().map(|(k, x)| format!("{k}={x}")).collect();
        let _ = writeln!(
            s,
            "| {}{} | {} | {} | {} |",
            cell(&c.name),
            if v.is_baseline(&c.name) {
                " (baseline)"
            } else {
                ""
            },
            cell(&vars.join(", ")),
            runs_count(c, v.repeat),
            code(&c.args.join(" "))
        );
    }
    // The first metric in catalogue order is the command's headline figure.
    if let Some(m) = v.metrics.first() {
        let _ = writeln!(s, "\n{} against {}:\n", heading(m), cell(&v.baseline));
        for mc in m.cases.iter().filter(|mc| !v.is_baseline(&mc.case)) {
            let base = v.baseline_of(&mc.case).unwrap_or(&v.baseline);
            let _ = writeln!(s, "- {}", cell(&verdict_text(mc, base)));
        }
    }
    if !v.warnings.is_empty() {
        let _ = writeln!(s, "\n### Warnings\n");
        for w in &v.warnings {
            let _ = writeln!(s, "- {}", cell(w));
        }
    }
    s.push('\n');
}

/// "3", or "2 of 3" when short, with interrupted runs counted apart.
fn runs_count(c: &CaseView, repeat: u32) -> String {
    let n = c.runs.iter().filter(|r| !r.interrupted).count();
    let int = c.runs.len() - n;
    let mut t = if n < repeat as usize {
        format!("{n} of {repeat}")
    } else {
        n.to_string()
    };
    if int > 0 {
        let _ = write!(t, " (+{int} interrupted)");
    }
    t
}

/// The verdict, or why there is none; names the case either way.
fn verdict_text(mc: &MetricCase, baseline: &str) -> String {
    match (&mc.verdict, &mc.ratio) {
        (Some(v), _) => v.clone(),
        (None, Some(r)) => format!(
            "{} is {}× {baseline}, too few repetitions for a verdict (n={} and {})",
            mc.case,
            ratio_num(r.headline()),
            r.n_case,
            r.n_baseline
        ),
        (None, None) => format!(
            "{} is not compared: {baseline} lacks this metric or has a 0 in it",
            mc.case
        ),
    }
}

fn metric_table(s: &mut String, m: &MetricView, view: &CampaignView) {
    let _ = writeln!(
        s,
        "## {}: {}\n",
        heading(m),
        if m.higher_is_better {
            "higher is better"
        } else {
            "lower is better"
        }
    );
    let _ = writeln!(s, "| case | n | mean | median | stddev | CV | min | max | trimmed mean | 95% CI | ratio of {} (95% CI) | verdict |", statistic_plural(view.statistic));
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|");
    for mc in &m.cases {
        let d = &mc.describe;
        let ratio = match &mc.ratio {
            _ if view.is_baseline(&mc.case) => "1.00 (baseline)".to_string(),
            Some(r) => match r.headline_ci() {
                Some(ci) => format!(
                    "{} ({}–{})",
                    ratio_num(r.headline()),
                    ratio_num(ci.lo),
                    ratio_num(ci.hi)
                ),
                None => ratio_num(r.headline()),
            },
            None => "–".into(),
        };
        let verdict = match view.baseline_of(&mc.case) {
            _ if view.is_baseline(&mc.case) => "–".to_string(),
            base => cell(&verdict_text(mc, base.unwrap_or(&view.baseline))),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {ratio} | {verdict} |",
            cell(&mc.case),
            d.n,
            num(d.mean),
            num(d.median),
            d.stddev.map_or("–".into(), num),
            d.cv.map_or("–".into(), |cv| format!("{:.1}%", cv * 100.0)),
            num(d.min),
            num(d.max),
            num(d.trimmed_mean),
            d.ci95
                .map_or("–".into(), |ci| format!("{}–{}", num(ci.lo), num(ci.hi))),
        );
    }
    s.push('\n');
}

fn runs_table(s: &mut String, v: &CampaignView) {
    let cols: Vec<&MetricView> = RUN_COLUMNS
        .iter()
        .filter_map(|k| v.metrics.iter().find(|m| m.key == *k))
        .collect();
    let _ = writeln!(s, "## Runs\n");
    let _ = write!(s, "| case | rep | run id | started | status |");
    for m in &cols {
        let _ = write!(s, " {} |", heading(m));
    }
    let _ = write!(s, "\n|---|--:|--:|---|---|");
    s.push_str(&"--:|".repeat(cols.len()));
    s.push('\n');
    for c in &v.cases {
        for r in &c.runs {
            let _ = write!(
                s,
                "| {} | {} | {} | {} | {} |",
                cell(&c.name),
                r.rep,
                r.id,
                cell(&r.started_at),
                status(r)
            );
            for m in &cols {
                let _ = write!(
                    s,
                    " {} |",
                    r.metrics.get(&m.key).map_or("–".into(), |x| num(*x))
                );
            }
            s.push('\n');
        }
    }
    s.push('\n');
}

fn status(r: &RunDigest) -> &'static str {
    if r.interrupted {
        "interrupted"
    } else {
        "complete"
    }
}

pub(super) fn environment(s: &mut String, v: &CampaignView) {
    let e = &v.environment;
    let _ = writeln!(s, "## Environment\n");
    let _ = writeln!(s, "| | |\n|---|---|");
    let rows = [
        ("host", e.host.clone()),
        ("kernel", e.kernel.clone()),
        ("iogauge", e.iogauge_version.clone()),
        ("CPUs", e.cpus.to_string()),
        (
            "RAM",
            format!("{:.1} GiB", e.ram_bytes as f64 / (1u64 << 30) as f64),
        ),
        ("devices", e.devices.join(", ")),
        ("first run", e.first_run.clone().unwrap_or_default()),
        ("last run", e.last_run.clone().unwrap_or_default()),
    ];
    for (k, x) in rows {
        let _ = writeln!(s, "| {k} | {} |", cell(&x));
    }
    if !e.targets.is_empty() {
        let _ = writeln!(s, "\nTargets:\n");
        for t in &e.targets {
            let _ = writeln!(s, "- {}", cell(t));
        }
    }
    if !v.file.is_empty() {
        // A fence longer than any run of backticks in the file, so nothing closes it early.
        let longest = v.file.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat(longest.max(2) + 1);
        let _ = write!(s, "\n### Campaign file\n\n{fence}toml\n{}", v.file);
        if !v.file.ends_with('\n') {
            s.push('\n');
        }
        let _ = writeln!(s, "{fence}");
    }
}

/// "means", "trimmed means": what the campaign's ratios are of.
fn statistic_plural(st: Statistic) -> &'static str {
    match st {
        Statistic::Mean => "means",
        Statistic::Trimmed => "trimmed means",
    }
}

/// The summary's words on the ratios: which statistic they are of, and what trimming drops.
fn ratios_of(st: Statistic) -> &'static str {
    match st {
        Statistic::Mean => "ratios of means",
        Statistic::Trimmed => {
            "ratios of trimmed means (each case's highest and lowest run dropped)"
        }
    }
}

/// "IOPS", "throughput (MiB/s)": the unit only when the label does not already say it.
fn heading(m: &MetricView) -> String {
    if m.label == m.unit {
        m.label.clone()
    } else {
        format!("{} ({})", m.label, m.unit)
    }
}

/// A figure to 4 significant digits (at most 6 decimals), never in exponent form.
fn num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = (3 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{x:.decimals$}")
}

/// A ratio as the verdict sentences print it: two decimals, two significant digits below 0.1.
fn ratio_num(x: f64) -> String {
    if x > 0.0 && x < 0.1 {
        let decimals = (-x.log10()).ceil() as usize + 1;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.2}")
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The CSV header.
const CSV_HEADER: [&str; 24] = [
    "campaign",
    "case",
    "metric",
    "unit",
    "n",
    "mean",
    "median",
    "stddev",
    "cv",
    "min",
    "max",
    "trimmed_mean",
    "ci_lo",
    "ci_hi",
    "ratio",
    "ratio_lo",
    "ratio_hi",
    "trimmed_ratio",
    "trimmed_ratio_lo",
    "trimmed_ratio_hi",
    "statistic",
    "verdict",
    "limit_layer",
    "limit",
];

/// CSV: one row per case and metric (metric order, then case order), with `CSV_HEADER`'s columns.
/// Figures at full precision (`cv` a fraction); empty where there is none (the baseline's
/// ratio, a CI with one repetition, a verdict below 3 repetitions). Both ratios are given,
/// each with its interval: `ratio` of means, `trimmed_ratio` of trimmed means; `statistic`
/// (the campaign's, `mean` or `trimmed`) names the headline, the one the verdict reads.
/// `limit_layer` and `limit` are the case's top finding (its layer and line), empty without.
pub fn campaign_csv(view: &CampaignView) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let opt = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
    w.write_record(CSV_HEADER)
        .expect("writing CSV to memory cannot fail");
    for m in &view.metrics {
        for mc in &m.cases {
            let limit = view
                .cases
                .iter()
                .find(|c| c.name == mc.case)
                .and_then(case_finding);
            let d = &mc.describe;
            let r = mc.ratio.as_ref();
            let record = [
                view.name.clone(),
                mc.case.clone(),
                m.key.clone(),
                m.unit.clone(),
                d.n.to_string(),
                d.mean.to_string(),
                d.median.to_string(),
                opt(d.stddev),
                opt(d.cv),
                d.min.to_string(),
                d.max.to_string(),
                d.trimmed_mean.to_string(),
                opt(d.ci95.map(|c| c.lo)),
                opt(d.ci95.map(|c| c.hi)),
                opt(r.map(|r| r.ratio)),
                opt(r.and_then(|r| r.ci95).map(|c| c.lo)),
                opt(r.and_then(|r| r.ci95).map(|c| c.hi)),
                opt(r.map(|r| r.trimmed_ratio)),
                opt(r.and_then(|r| r.trimmed_ci95).map(|c| c.lo)),
                opt(r.and_then(|r| r.trimmed_ci95).map(|c| c.hi)),
                view.statistic.name().to_string(),
                mc.verdict.clone().unwrap_or_default(),
                limit.map_or(String::new(), |f| layer_key(f.layer)),
                limit.map_or(String::new(), |f| finding_line(f, time_of(view))),
            ];
            w.write_record(&record)
                .expect("writing CSV to memory cannot fail");
        }
    }
    let bytes = w.into_inner().expect("flushing CSV to memory cannot fail");
    String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8")
}

/// A layer as JSON spells it (`os_queue`).
fn layer_key(l: iogauge_model::finding::Layer) -> String {
    serde_json::to_value(l)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The view as JSON.
pub fn campaign_json(view: &CampaignView) -> String {
    let mut s = serde_json::to_string_pretty(view).expect("CampaignView always serialises");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests;
