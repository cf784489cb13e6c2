//! The self-contained HTML report of a campaign: one file with inline CSS and hand-written
//! inline SVG, no script and nothing fetched from the network, so it can be mailed, archived
//! or opened offline. Reads only the [`CampaignView`]; the campaign's own charts are in
//! `bars.rs`, `cases.rs` and `run_chart.rs`, drawn with the toolkit of `crate::svg`.

use super::html_table::{results, swatch, val};
use super::limits::limits_html;
use super::{bars, cases, run_chart};
use crate::svg::aas::aas;
use crate::svg::page::{close_page, esc, open_page};
use iogauge_campaign::{CampaignView, CaseView, RunDigest};
use iogauge_stats::compare::Statistic;
use std::fmt::Write as _;

/// The whole report as one HTML document.
pub fn campaign_html(view: &CampaignView) -> String {
    let runs: usize = view.cases.iter().map(|c| c.runs.len()).sum();
    let mut out = String::with_capacity(64 * 1024 + runs * 24 * 1024 + view.file.len());
    open_page(&mut out, &format!("{} — iogauge campaign", view.name));
    header(&mut out, view, runs);
    results(&mut out, view);
    limits_html(&mut out, view);
    metric_charts(&mut out, view);
    latency(&mut out, view);
    rw_section(&mut out, view);
    run_details(&mut out, view);
    file_and_close(&mut out, view);
    out
}

/// Each case's share of reads, with a tick per run.
pub(super) fn rw_section(out: &mut String, view: &CampaignView) {
    out.push_str("<h2 id=\"rw\">Read : write mix</h2>\n<p class=\"note\">Mean share of reads among the workload's I/Os over each case's runs; a tick marks each run.</p>\n");
    cases::rw(out, view);
}

/// The campaign file as run, the environment, and the page's end.
pub(super) fn file_and_close(out: &mut String, view: &CampaignView) {
    out.push_str("<h2 id=\"file\">Campaign file</h2>\n<pre class=\"file\">");
    esc(out, &view.file);
    out.push_str("</pre>\n");
    environment(out, view);
    close_page(out);
}

