//! Markdown, CSV and JSON exports of a campaign: the same tables as the HTML report.
//!
//! Markdown is for people (figures to 4 significant digits, CV in percent); CSV is for
//! spreadsheets and scripts (full precision, CV as a fraction, empty where a figure does not
//! exist, quoted as RFC 4180 asks, `\n` line ends as the other CSV iogauge writes).

use iogauge_campaign::{CampaignView, CaseView, MetricCase, MetricView, RunDigest};
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
    let _ = writeln!(s, "# Campaign {}\n", view.name);
    summary(&mut s, view);
    for m in &view.metrics {
        metric_table(&mut s, m, &view.baseline);
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
        "`iogauge {}`, {} case{} × {} repetition{}, {measured} measured run{}; baseline **{}**.{}\n",
        v.command,
        v.cases.len(),
        plural(v.cases.len()),
        v.repeat,
        plural(v.repeat as usize),
        plural(measured),
        cell(&v.baseline),
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
            if c.name == v.baseline {
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
        let _ = writeln!(s, "\n{} against {}:\n", heading(m), v.baseline);
        for mc in m.cases.iter().filter(|mc| mc.case != v.baseline) {
            let _ = writeln!(s, "- {}", verdict_text(mc, &v.baseline));
        }
    }
    if !v.warnings.is_empty() {
        let _ = writeln!(s, "\n### Warnings\n");
        for w in &v.warnings {
            let _ = writeln!(s, "- {w}");
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
            ratio_num(r.ratio),
            r.n_case,
            r.n_baseline
        ),
        (None, None) => format!(
            "{} is not compared: {baseline} lacks this metric or has a 0 in it",
            mc.case
        ),
    }
}

