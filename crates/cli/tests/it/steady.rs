//! `--steady`: the ramp lasts until IOPS settle (or the timeout), and the measured window
//! starts on the next interval boundary with everything before it excluded.

use crate::common::*;
use serde_json::Value;

fn phase_count(v: &Value, phase: &str) -> usize {
    v["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["phase"] == phase)
        .count()
}

fn first_measured_t(v: &Value) -> f64 {
    let iv = v["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["phase"] == "measure")
        .expect("a measured interval");
    f(&iv["t_s"])
}

/// A paced job is steady at once: the ramp ends on the first boundary after a full window
/// (and after --ramp), well before the timeout.
#[test]
fn steady_ramp_ends_on_the_grid_once_the_window_holds() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let v = run_on(
        &t,
        "32m",
        &[
            "--rate-iops",
            "2000",
            "--qd",
            "4",
            "--interval",
            "250ms",
            "--time",
            "1s",
            "--ramp",
            "1s",
            "--steady",
            "iops:25%",
            "--steady-window",
            "1s",
            "--steady-timeout",
            "20s",
        ],
    );
    let w = &v["steady_wait"];
    assert_eq!(w["reached"], true, "{w}");
    let from = f(&w["measured_from_s"]);
    // At least --ramp and a full window; on the 250 ms grid; far below the timeout.
    assert!((1.0..8.0).contains(&from), "measured from {from}");
    assert!(
        ((from / 0.25) - (from / 0.25).round()).abs() < 1e-9,
        "{from} off the grid"
    );
    let (a, b) = (f(&w["window_s"][0]), f(&w["window_s"][1]));
    assert!((b - a - 1.0).abs() < 1e-9, "window {a}..{b}");
    assert!(
        b <= from + 1e-9,
        "window {a}..{b} ends after the measured start {from}"
    );
    // The measured series starts exactly there, and the ramp covers what came before.
    assert!((first_measured_t(&v) - from).abs() < 1e-6);
    assert_eq!(phase_count(&v, "ramp"), (from / 0.25).round() as usize);
    assert_eq!(phase_count(&v, "measure"), 4);
    let elapsed = f(&v["summary"]["elapsed_s"]);
    assert!((0.95..1.2).contains(&elapsed), "elapsed {elapsed}");
    let iops = f(&v["summary"]["read"]["iops"]);
    assert!((1800.0..2200.0).contains(&iops), "measured iops {iops}");
    assert_eq!(v["options"]["steady"]["criterion"]["kind"], "deviation");
}

/// A criterion no real series meets: the ramp runs to the timeout, the measured window
/// starts anyway, and the result says so.
#[test]
fn steady_timeout_measures_anyway_and_warns() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let v = run_on(
        &t,
        "32m",
        &[
            "--qd",
            "4",
            "--interval",
            "250ms",
            "--time",
            "500ms",
            "--steady",
            "iops:0.001%",
            "--steady-window",
            "500ms",
            "--steady-timeout",
            "1500ms",
        ],
    );
    let w = &v["steady_wait"];
    assert_eq!(w["reached"], false, "{w}");
    assert!(w["window_s"].is_null());
    assert!((f(&w["measured_from_s"]) - 1.5).abs() < 1e-9, "{w}");
    assert!((first_measured_t(&v) - 1.5).abs() < 1e-6);
    assert_eq!(phase_count(&v, "ramp"), 6);
    let warned = v["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .unwrap()
            .contains("not reached within --steady-timeout")
    });
    assert!(warned, "warnings: {}", v["warnings"]);
    assert!(f(&v["summary"]["read"]["ios"]) > 0.0);
}

