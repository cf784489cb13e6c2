//! Findings on a shared machine (#45): other processes' I/O on the job's disk is not the
//! job's, and the layer split adds up with several workers. Each scenario built for real.

use super::findings;
use crate::common::*;
use serde_json::Value;
use std::process::{Child, Command, Stdio};

/// A file of `size` on the disk under test, created (pre-filled) by a short run.
fn file(dir: &tempfile::TempDir, name: &str, size: &str) -> String {
    let p = dir.path().join(name).display().to_string();
    run_json(&["--target", &p, "--size", size, "--ios", "1"]);
    p
}

/// fio doing random O_DIRECT `rw` (randwrite, randread) of 4 KiB at QD 16 on `path` for
/// `secs`: a neighbour on the same disk.
fn neighbour(path: &str, rw: &str, secs: u32) -> Child {
    Command::new("fio")
        .args([
            "--name=neighbour",
            &format!("--filename={path}"),
            "--size=256m",
            &format!("--rw={rw}"),
            "--bs=4k",
            "--direct=1",
            "--ioengine=io_uring",
            "--iodepth=16",
            "--time_based",
            &format!("--runtime={secs}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("fio is installed (scripts/test installs it)")
}

/// No finding outside `allowed` layers explains 20% or more of the time.
fn no_false_finding(v: &Value, allowed: &[&str]) {
    let shown = serde_json::to_string_pretty(&v["findings"]).unwrap_or_default();
    for (rule, layer, impact) in findings(v) {
        assert!(
            impact < 0.2 || allowed.contains(&layer.as_str()),
            "false finding {rule} ({layer}, {impact}): {shown}"
        );
    }
}

/// fio writing to the same disk beside a paced O_DIRECT writer: the disk's writes are
/// mostly fio's. Before #45 `write-multiplication` said "a mirror below" (4.3×–36×) and
/// `device-saturated` blamed the disk fio saturated; now the finding names fio.
#[test]
fn a_neighbour_on_the_same_disk() {
    let _g = heavy();
    let d = workdir();
    let ours = file(&d, "ours", "64m");
    let theirs = d.path().join("theirs").display().to_string();
    let mut fio = neighbour(&theirs, "randwrite", 8);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let v = run_json(&[
        "--target",
        &ours,
        "--rw",
        "randwrite",
        "--qd",
        "1",
        "--rate-iops",
        "200",
        "--time",
        "3s",
    ]);
    let _ = fio.kill();
    let _ = fio.wait();
    let shown = serde_json::to_string_pretty(&v["findings"]).unwrap_or_default();
    let all = findings(&v);
    assert!(
        all.iter()
            .all(|(r, ..)| r != "write-multiplication" && r != "device-saturated"),
        "{shown}"
    );
    let n = v["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["rule"] == "neighbours"))
        .unwrap_or_else(|| panic!("no neighbours finding: {shown}"));
    assert!(
        n["title"].as_str().is_some_and(|t| t.contains("fio (pid ")),
        "the neighbour is named: {shown}"
    );
    no_false_finding(&v, &["neighbours"]);
}

/// The split's parts from `run`'s text line "where an I/O's time went (mean µs): iogauge A,
/// kernel submit + completion B, before the queue C, OS queue D, device E (of F)".
fn split_parts(text: &str) -> (Vec<f64>, f64) {
    let line = text
        .lines()
        .find(|l| l.starts_with("where an I/O's time went"))
        .unwrap_or_else(|| panic!("no split line in:\n{text}"));
    let nums: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter_map(|t| t.parse().ok())
        .collect();
    let (whole, parts) = nums.split_last().expect("numbers");
    (parts.to_vec(), *whole)
}

/// With 2 and 4 workers each worker's ring reuses the same request tags; the kernel's time
/// was 70,497 µs "of 293.9" before #45. The parts are never negative nor larger than the
/// whole, and add up to it within 5%.
#[test]
fn the_split_adds_up_with_several_workers() {
    let _g = heavy();
    let d = workdir();
    let p = file(&d, "data", "128m");
    for workers in ["2", "4"] {
        let out = bin()
            .args([
                "run",
                "--target",
                &p,
                "--rw",
                "randread",
                "--qd",
                "4",
                "--workers",
                workers,
                "--time",
                "2s",
            ])
            .output()
            .expect("spawn iogauge");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let (parts, whole) = split_parts(&text);
        assert_eq!(parts.len(), 5, "{text}");
        assert!(whole > 0.0, "{text}");
        for p in &parts {
            assert!(
                *p >= 0.0 && *p <= whole,
                "{workers} workers: part {p} of {whole}: {text}"
            );
        }
        let sum: f64 = parts.iter().sum();
        assert!(
            (sum - whole).abs() <= 0.05 * whole,
            "{workers} workers: parts add to {sum}, of {whole}: {text}"
        );
    }
}