fn header(out: &mut String, view: &CampaignView, runs: usize) {
    out.push_str("<h1>");
    esc(out, &view.name);
    out.push_str("</h1>\n<p class=\"sum\"><b>iogauge ");
    esc(out, &view.command);
    let _ = write!(
        out,
        "</b> · {} case{} × {} repetition{} · {} run{} measured · {} · baseline <b>",
        view.cases.len(),
        plural(view.cases.len()),
        view.repeat,
        plural(view.repeat as usize),
        runs,
        plural(runs),
        if view.smoke {
            "<span class=\"tag warn-tag\">smoke scale</span>"
        } else {
            "full scale"
        }
    );
    esc(out, &view.baseline);
    let _ = writeln!(
        out,
        "</b> · ratios of {}</p>",
        match view.statistic {
            Statistic::Mean => "means",
            Statistic::Trimmed => "trimmed means",
        }
    );
    if !view.warnings.is_empty() {
        out.push_str("<ul class=\"warn\">");
        for w in &view.warnings {
            out.push_str("<li>");
            esc(out, w);
            out.push_str("</li>");
        }
        out.push_str("</ul>\n");
    }
    out.push_str(
        "<nav><a href=\"#results\">Results</a><a href=\"#charts\">Charts</a>\
         <a href=\"#latency\">Latency</a><a href=\"#rw\">Read : write</a>\
         <a href=\"#runs\">Runs</a><a href=\"#file\">Campaign file</a>\
         <a href=\"#env\">Environment</a></nav>\n",
    );
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn metric_charts(out: &mut String, view: &CampaignView) {
    let _ = writeln!(
        out,
        "<h2 id=\"charts\">Charts by metric</h2>\n<p class=\"note\">Left: mean per case with its 95% interval, each run a dot (outliers ×). Right: {} Hover a mark for its value.</p>",
        match view.statistic {
            Statistic::Mean => "the ratio of means to the baseline (= 1, dashed) with its 95% interval, each run divided by the baseline mean.",
            Statistic::Trimmed => "the ratio of trimmed means (each case's highest and lowest run dropped) to the baseline (= 1, dashed) with its 95% interval, each run divided by the baseline's trimmed mean.",
        }
    );
    for m in &view.metrics {
        out.push_str("<h3>");
        esc(out, &m.label);
        if m.unit != m.label {
            out.push_str(" <span class=\"u\">");
            esc(out, &m.unit);
            out.push_str("</span>");
        }
        out.push_str("</h3>\n<div class=\"charts\">");
        bars::bars(out, view, m);
        if bars::has_ratios(m) {
            bars::normalised(out, view, m);
        } else {
            out.push_str("<p class=\"note\">No normalised chart: the baseline ");
            esc(out, &view.baseline);
            out.push_str(" has no runs with this metric, or it is the only case.</p>");
        }
        out.push_str("</div>\n");
    }
}

fn latency(out: &mut String, view: &CampaignView) {
    out.push_str("<h2 id=\"latency\">Latency percentiles</h2>\n");
    let labels = cases::lat_labels(view);
    if labels.is_empty() {
        out.push_str("<p class=\"note\">No latency histograms in these runs.</p>\n");
        return;
    }
    out.push_str("<p class=\"note\">From the histograms of all runs of a case merged. The x axis is spaced by nines (p90, p99, p99.9 …), the latency axis is logarithmic.</p>\n<div class=\"charts\">");
    for l in labels {
        cases::latcurve(out, view, l);
    }
    out.push_str("</div>\n");
}

fn run_details(out: &mut String, view: &CampaignView) {
    out.push_str("<h2 id=\"runs\">Runs</h2>\n<p class=\"note\">Each run over time: workload IOPS and p99 latency above what the disks did. Grey: ramp-up (left out of the figures); green: the steady-state window.</p>\n");
    for c in &view.cases {
        case_details(out, view, c);
    }
}

fn case_details(out: &mut String, view: &CampaignView, c: &CaseView) {
    out.push_str("<details><summary>");
    swatch(out, view, &c.name);
    esc(out, &c.name);
    let _ = write!(
        out,
        " <span class=\"u\">— {} run{}",
        c.runs.len(),
        plural(c.runs.len())
    );
    for (i, (k, v)) in c.vars.iter().enumerate() {
        out.push_str(if i == 0 { " · " } else { ", " });
        esc(out, k);
        out.push('=');
        esc(out, v);
    }
    out.push_str("</span></summary>\n");
    if !c.args.is_empty() {
        out.push_str("<p class=\"cmd\"><code>");
        esc(out, &c.args.join(" "));
        out.push_str("</code></p>\n");
    }
    if c.runs.is_empty() {
        out.push_str("<p class=\"note\">No measured runs.</p>\n");
    }
    for r in &c.runs {
        run(out, view, r);
    }
    out.push_str("</details>\n");
}

fn run(out: &mut String, view: &CampaignView, r: &RunDigest) {
    let _ = write!(
        out,
        "<div class=\"run\"><h4>repetition {} <span class=\"u\">· run #{} · ",
        r.rep, r.id
    );
    esc(out, &r.kind);
    out.push_str(" · started ");
    esc(out, &r.started_at);
    match (r.steady_from_s, r.steady_left_s) {
        (Some(a), Some(b)) => {
            let _ = write!(out, " · steady from {a:.0} s, left at {b:.0} s");
        }
        (Some(a), None) => {
            let _ = write!(out, " · steady from {a:.0} s");
        }
        _ => out.push_str(" · steady state not reached"),
    }
    out.push_str("</span>");
    if r.interrupted {
        out.push_str("<span class=\"tag warn-tag\">interrupted</span>");
    }
    out.push_str("</h4>\n<p class=\"figs\">");
    let mut first = true;
    for m in view.metrics.iter() {
        if let Some(x) = r.metrics.get(&m.key) {
            out.push_str(if first { "" } else { " · " });
            first = false;
            esc(out, &m.label);
            out.push_str(" <b>");
            val(out, *x);
            out.push_str("</b>");
            if m.unit != m.label {
                out.push(' ');
                esc(out, &m.unit);
            }
        }
    }
    out.push_str("</p>\n");
    if !r.warnings.is_empty() {
        out.push_str("<ul class=\"warn\">");
        for w in &r.warnings {
            out.push_str("<li>");
            esc(out, w);
            out.push_str("</li>");
        }
        out.push_str("</ul>\n");
    }
    run_chart::series(out, r);
    if !r.aas.is_empty() {
        aas(out, r);
    }
    out.push_str("</div>\n");
}

pub(super) fn environment(out: &mut String, view: &CampaignView) {
    let e = &view.environment;
    out.push_str("<h2 id=\"env\">Environment</h2>\n<table class=\"env\">");
    let row = |out: &mut String, k: &str, v: &str| {
        let _ = write!(out, "<tr><th>{k}</th><td>");
        if v.is_empty() {
            out.push('—');
        } else {
            esc(out, v);
        }
        out.push_str("</td></tr>");
    };
    row(out, "host", &e.host);
    row(out, "kernel", &e.kernel);
    row(out, "iogauge", &e.iogauge_version);
    row(out, "CPUs", &e.cpus.to_string());
    let ram = if e.ram_bytes > 0 {
        format!("{:.1} GiB", e.ram_bytes as f64 / (1u64 << 30) as f64)
    } else {
        String::new()
    };
    row(out, "RAM", &ram);
    out.push_str("<tr><th>targets</th><td>");
    for (i, t) in e.targets.iter().enumerate() {
        if i > 0 {
            out.push_str("<br>");
        }
        esc(out, t);
    }
    if e.targets.is_empty() {
        out.push('—');
    }
    out.push_str("</td></tr>");
    row(out, "devices", &e.devices.join(", "));
    row(out, "first run", e.first_run.as_deref().unwrap_or(""));
    row(out, "last run", e.last_run.as_deref().unwrap_or(""));
    out.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_campaign::{AasPoint, Environment, LatCurve, MetricCase, MetricView, SeriesPoint};
    use iogauge_stats::compare::{Ci, Describe, Ratio};
    use std::collections::BTreeMap;

    fn run(id: i64, series: Vec<SeriesPoint>, aas: Vec<AasPoint>) -> RunDigest {
        RunDigest {
            id,
            rep: 1,
            kind: "run".into(),
            started_at: "2025-01-01T00:00:00Z".into(),
            interrupted: false,
            metrics: BTreeMap::new(),
            series,
            steady_from_s: None,
            steady_left_s: None,
            read_share: None,
            aas,
            warnings: Vec::new(),
            finding: None,
        }
    }

    fn case(name: &str, runs: Vec<RunDigest>, lat_curves: Vec<LatCurve>) -> CaseView {
        CaseView {
            name: name.into(),
            vars: BTreeMap::new(),
            args: Vec::new(),
            runs,
            lat_curves,
            baseline: None,
        }
    }

    /// A metric over `cases`, each with its samples; ratios against the first case.
    fn metric(key: &str, cases: &[(&str, &[f64])]) -> MetricView {
        let base = cases[0].1;
        MetricView {
            key: key.into(),
            label: key.into(),
            unit: "IOPS".into(),
            higher_is_better: true,
            cases: cases
                .iter()
                .enumerate()
                .map(|(i, (name, x))| MetricCase {
                    case: name.to_string(),
                    samples: x.to_vec(),
                    describe: Describe::of(x).unwrap(),
                    ratio: (i > 0).then(|| Ratio::of(x, base, Statistic::Mean, 1).unwrap()),
                    verdict: None,
                })
                .collect(),
        }
    }

    fn view(cases: Vec<CaseView>, metrics: Vec<MetricView>) -> CampaignView {
        CampaignView {
            schema: 1,
            name: "t".into(),
            file: String::new(),
            command: "run".into(),
            baseline: cases.first().map_or(String::new(), |c| c.name.clone()),
            statistic: Statistic::Mean,
            smoke: true,
            repeat: 1,
            environment: Environment::default(),
            cases,
            metrics,
            warnings: Vec::new(),
        }
    }

    fn assert_finite(html: &str) {
        for bad in ["NaN", "inf"] {
            if let Some(i) = html.find(bad) {
                let ctx = &html[i.saturating_sub(120)..(i + 40).min(html.len())];
                panic!("{bad} in the output: …{ctx}…");
            }
        }
    }

    fn count(html: &str, kind: &str) -> usize {
        html.matches(&format!("data-chart=\"{kind}:")).count()
    }

    #[test]
    fn empty_campaign_renders() {
        let html = campaign_html(&view(Vec::new(), Vec::new()));
        assert_finite(&html);
        assert_eq!(
            html.matches("class=\"chart\"").count(),
            1,
            "only the rw chart"
        );
        assert!(html.contains("No metric was recorded"));
        assert!(html.ends_with("</html>\n"));
    }

    #[test]
    fn edge_cases_render_without_nan_or_infinity() {
        let all_none = SeriesPoint::default();
        let odd = SeriesPoint {
            t_s: f64::NAN,
            dur_s: -1.0,
            ramp: true,
            read_iops: f64::INFINITY,
            lat_p99_us: Some(f64::NAN),
            dev_iops: Some(f64::NEG_INFINITY),
            ..SeriesPoint::default()
        };
        let mut weird = run(2, vec![all_none.clone(), odd], Vec::new());
        weird.steady_from_s = Some(1e9);
        weird.steady_left_s = Some(-5.0);
        weird.read_share = Some(f64::NAN);
        let zero_aas = AasPoint {
            t_s: 0.0,
            events: BTreeMap::from([("CPU".into(), 0.0), ("IO".into(), f64::NAN)]),
        };
        let one_aas = AasPoint {
            t_s: 3.0,
            events: BTreeMap::from([("CPU".into(), 2.0)]),
        };
        let curves = vec![
            LatCurve {
                label: "read".into(),
                points: Vec::new(),
            },
            LatCurve {
                label: "write".into(),
                points: vec![(100.0, 5.0), (50.0, 0.0), (99.0, f64::NAN), (-1.0, 3.0)],
            },
        ];
        let cases = vec![
            case("a", vec![run(1, Vec::new(), Vec::new())], curves),
            case(
                "b",
                vec![weird, run(3, vec![all_none], vec![zero_aas])],
                Vec::new(),
            ),
            case("c", vec![run(4, Vec::new(), vec![one_aas])], Vec::new()),
        ];
        let single = metric("single", &[("a", &[5.0]), ("b", &[7.0])]);
        let mut no_base = metric("no_base", &[("b", &[1.0, 2.0])]);
        no_base.cases[0].ratio = None;
        let mut broken = metric("broken", &[("a", &[1.0, 2.0]), ("c", &[0.0, 0.0])]);
        broken.cases[1].samples = vec![f64::NAN, f64::INFINITY];
        let d = &mut broken.cases[1].describe;
        (d.mean, d.median, d.min, d.max) = (f64::NAN, f64::INFINITY, f64::NAN, f64::NAN);
        (d.stddev, d.cv) = (Some(f64::NAN), Some(f64::INFINITY));
        d.ci95 = Some(Ci {
            lo: f64::NEG_INFINITY,
            hi: f64::NAN,
        });
        d.outliers = vec![0, 7];
        if let Some(r) = broken.cases[1].ratio.as_mut() {
            (r.ratio, r.normalised) = (f64::NAN, vec![f64::INFINITY]);
        }
        let html = campaign_html(&view(cases, vec![single, no_base, broken]));
        assert_finite(&html);
        assert_eq!(count(&html, "bars"), 3);
        assert_eq!(
            count(&html, "normalised"),
            2,
            "no_base has no ratio to show"
        );
        assert_eq!(count(&html, "latcurve"), 2);
        assert_eq!(count(&html, "series"), 4);
        assert_eq!(count(&html, "aas"), 2);
        assert!(html.contains("no intervals recorded"));
        assert!(html.contains("no active sessions sampled"));
        assert!(html.contains("no latency recorded"));
    }

    #[test]
    fn text_from_the_view_is_escaped() {
        let mut r = run(1, Vec::new(), Vec::new());
        r.warnings = vec!["<b>w</b>".into()];
        let mut c = case("x<y>&\"z\"", vec![r], Vec::new());
        c.vars.insert("k'".into(), "<v>".into());
        c.args = vec!["--name=<a>".into()];
        let mut v = view(
            vec![c],
            vec![metric("m<1>", &[("x<y>&\"z\"", &[1.0, 2.0])])],
        );
        v.name = "<script>alert(1)</script>".into();
        v.file = "</pre><img src=x>".into();
        v.warnings = vec!["<i>careful</i> & co".into()];
        v.environment.targets = vec!["<t>".into()];
        let html = campaign_html(&v);
        for raw in [
            "<script", "<img", "<b>w", "<i>", "<t>", "<v>", "<a>", "x<y>", "m<1>",
        ] {
            assert!(!html.contains(raw), "{raw} left unescaped");
        }
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("data-chart=\"bars:m&lt;1&gt;\""));
        assert!(html.contains("x&lt;y&gt;&amp;&quot;z&quot;"));
        assert!(html.contains("k&#39;=&lt;v&gt;"));
    }
}
