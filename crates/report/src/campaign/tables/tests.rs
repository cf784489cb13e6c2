//! Tests of the Markdown and CSV exports.
use super::*;
use iogauge_campaign::{metrics, warnings, Environment};
use iogauge_stats::compare::Statistic;
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
        finding: None,
    }
}

fn case(name: &str, qd: &str, runs: Vec<RunDigest>) -> CaseView {
    CaseView {
        name: name.into(),
        vars: BTreeMap::from([("qd".to_string(), qd.to_string())]),
        args: vec!["--qd".into(), qd.into(), "--time".into(), "10s".into()],
        runs,
        lat_curves: Vec::new(),
        baseline: None,
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
        statistic: Statistic::Mean,
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
        metrics: metrics(&cases, "qd1", Statistic::Mean),
        warnings: warnings(&cases, 3),
        cases,
    }
}

#[test]
fn markdown_snapshot() {
    let want = r#"# Campaign qd-sweep

## Summary

`iogauge run`, 2 cases × 3 repetitions, 6 measured runs; baseline **qd1**; ratios of means.

| case | variables | runs | command line |
|---|---|--:|---|
| qd1 (baseline) | qd=1 | 3 | `--qd 1 --time 10s` |
| qd32, "deep" \| wide | qd=32 | 3 | `--qd 32 --time 10s` |

IOPS against qd1:

- qd32, "deep" \| wide is 1.55× qd1 (95% CI 1.32–1.83), better

### Warnings

- case qd32, "deep" \| wide is noisy (coefficient of variation above 10%): iops 15.6%

## IOPS: higher is better

| case | n | mean | median | stddev | CV | min | max | trimmed mean | 95% CI | ratio of means (95% CI) | verdict |
|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|
| qd1 | 3 | 110.0 | 110.0 | 10.00 | 9.1% | 100.0 | 120.0 | 110.0 | 100.0–120.0 | 1.00 (baseline) | – |
| qd32, "deep" \| wide | 3 | 170.0 | 160.0 | 26.46 | 15.6% | 150.0 | 200.0 | 160.0 | 150.0–200.0 | 1.55 (1.32–1.83) | qd32, "deep" \| wide is 1.55× qd1 (95% CI 1.32–1.83), better |

## read latency p99 (ms): lower is better

| case | n | mean | median | stddev | CV | min | max | trimmed mean | 95% CI | ratio of means (95% CI) | verdict |
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
    // ratio 170/110, trimmed ratio 160/110. With n = 3 a trimmed mean is the median, so
    // the trimmed interval runs between the extremes 150/120 and 200/100.
    let want = "\
campaign,case,metric,unit,n,mean,median,stddev,cv,min,max,trimmed_mean,ci_lo,ci_hi,ratio,ratio_lo,ratio_hi,trimmed_ratio,trimmed_ratio_lo,trimmed_ratio_hi,statistic,verdict,limit_layer,limit
qd-sweep,qd1,iops,IOPS,3,110,110,10,0.09090909090909091,100,120,110,100,120,,,,,,,mean,,,
qd-sweep,\"qd32, \"\"deep\"\" | wide\",iops,IOPS,3,170,160,26.457513110645905,0.15563243006262298,150,200,160,150,200,1.5454545454545454,1.3235294117647058,1.8333333333333335,1.4545454545454546,1.25,2,mean,\"qd32, \"\"deep\"\" | wide is 1.55× qd1 (95% CI 1.32–1.83), better\",,
qd-sweep,qd1,read_lat_p99_ms,ms,3,2,2,0,0,2,2,2,2,2,,,,,,,mean,,,
qd-sweep,\"qd32, \"\"deep\"\" | wide\",read_lat_p99_ms,ms,3,1,1,0,0,1,1,1,1,1,0.5,0.5,0.5,0.5,0.5,0.5,mean,\"qd32, \"\"deep\"\" | wide is 0.50× qd1 (95% CI 0.50–0.50), better\",,
";
    let got = campaign_csv(&view());
    assert_eq!(got, want);
    // Every row has the header's 24 fields when read back.
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
    v.metrics = metrics(&v.cases, "qd1", v.statistic);
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
        csv.contains("\nqd-sweep,qd4,write_iops,IOPS,1,30,30,,,30,30,30,,,,,,,,,mean,,,\n"),
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

/// `statistic = "trimmed"`: the headline is the ratio of trimmed means (160/110 = 1.45 for
/// IOPS), its interval the trimmed one, and every table says so; the CSV keeps both ratios.
#[test]
fn trimmed_statistic_is_the_headline_everywhere() {
    let mut v = view();
    v.statistic = Statistic::Trimmed;
    v.metrics = metrics(&v.cases, "qd1", v.statistic);
    let md = campaign_markdown(&v);
    let has = |line: &str| assert!(md.lines().any(|l| l == line), "{line}\n{md}");
    has("`iogauge run`, 2 cases × 3 repetitions, 6 measured runs; baseline **qd1**; ratios of trimmed means (each case's highest and lowest run dropped).");
    has("- qd32, \"deep\" \\| wide is 1.45× qd1 (trimmed means, 95% CI 1.25–2.00), better");
    has("| case | n | mean | median | stddev | CV | min | max | trimmed mean | 95% CI | ratio of trimmed means (95% CI) | verdict |");
    has("| qd32, \"deep\" \\| wide | 3 | 170.0 | 160.0 | 26.46 | 15.6% | 150.0 | 200.0 | 160.0 | 150.0–200.0 | 1.45 (1.25–2.00) | qd32, \"deep\" \\| wide is 1.45× qd1 (trimmed means, 95% CI 1.25–2.00), better |");
    let csv = campaign_csv(&v);
    let row = csv.lines().nth(2).unwrap();
    assert!(
        row.contains(",1.5454545454545454,1.3235294117647058,1.8333333333333335,1.4545454545454546,1.25,2,trimmed,"),
        "{row}"
    );
    // Too few repetitions: the bare headline.
    v.cases[1].runs.truncate(2);
    v.metrics = metrics(&v.cases, "qd1", v.statistic);
    let md = campaign_markdown(&v);
    assert!(
        md.contains("wide is 1.41× qd1, too few repetitions for a verdict (n=2 and 3)"),
        "{md}"
    );
}

/// The view with findings: qd1's runs limited by the device (one run by the OS queue, so
/// the majority decides), the second case's by the OS queue.
fn view_with_findings() -> CampaignView {
    use crate::text::findings::tests::finding;
    use iogauge_model::finding::Layer;
    let mut v = view();
    let layers = [
        [Layer::Device, Layer::OsQueue, Layer::Device],
        [Layer::OsQueue; 3],
    ];
    for (c, ls) in v.cases.iter_mut().zip(layers) {
        for (r, l) in c.runs.iter_mut().zip(ls) {
            r.finding = Some(finding(l, 0.6, &format!("{l:?} <limits>")));
        }
    }
    v
}

#[test]
fn each_case_s_top_finding_in_every_export() {
    let v = view_with_findings();
    let md = campaign_markdown(&v);
    assert!(
        md.contains("## What limits each case\n\n- **qd1**: Device &lt;limits&gt; (60% of the I/O time; vda %util 98%)\n"),
        "{md}"
    );
    assert!(
        md.contains(
            "qd32, \"deep\" \\| wide is limited by the OS queue where qd1 was limited by the device."
        ),
        "{md}"
    );
    let csv = campaign_csv(&v);
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(&rows[0][22], "device", "{csv}");
    assert!(rows[0][23].starts_with("Device <limits> (60%"), "{csv}");
    assert_eq!(&rows[1][22], "os_queue", "{csv}");
    let json: serde_json::Value = serde_json::from_str(&campaign_json(&v)).unwrap();
    assert_eq!(json["cases"][1]["runs"][0]["finding"]["layer"], "os_queue");
    let text = crate::verdicts_text(&v);
    assert!(text.contains("what limits each case:\n  qd1 "), "{text}");
}

#[test]
fn no_findings_no_limits_section() {
    let v = view();
    assert!(!campaign_markdown(&v).contains("What limits"));
    assert!(!crate::verdicts_text(&v).contains("limits"));
    let json = campaign_json(&v);
    assert!(!json.contains("\"finding\""), "{json}");
    assert!(campaign_csv(&v).lines().nth(1).unwrap().ends_with(",,"));
}

/// Issue #44 row 5: case names (and everything made of them) were written into the Markdown
/// raw, so a viewer ran `<script>` and made links; `|` split table rows.
#[test]
fn markdown_writes_user_text_as_text() {
    let mut v = view();
    for (c, name) in v.cases.iter_mut().zip([
        "<script>alert(1)</script>",
        "[x](http://evil) | ![i](http://evil/i.png)",
    ]) {
        for m in &mut v.metrics {
            for mc in m.cases.iter_mut().filter(|mc| mc.case == c.name) {
                mc.case = name.into();
            }
        }
        c.name = name.into();
        c.vars.insert("note".into(), "*a* _b_ <i>".into());
    }
    v.baseline = v.cases[0].name.clone();
    v.environment.targets = vec!["/data/<b>x</b>".into()];
    let md = campaign_markdown(&v);
    assert!(!md.contains("<script>") && !md.contains("<i>"), "{md}");
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{md}");
    assert!(
        !md.contains("[x]") && !md.contains("![i]"),
        "a link or image: {md}"
    );
    assert!(md.contains("\\[x\\](http://evil) \\| !\\[i\\]"), "{md}");
    assert!(md.contains("\\*a\\* \\_b\\_ &lt;i&gt;"), "{md}");
    // Every table row keeps its columns: no `|` but the table's own unescaped.
    let bars = |l: &str| l.replace("\\|", "").matches('|').count();
    let mut header = None;
    for line in md.lines() {
        match (line.starts_with('|'), header) {
            (true, None) => header = Some(bars(line)),
            (true, Some(n)) => assert_eq!(bars(line), n, "{line}"),
            (false, _) => header = None,
        }
    }
}