fn metric_table(s: &mut String, m: &MetricView, baseline: &str) {
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
    let _ = writeln!(s, "| case | n | mean | median | stddev | CV | min | max | trimmed mean | 95% CI | ratio (95% CI) | verdict |");
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|");
    for mc in &m.cases {
        let d = &mc.describe;
        let ratio = match &mc.ratio {
            _ if mc.case == baseline => "1.00 (baseline)".to_string(),
            Some(r) => match r.ci95 {
                Some(ci) => format!(
                    "{} ({}–{})",
                    ratio_num(r.ratio),
                    ratio_num(ci.lo),
                    ratio_num(ci.hi)
                ),
                None => ratio_num(r.ratio),
            },
            None => "–".into(),
        };
        let verdict = if mc.case == baseline {
            "–".to_string()
        } else {
            cell(&verdict_text(mc, baseline))
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

fn environment(s: &mut String, v: &CampaignView) {
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
            let _ = writeln!(s, "- {t}");
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

/// Text safe inside a Markdown table cell.
fn cell(t: &str) -> String {
    t.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// Inline code; empty stays empty.
fn code(t: &str) -> String {
    if t.is_empty() {
        String::new()
    } else {
        format!("`{}`", t.replace('`', "'").replace('|', "\\|"))
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
const CSV_HEADER: [&str; 19] = [
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
    "verdict",
];

/// CSV: one row per case and metric (metric order, then case order), with [`CSV_HEADER`].
/// Figures at full precision (`cv` a fraction); empty where there is none (the baseline's
/// ratio, a CI with one repetition, a verdict below 3 repetitions).
pub fn campaign_csv(view: &CampaignView) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let opt = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
    w.write_record(CSV_HEADER)
        .expect("writing CSV to memory cannot fail");
    for m in &view.metrics {
        for mc in &m.cases {
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
                mc.verdict.clone().unwrap_or_default(),
            ];
            w.write_record(&record)
                .expect("writing CSV to memory cannot fail");
        }
    }
    let bytes = w.into_inner().expect("flushing CSV to memory cannot fail");
    String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8")
}

/// The view as JSON.
pub fn campaign_json(view: &CampaignView) -> String {
    let mut s = serde_json::to_string_pretty(view).expect("CampaignView always serialises");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_campaign::{metrics, warnings, Environment};
    use std::collections::BTreeMap;

    fn run(id: i64, rep: u32, iops: f64, p99: f64) -> RunDigest {
        RunDigest {
            id,
            rep,
            kind: "run".into(),
            started_at: format!("2025-03-01T10:00:{id:02}Z"),
            interrupted: false,
            metrics: [("iops", iops), ("read_lat_p99_ms", p99)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            series: Vec::new(),
            steady_from_s: None,
            steady_left_s: None,
            read_share: Some(1.0),
            aas: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn case(name: &str, qd: &str, runs: Vec<RunDigest>) -> CaseView {
        CaseView {
            name: name.into(),
            vars: BTreeMap::from([("qd".to_string(), qd.to_string())]),
            args: vec!["--qd".into(), qd.into(), "--time".into(), "10s".into()],
            runs,
            lat_curves: Vec::new(),
        }
    }

    /// Two cases × 3 repetitions; the second case's name needs quoting in CSV and escaping
    /// in Markdown.
    fn view() -> CampaignView {
        let cases = vec![
            case(
                "qd1",
                "1",
                vec![
                    run(1, 1, 100.0, 2.0),
                    run(2, 2, 110.0, 2.0),
                    run(3, 3, 120.0, 2.0),
                ],
            ),
            case(
                "qd32, \"deep\" | wide",
                "32",
                vec![
                    run(4, 1, 150.0, 1.0),
                    run(5, 2, 160.0, 1.0),
                    run(6, 3, 200.0, 1.0),
                ],
            ),
        ];
        CampaignView {
            schema: iogauge_campaign::SCHEMA,
            name: "qd-sweep".into(),
            file: "name = \"qd-sweep\"\nrepeat = 3\n".into(),
            command: "run".into(),
            baseline: "qd1".into(),
            smoke: false,
            repeat: 3,
            environment: Environment {
                host: "db1".into(),
                kernel: "6.1.0".into(),
                iogauge_version: "0.1.0".into(),
                cpus: 8,
                ram_bytes: 16 << 30,
                targets: vec!["/data/x: ext4 on vda (file, 1.0 GiB)".into()],
                devices: vec!["vda".into()],
                first_run: Some("2025-03-01T10:00:01Z".into()),
                last_run: Some("2025-03-01T10:00:06Z".into()),
            },
            metrics: metrics(&cases, "qd1"),
            warnings: warnings(&cases, 3),
            cases,
        }
    }

    #[test]
    fn markdown_snapshot() {
        let want = r#"# Campaign qd-sweep

## Summary

`iogauge run`, 2 cases × 3 repetitions, 6 measured runs; baseline **qd1**.

| case | variables | runs | command line |
|---|---|--:|---|
| qd1 (baseline) | qd=1 | 3 | `--qd 1 --time 10s` |
| qd32, "deep" \| wide | qd=32 | 3 | `--qd 32 --time 10s` |

IOPS against qd1:

- qd32, "deep" | wide is 1.55× qd1 (95% CI 1.32–1.83), better

### Warnings

- case qd32, "deep" | wide is noisy (coefficient of variation above 10%): iops 15.6%

## IOPS: higher is better

| case | n | mean | median | stddev | CV | min | max | trimmed mean | 95% CI | ratio (95% CI) | verdict |
|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|
| qd1 | 3 | 110.0 | 110.0 | 10.00 | 9.1% | 100.0 | 120.0 | 110.0 | 100.0–120.0 | 1.00 (baseline) | – |
| qd32, "deep" \| wide | 3 | 170.0 | 160.0 | 26.46 | 15.6% | 150.0 | 200.0 | 160.0 | 150.0–200.0 | 1.55 (1.32–1.83) | qd32, "deep" \| wide is 1.55× qd1 (95% CI 1.32–1.83), better |

## read latency p99 (ms): lower is better

| case | n | mean | median | stddev | CV | min | max | trimmed mean | 95% CI | ratio (95% CI) | verdict |
|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|
| qd1 | 3 | 2.000 | 2.000 | 0 | 0.0% | 2.000 | 2.000 | 2.000 | 2.000–2.000 | 1.00 (baseline) | – |
| qd32, "deep" \| wide | 3 | 1.000 | 1.000 | 0 | 0.0% | 1.000 | 1.000 | 1.000 | 1.000–1.000 | 0.50 (0.50–0.50) | qd32, "deep" \| wide is 0.50× qd1 (95% CI 0.50–0.50), better |

## Runs

| case | rep | run id | started | status | IOPS | read latency p99 (ms) |
|---|--:|--:|---|---|--:|--:|
| qd1 | 1 | 1 | 2025-03-01T10:00:01Z | complete | 100.0 | 2.000 |
| qd1 | 2 | 2 | 2025-03-01T10:00:02Z | complete | 110.0 | 2.000 |
| qd1 | 3 | 3 | 2025-03-01T10:00:03Z | complete | 120.0 | 2.000 |
| qd32, "deep" \| wide | 1 | 4 | 2025-03-01T10:00:04Z | complete | 150.0 | 1.000 |
| qd32, "deep" \| wide | 2 | 5 | 2025-03-01T10:00:05Z | complete | 160.0 | 1.000 |
| qd32, "deep" \| wide | 3 | 6 | 2025-03-01T10:00:06Z | complete | 200.0 | 1.000 |

## Environment

| | |
|---|---|
| host | db1 |
| kernel | 6.1.0 |
| iogauge | 0.1.0 |
| CPUs | 8 |
| RAM | 16.0 GiB |
| devices | vda |
| first run | 2025-03-01T10:00:01Z |
| last run | 2025-03-01T10:00:06Z |

Targets:

- /data/x: ext4 on vda (file, 1.0 GiB)

### Campaign file

```toml
name = "qd-sweep"
repeat = 3
```
"#;
        let got = campaign_markdown(&view());
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "line {}", i + 1);
        }
        assert_eq!(got, want);
    }

    #[test]
    fn csv_snapshot_quotes_per_rfc_4180() {
        // The ratio interval comes from the seeded bootstrap (see the Markdown snapshot);
        // the other figures by hand: B's mean 510/3 = 170, s = √700, CV = √700/170,
        // ratio 170/110, trimmed ratio 160/110.
        let want = "\
campaign,case,metric,unit,n,mean,median,stddev,cv,min,max,trimmed_mean,ci_lo,ci_hi,ratio,ratio_lo,ratio_hi,trimmed_ratio,verdict
qd-sweep,qd1,iops,IOPS,3,110,110,10,0.09090909090909091,100,120,110,100,120,,,,,
qd-sweep,\"qd32, \"\"deep\"\" | wide\",iops,IOPS,3,170,160,26.457513110645905,0.15563243006262298,150,200,160,150,200,1.5454545454545454,1.3235294117647058,1.8333333333333335,1.4545454545454546,\"qd32, \"\"deep\"\" | wide is 1.55× qd1 (95% CI 1.32–1.83), better\"
qd-sweep,qd1,read_lat_p99_ms,ms,3,2,2,0,0,2,2,2,2,2,,,,,
qd-sweep,\"qd32, \"\"deep\"\" | wide\",read_lat_p99_ms,ms,3,1,1,0,0,1,1,1,1,1,0.5,0.5,0.5,0.5,\"qd32, \"\"deep\"\" | wide is 0.50× qd1 (95% CI 0.50–0.50), better\"
";
        let got = campaign_csv(&view());
        assert_eq!(got, want);
        // Every row has the header's 19 fields when read back.
        let mut r = csv::Reader::from_reader(got.as_bytes());
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(|row| row.len() == CSV_HEADER.len()));
        assert_eq!(&rows[1][1], "qd32, \"deep\" | wide");
    }

    #[test]
    fn short_interrupted_and_uncompared_cases() {
        let mut v = view();
        // A third case with two runs (ratio, no verdict), one interrupted run, and a metric
        // the baseline lacks.
        let mut stopped = run(9, 3, 5.0, 9.0);
        stopped.interrupted = true;
        let mut only = run(8, 2, 90.0, 2.5);
        only.metrics.insert("write_iops".into(), 30.0);
        v.cases
            .push(case("qd4", "4", vec![run(7, 1, 100.0, 2.5), only, stopped]));
        v.metrics = metrics(&v.cases, "qd1");
        v.warnings = warnings(&v.cases, 3);
        let md = campaign_markdown(&v);
        let has = |line: &str| assert!(md.lines().any(|l| l == line), "{line}\n{md}");
        has("| qd4 | qd=4 | 2 of 3 (+1 interrupted) | `--qd 4 --time 10s` |");
        // 95/110 = 0.8636…
        has("- qd4 is 0.86× qd1, too few repetitions for a verdict (n=2 and 3)");
        has("| qd4 | 1 | 30.00 | 30.00 | – | – | 30.00 | 30.00 | 30.00 | – | – | qd4 is not compared: qd1 lacks this metric or has a 0 in it |");
        has("| qd4 | 3 | 9 | 2025-03-01T10:00:09Z | interrupted | 5.000 | 9.000 |");
        has("- case qd4, repetition 3 (run 9) was interrupted and is left out of the statistics");
        let csv = campaign_csv(&v);
        assert!(
            csv.contains("\nqd-sweep,qd4,write_iops,IOPS,1,30,30,,,30,30,30,,,,,,,\n"),
            "{csv}"
        );
    }

    #[test]
    fn figures_keep_four_significant_digits() {
        let table = [
            (39505.3, "39505"),
            (845.31, "845.3"),
            (1.62349, "1.623"),
            (0.0812345, "0.08123"),
            (0.000012345, "0.000012"),
            (-12.5, "-12.50"),
            (0.0, "0"),
        ];
        for (x, want) in table {
            assert_eq!(num(x), want, "{x}");
        }
        assert_eq!(ratio_num(0.0123), "0.012");
        assert_eq!(ratio_num(1.4567), "1.46");
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }
}
