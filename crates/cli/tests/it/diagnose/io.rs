//! Synthetic bottlenecks on this VM: its disk at QD 32, one CPU for many workers, a small
//! file read through the page cache, a three-way mirror, a throttled stripe member, and a run
//! well below the disk's limit.

use super::assert_top;
use crate::common::*;

/// A file of `size` on the disk under test, created (pre-filled) by a short run.
fn file(dir: &tempfile::TempDir, name: &str, size: &str) -> String {
    let p = dir.path().join(name).display().to_string();
    run_json(&["--target", &p, "--size", size, "--ios", "1"]);
    p
}

#[test]
fn device_bound() {
    let _g = heavy();
    let d = workdir();
    let p = file(&d, "data", "512m");
    let v = run_json(&[
        "--target", &p, "--rw", "randread", "--bs", "4k", "--qd", "32", "--time", "3s",
    ]);
    assert_top(&v, "device", 0.5, &[]);
}

#[test]
fn healthy_below_the_limit() {
    let _g = heavy();
    let d = workdir();
    let p = file(&d, "data", "64m");
    let v = run_json(&[
        "--target",
        &p,
        "--rw",
        "randread",
        "--qd",
        "1",
        "--rate-iops",
        "100",
        "--time",
        "2s",
    ]);
    assert_top(&v, "none", 0.0, &[]);
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(1));
}

#[test]
fn cache_absorbed() {
    let _g = heavy();
    let d = workdir();
    let p = file(&d, "small", "16m");
    // Warm the page cache, then measure.
    run_json(&["--target", &p, "--rw", "read", "--buffered", "--time", "500ms"]);
    let v = run_json(&[
        "--target", &p, "--rw", "randread", "--buffered", "--time", "2s",
    ]);
    let impact = assert_top(&v, "page_cache", 0.8, &["cpu"]);
    assert!(impact <= 1.0);
}

#[test]
fn mirror_writes() {
    let _g = heavy();
    let d = workdir();
    let ps: Vec<String> = (0..3).map(|i| file(&d, &format!("m{i}"), "32m")).collect();
    let v = run_json(&[
        "--target",
        &ps.join(","),
        "--layout",
        "mirror:3",
        "--rw",
        "randwrite",
        "--qd",
        "2",
        "--rate-iops",
        "200",
        "--time",
        "2s",
    ]);
    let impact = assert_top(&v, "layout", 0.6, &[]);
    assert!(impact < 0.7, "mirror:3: two copies in three, {impact}");
}

#[test]
fn cpu_bound() {
    let _g = heavy();
    let d = workdir();
    let p = file(&d, "data", "256m");
    let out = std::process::Command::new("taskset")
        .args(["-c", "0"])
        .arg(exe())
        .args([
            "run", "--target", &p, "--rw", "randread", "--bs", "4k", "--workers", "8", "--qd",
            "64", "--time", "3s", "--json",
        ])
        .env("IOGAUGE_STORE", test_store())
        .output()
        .expect("taskset (util-linux) is installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_top(&v, "cpu", 0.3, &["device"]);
}