#[test]
fn steady_text_summary_and_bad_values() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let out = bin()
        .args(["run", "--target", t.to_str().unwrap(), "--size", "32m"])
        .args(["--rate-iops", "1000", "--qd", "2", "--interval", "200ms"])
        .args(["--time", "400ms", "--steady", "--steady-window", "600ms"])
        .args(["--steady-timeout", "10s"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("after ramp-up to steady state (iops:20%"),
        "{text}"
    );
    assert!(
        text.contains("steady state reached in the ramp-up"),
        "{text}"
    );

    let p = t.to_str().unwrap();
    let e = run_fails(&["--target", p, "--steady", "iops:x"], 2);
    assert!(e.contains("--steady") && e.contains("iops:PCT%"), "{e}");
    let e = run_fails(&["--target", p, "--steady", "latency:5%"], 2);
    assert!(e.contains("iops_slope:PCT%"), "{e}");
    let e = run_fails(&["--target", p, "--steady", "--steady-window", "1s"], 2);
    assert!(e.contains("--steady-window"), "{e}");
    let e = run_fails(&["--target", p, "--steady", "--steady-timeout", "5s"], 2);
    assert!(e.contains("--steady-timeout"), "{e}");
    let e = run_fails(&["--target", p, "--steady-timeout", "5s"], 2);
    assert!(e.contains("--steady"), "{e}");
}

/// A run stored at 250 ms, shown at 1 s: each coarse interval holds exactly the I/Os of its
/// four fine ones, its percentiles come from their merged histograms, and its device figures
/// from the raw snapshots at its ends.
#[test]
fn show_re_renders_a_run_at_a_coarser_interval() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let out = bin()
        .args(["run", "--target", t.to_str().unwrap(), "--size", "32m"])
        .args(["--qd", "4", "--interval", "250ms", "--time", "2s", "--json"])
        .output()
        .unwrap();
    assert_success(&out);
    let fine: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = stored_id(&out.stderr).to_string();
    let shown = bin()
        .args(["show", &id, "--interval", "1s", "--json"])
        .output()
        .unwrap();
    assert_success(&shown);
    let coarse: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let fi = fine["intervals"].as_array().unwrap();
    let ci = coarse["intervals"].as_array().unwrap();
    assert_eq!(fi.len(), 8);
    assert_eq!(ci.len(), 2);
    assert_eq!(coarse["summary"], fine["summary"]);
    for (k, c) in ci.iter().enumerate() {
        let part = &fi[4 * k..4 * k + 4];
        let ios: f64 = part.iter().map(|i| f(&i["read"]["ios"])).sum();
        assert_eq!(f(&c["read"]["ios"]), ios);
        assert!((f(&c["dur_s"]) - 1.0).abs() < 0.05, "{}", c["dur_s"]);
        // A merged p99 lies within the parts' p99s; the max is the parts' max.
        let p99s: Vec<f64> = part
            .iter()
            .map(|i| f(&i["read"]["lat_us"]["p99"]))
            .collect();
        let lo = p99s.iter().cloned().fold(f64::MAX, f64::min);
        let hi = p99s.iter().cloned().fold(0.0, f64::max);
        let p99 = f(&c["read"]["lat_us"]["p99"]);
        assert!(
            p99 >= lo * 0.999 && p99 <= hi * 1.001,
            "{p99} outside {lo}..{hi}"
        );
        let max = part
            .iter()
            .map(|i| f(&i["read"]["lat_us"]["max"]))
            .fold(0.0, f64::max);
        assert_eq!(f(&c["read"]["lat_us"]["max"]), max);
        // Device reads: the coarse rate is the mean of the four fine rates.
        let dev = c["disks"]
            .as_object()
            .expect("device figures")
            .keys()
            .next()
            .unwrap();
        let fine_rs: f64 = part.iter().map(|i| f(&i["disks"][dev]["r_s"])).sum::<f64>() / 4.0;
        let rs = f(&c["disks"][dev]["r_s"]);
        assert!(
            (rs - fine_rs).abs() <= 0.02 * fine_rs + 1.0,
            "{dev}: {rs} vs {fine_rs}"
        );
    }
    let text = bin()
        .args(["show", &id, "--interval", "500ms"])
        .output()
        .unwrap();
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("t(s)") && text.contains("%util"), "{text}");
    let rows = text
        .lines()
        .filter(|l| l.contains(" |") && l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(rows, 4, "{text}");

    let e = fails(&["show", &id, "--interval", "300ms"], 2);
    assert!(
        e.contains("whole multiple") && e.contains("--interval"),
        "{e}"
    );
}
