//! `report --relative` and `export --relative`: a tiny real campaign (two queue depths on a
//! scratch file, the second the baseline) read back in ratios only. The baseline is 1.000,
//! the other case's ratio is its mean over the baseline's from the plain export, and no
//! absolute figure of the plain export appears in any relative output.

use super::*;

/// Two cases × 2 repetitions of sub-second runs, the deeper queue the baseline.
const REL: &str = r#"
name = "rel"
command = "run"
repeat = 2
warmup = "none"
baseline = "qd=8"

[vars]
qd = [1, 8]

[options]
target = "./data"
size = "16m"
qd = "${qd}"
time = "400ms"
interval = "200ms"
"#;

/// The integer part of `x`, truncated and rounded, when it has 4 digits or more: what
/// every rendering of `x` starts with (CSV and JSON in full, Markdown and HTML to 4
/// significant digits), and no ratio has.
fn absolute_digits(x: f64) -> Vec<String> {
    if x < 1000.0 {
        return Vec::new();
    }
    vec![
        format!("{}", x.trunc() as u64),
        format!("{}", x.round() as u64),
    ]
}

/// The numbers in `text` as digit strings, thousands separators ("45,231") joined: a run of
/// digits, with a comma inside it only when exactly three digits follow.
fn numbers(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in b.iter().enumerate() {
        let grouped = c == b','
            && !cur.is_empty()
            && b.get(i + 1..i + 4)
                .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
            && !b.get(i + 4).is_some_and(u8::is_ascii_digit);
        if c.is_ascii_digit() {
            cur.push(c as char);
        } else if !grouped && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    out.extend((!cur.is_empty()).then_some(cur));
    out
}

#[test]
fn relative_exports_and_report_show_only_ratios() {
    let _g = busy();
    let w = workdir();
    let dir = w.path();
    let store = dir.join("results.sqlite");
    std::fs::write(dir.join("rel.toml"), REL).unwrap();
    let out = campaign_in(dir, &store, &["rel.toml"]);
    assert_success(&out);
    let s = store.to_str().unwrap();
    let plain = export_json(&store, "rel");
    let export = |format: &str| {
        text_of(&[
            "export",
            "--campaign",
            "rel",
            "--format",
            format,
            "--relative",
            "--store",
            s,
        ])
    };

    // The ratios of the plain export, recomputed: mean of qd=1 ÷ mean of qd=8.
    let metric = |key: &str| entry(&plain["metrics"], "key", key).clone();
    let mean = |m: &Value, case: &str| f(&entry(&m["cases"], "case", case)["describe"]["mean"]);
    let iops = metric("iops");
    let want = mean(&iops, "qd=1") / mean(&iops, "qd=8");

    // JSON: the baseline exactly 1, the other case the plain export's ratio.
    let json: Value = serde_json::from_str(&export("json")).expect("relative JSON");
    assert_eq!(json["relative_to"], "qd=8");
    let rel_iops = entry(&json["metrics"], "key", "iops");
    assert_eq!(f(&entry(&rel_iops["cases"], "case", "qd=8")["ratio"]), 1.0);
    let got = f(&entry(&rel_iops["cases"], "case", "qd=1")["ratio"]);
    assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
    for m in json["metrics"].as_array().unwrap() {
        let base = entry(&m["cases"], "case", "qd=8");
        if !base["ratio"].is_null() {
            assert_eq!(f(&base["ratio"]), 1.0, "{m}");
        }
    }

    // CSV: the same ratios, one row per case and metric.
    let csv = export("csv");
    assert!(
        csv.starts_with("campaign,case,relative_to,metric,n,ratio,"),
        "{csv}"
    );
    let row = |case: &str| {
        csv.lines()
            .find(|l| l.starts_with(&format!("rel,{case},qd=8,iops,")))
            .unwrap_or_else(|| panic!("no iops row of {case}: {csv}"))
            .split(',')
            .nth(5)
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    assert_eq!(row("qd=8"), 1.0);
    assert!((row("qd=1") - want).abs() <= 1e-9 * want);

    // Markdown and HTML: the baseline at 1.000 and the ratio to 3 decimals.
    let md = export("md");
    assert!(
        md.contains("Figures are relative to case qd=8 (qd=8 = 1.000)"),
        "{md}"
    );
    assert!(md.contains("| qd=8 | qd=8 | 2 | 1.000 |"), "{md}");
    let shown = format!("| qd=1 | qd=8 | 2 | {want:.3} |");
    assert!(md.contains(&shown), "{shown} not in {md}");
    let html = relative_report(dir, s);
    let plain_md = text_of(&[
        "export",
        "--campaign",
        "rel",
        "--format",
        "md",
        "--store",
        s,
    ]);
    let json = json.to_string();
    no_absolute_figure(
        &plain,
        &plain_md,
        &[("json", &json), ("csv", &csv), ("md", &md), ("html", &html)],
    );

    // --relative where there is no baseline: one usage line naming the flag.
    let e = fails(&["report", "1", "--relative", "--store", s], 2);
    assert!(e.contains("--relative needs --campaign NAME"), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
}

/// No absolute figure of the `plain` export in any of the relative `outputs`: every case's
/// mean, median, min and max of every metric (those in the thousands).
fn no_absolute_figure(plain: &Value, plain_md: &str, outputs: &[(&str, &str)]) {
    let mut absent = Vec::new();
    for m in plain["metrics"].as_array().unwrap() {
        for c in m["cases"].as_array().unwrap() {
            let d = &c["describe"];
            for k in ["mean", "median", "min", "max"] {
                absent.extend(absolute_digits(f(&d[k])));
            }
        }
    }
    assert!(
        !absent.is_empty(),
        "IOPS in the thousands give digits to look for"
    );
    // The check can fail: the plain Markdown shows the first figure, truncated or rounded
    // (absent[0] and absent[1] are its two forms; 4 significant digits round it).
    let plain_numbers = numbers(plain_md);
    assert!(
        absent[..2].iter().any(|a| plain_numbers.contains(a)),
        "neither {} nor {} in {plain_md}",
        absent[0],
        absent[1]
    );
    for (what, text) in outputs {
        let shown = numbers(text);
        for a in &absent {
            assert!(!shown.contains(a), "{a} in the relative {what}");
        }
    }
}

/// `report --campaign rel --relative`: the note, the baseline at 1.000, the ratio charts
/// and none of the absolute ones.
fn relative_report(dir: &Path, s: &str) -> String {
    let page = dir.join("rel.html");
    succeeds(&[
        "report",
        "--campaign",
        "rel",
        "--relative",
        "-o",
        page.to_str().unwrap(),
        "--store",
        s,
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Figures are relative to case qd=8"), "header");
    assert!(html.contains("<td>1.000</td>"), "baseline row");
    assert!(
        html.contains("data-chart=\"normalised:iops"),
        "the ratio chart"
    );
    for absolute_chart in ["bars:", "latcurve:", "series:"] {
        assert!(!html.contains(&format!("data-chart=\"{absolute_chart}")));
    }
    html
}
