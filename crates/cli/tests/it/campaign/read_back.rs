//! The finished campaign read back every way: the HTML report, CSV and Markdown exports,
//! comparisons of two cases and of two runs.

use super::*;

/// The finished campaign read back every way.
pub(super) fn report_export_compare(dir: &Path, store: &Path, v: &Value) {
    let store = store.to_str().unwrap();
    report_of(&dir.join("tiny.html"), store);
    exports_of(store, v);
    compares_of(store, v);
}

/// The campaign's HTML report: every chart, no NaN; never over an existing file without
/// --force.
fn report_of(html_path: &Path, store: &str) {
    let page = html_path.to_str().unwrap();
    succeeds(&["report", "--campaign", "tiny", "-o", page, "--store", store]);
    let html = std::fs::read_to_string(html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..100]);
    for chart in [
        "bars:iops",
        "normalised:iops",
        "latcurve:",
        "series:",
        "rw:",
    ] {
        assert!(html.contains(&format!("data-chart=\"{chart}")), "{chart}");
    }
    assert!(!html.contains("NaN"), "NaN in the report");
    // Never over an existing file without --force.
    let e = fails(
        &["report", "--campaign", "tiny", "-o", page, "--store", store],
        2,
    );
    assert!(
        e.contains("exists; choose another name or pass --force"),
        "{e}"
    );
}

/// CSV (its means equal the JSON's `v`) and Markdown exports.
fn exports_of(store: &str, v: &Value) {
    let export = |format| {
        text_of(&[
            "export",
            "--campaign",
            "tiny",
            "--format",
            format,
            "--store",
            store,
        ])
    };
    let csv = export("csv");
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("campaign,case,metric,unit,n,mean"),
        "{header}"
    );
    let iops_rows: Vec<&str> = csv.lines().filter(|l| l.contains(",iops,")).collect();
    assert_eq!(iops_rows.len(), 2, "{csv}");
    // CSV means equal the JSON's.
    let iops = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "iops")
        .unwrap();
    let mean0 = f(&iops["cases"][0]["describe"]["mean"]);
    let csv_mean: f64 = iops_rows[0].split(',').nth(5).unwrap().parse().unwrap();
    assert!(
        (csv_mean - mean0).abs() <= 1e-6 * mean0,
        "{csv_mean} vs {mean0}"
    );
    let md = export("md");
    assert!(md.contains("| qd=8 |"), "{md}");
}

/// Two cases compared (a verdict from three repetitions each), and two runs by id.
fn compares_of(store: &str, v: &Value) {
    let c = json_of(&[
        "compare",
        "qd=1",
        "qd=8",
        "--campaign",
        "tiny",
        "--json",
        "--store",
        store,
    ]);
    let m = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "iops")
        .unwrap();
    assert!(m["verdict"].as_str().unwrap().contains("qd=8"), "{m}");
    assert!(f(&m["ratio"]) > 0.0);

    // Two runs by id.
    let a = u(&v["cases"][0]["runs"][0]["id"]).to_string();
    let b = u(&v["cases"][1]["runs"][0]["id"]).to_string();
    let text = text_of(&["compare", &a, &b, "--store", store]);
    assert!(text.contains("iops"), "{text}");
    let e = fails(&["compare", "x", &b, "--store", store], 2);
    assert!(e.contains("is not a run id"), "{e}");
}
