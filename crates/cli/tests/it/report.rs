//! `iogauge report ID [ID…]`: stored results of each kind drawn in one HTML file, opened in
//! real Chromium; several runs overlaid; `show ID --interval` of a calibration; and the
//! mistakes, each one line and exit 2.

use crate::common::*;

/// The `data-chart` kinds of a page, e.g. `series`, `curve`, counted.
fn charts(html: &str, kind: &str) -> usize {
    html.matches(&format!("data-chart=\"{kind}:")).count()
}

#[test]
fn runs_and_a_calibration_in_one_report() {
    // What it asserts is the page's structure, not its figures: busy, not heavy.
    let _g = busy();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let t = d.path().join("data");
    let ts = t.to_str().unwrap();
    let run = [
        "run", "--target", ts, "--size", "32m", "--time", "2s", "--ramp", "1s",
    ];
    ok_store(&store, &[&run[..], &["--rw", "randrw"]].concat());
    ok_store(&store, &[&run[..], &["--label", "after"]].concat());
    let cal = [
        "calibrate",
        "--target",
        ts,
        "--size",
        "32m",
        "--point-time",
        "2s",
        "--max-latency",
        "50ms",
        "--matrix",
        "point",
        "--num-small",
        "2",
        "--num-large",
        "1",
    ];
    ok_store(&store, &cal);

    let page = d.path().join("r.html");
    let out = on_store(
        &store,
        &["report", "1", "2", "3", "-o", page.to_str().unwrap()],
    );
    assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("3 results"), "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "nothing fetched"
    );
    // Runs: IOPS, MiB/s, latency, device IOPS, %util, await, CPU, the busiest CPU — both
    // runs on each.
    assert_eq!(charts(&html, "series"), 8);
    assert!(html.contains("data-chart=\"series:cpu_each\""));
    let iops = &html[html.find("data-chart=\"series:iops\"").unwrap()..];
    let iops = &iops[..iops.find("</svg>").unwrap()];
    assert!(
        iops.contains(">1 read<") && iops.contains(">1 write<"),
        "{iops}"
    );
    assert!(iops.contains(">2 [after] read<"), "{iops}");
    assert!(
        charts(&html, "latcurve") >= 3,
        "read, write; the calibration's steps"
    );
    // The calibration: IOPS and MB/s against depth, the knee, the matrix.
    assert_eq!(charts(&html, "curve"), 3);
    assert_eq!(charts(&html, "heatmap"), 2, "IOPS and MB/s of the one cell");
    assert!(html.contains("Workload and devices"));
    let console = chromium_console(&page);
    assert!(console.is_empty(), "console: {console:?}");

    // The label is in compare too.
    let cmp = ok_store(&store, &["compare", "1", "2"]);
    assert!(
        cmp.starts_with("run 1 (") && cmp.contains("against run 2 [after] ("),
        "{cmp}"
    );
    let cmp: serde_json::Value =
        serde_json::from_str(&ok_store(&store, &["compare", "1", "2", "--json"])).unwrap();
    assert_eq!(cmp["b"]["label"], "after");
    assert!(cmp["a"]["label"].is_null());

    // A calibration's points at a coarser interval: 2 s points recorded every 1 s.
    let fine = ok_store(&store, &["show", "3", "--interval", "1s"]);
    let coarse = ok_store(&store, &["show", "3", "--interval", "2s"]);
    let rows = |t: &str| {
        t.lines()
            .filter(|l| {
                l.trim_start().starts_with(|c: char| c.is_ascii_digit()) && l.contains(" |")
            })
            .count()
    };
    assert!(coarse.contains("small 1 outstanding"), "{coarse}");
    assert!(rows(&coarse) < rows(&fine), "{coarse}\n---\n{fine}");
    let e = fails(
        &[
            "show",
            "3",
            "--interval",
            "1500ms",
            "--store",
            store.to_str().unwrap(),
        ],
        2,
    );
    assert!(e.contains("whole multiple"), "{e}");
}

#[test]
fn report_mistakes_are_one_line() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let t = d.path().join("data");
    ok_store(
        &store,
        &[
            "run",
            "--target",
            t.to_str().unwrap(),
            "--size",
            "8m",
            "--time",
            "1s",
        ],
    );
    let s = store.to_str().unwrap();
    let page = d.path().join("r.html");
    std::fs::write(&page, "mine").unwrap();
    let p = page.to_str().unwrap();
    for (args, says) in [
        (vec!["report", "--store", s], "<ID>"),
        (vec!["report", "9", "--store", s], "no run 9"),
        (vec!["report", "1", "1", "--store", s], "given twice"),
        (
            vec!["report", "1", "--campaign", "x", "--store", s],
            "--campaign",
        ),
        (vec!["report", "x1", "--store", s], "ID"),
        (vec!["report", "1", "-o", p, "--store", s], "--force"),
    ] {
        let e = fails(&args, 2);
        assert!(e.contains(says), "{args:?}: {e}");
    }
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        "mine",
        "not replaced"
    );
    let html = ok_store(&store, &["report", "1", "-o", p, "--force"]);
    assert!(html.is_empty(), "the page went to the file");
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
}
