//! `iogauge run` end to end on real files with O_DIRECT: the JSON result, its arithmetic,
//! both engines, the bounds (time, I/O count, rate, ramp, region), ownership of targets and
//! Ctrl-C.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

#[test]
fn json_shape_and_arithmetic_add_up() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let v = run_on(
        &t,
        "64m",
        &[
            "--rw",
            "randrw",
            "--read-pct",
            "70",
            "--bs",
            "8k",
            "--qd",
            "8",
            "--workers",
            "2",
            "--time",
            "2s",
            "--ramp",
            "1s",
            "--interval",
            "500ms",
        ],
    );
    assert_eq!(v["schema"], iogauge_model::SCHEMA);
    assert_eq!(v["kind"], "run");
    assert_eq!(v["options"]["rw"], "randrw");
    assert_eq!(v["targets"][0]["created"], true);
    let s = &v["summary"];
    for dir in ["read", "write"] {
        let d = &s[dir];
        for k in ["ios", "bytes", "iops", "mbps"] {
            assert!(d[k].is_number(), "summary.{dir}.{k}");
        }
        for k in ["mean", "p50", "p90", "p99", "p99_9", "max"] {
            assert!(f(&d["lat_us"][k]) > 0.0, "summary.{dir}.lat_us.{k}");
        }
        let l = &d["lat_us"];
        assert!(
            f(&l["p50"]) <= f(&l["p90"])
                && f(&l["p90"]) <= f(&l["p99"])
                && f(&l["p99"]) <= f(&l["max"])
        );
        // bytes = ios × bs
        assert_eq!(u(&d["bytes"]), u(&d["ios"]) * 8192, "{dir}");
        // Interval records are differential: measured ones add up to the totals.
        let sum: u64 = measured(&v).map(|i| u(&i[dir]["ios"])).sum();
        assert_eq!(sum, u(&d["ios"]), "{dir} intervals vs total");
        let bytes: u64 = measured(&v).map(|i| u(&i[dir]["bytes"])).sum();
        assert_eq!(bytes, u(&d["bytes"]));
        // IOPS = ios / elapsed.
        let iops = u(&d["ios"]) as f64 / f(&s["elapsed_s"]);
        assert!((f(&d["iops"]) - iops).abs() < 1e-6 * iops.max(1.0));
    }
    // 70% reads.
    let r = u(&s["read"]["ios"]) as f64 / (u(&s["read"]["ios"]) + u(&s["write"]["ios"])) as f64;
    assert!((r - 0.70).abs() < 0.03, "read share {r}");
    // The ramp is recorded but left out: 2 ramp intervals of 0.5 s, about 4 measured ones.
    let ramp: Vec<&Value> = v["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["phase"] == "ramp")
        .collect();
    assert!(ramp.len() >= 2, "ramp intervals: {}", ramp.len());
    assert!(u(&ramp[0]["read"]["ios"]) > 0);
    let el = f(&s["elapsed_s"]);
    assert!((1.95..2.5).contains(&el), "measured window {el} s");
    let first = measured(&v).next().unwrap();
    assert!(
        (f(&first["t_s"]) - 1.0).abs() < 0.01,
        "measured window starts after the ramp"
    );
}

#[test]
fn ios_bound_is_exact_and_split_over_workers() {
    let _g = shared();
    let d = workdir();
    let t = d.path().join("data");
    let v = run_on(
        &t,
        "32m",
        &["--ios", "5001", "--qd", "4", "--workers", "3", "--bs", "4k"],
    );
    assert_eq!(u(&v["summary"]["read"]["ios"]), 5001);
    assert_eq!(u(&v["summary"]["read"]["bytes"]), 5001 * 4096);
    assert_eq!(u(&v["summary"]["write"]["ios"]), 0);
}

#[test]
fn engines_agree_on_a_job() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let t = t.to_str().unwrap();
    let mut res = Vec::new();
    for engine in ["io_uring", "psync"] {
        // Same paced job, with slots to spare so a slow I/O does not hold the rate back
        // (16 in flight keep 1000 IOPS through 16 ms requests, which a shared test's
        // writeback beside this one can cause): both must deliver the asked rate.
        let v = run_json(&[
            "--target",
            t,
            "--size",
            "64m",
            "--engine",
            engine,
            "--qd",
            "16",
            "--rate-iops",
            "1000",
            "--time",
            "2s",
        ]);
        let iops = f(&v["summary"]["read"]["iops"]);
        assert!(
            (iops - 1000.0).abs() / 1000.0 < 0.05,
            "{engine}: {iops} IOPS at --rate-iops 1000"
        );
        // Same unpaced job at QD1: latency within noise of each other.
        let v = run_json(&[
            "--target", t, "--size", "64m", "--engine", engine, "--qd", "1", "--time", "2s",
        ]);
        res.push((
            f(&v["summary"]["read"]["iops"]),
            f(&v["summary"]["read"]["lat_us"]["p50"]),
        ));
    }
    let (u_iops, u_p50) = res[0];
    let (p_iops, p_p50) = res[1];
    let ratio = u_iops / p_iops;
    assert!(
        (0.7..1.43).contains(&ratio),
        "io_uring {u_iops} vs psync {p_iops} IOPS at QD1"
    );
    let lr = u_p50 / p_p50;
    assert!(
        (0.7..1.43).contains(&lr),
        "io_uring p50 {u_p50} vs psync {p_p50} us at QD1"
    );
}

#[test]
fn writes_land_on_several_targets_inside_the_region() {
    let _g = shared();
    let d = workdir();
    let a = d.path().join("a");
    let b = d.path().join("b");
    let targets = format!("{},{}", a.display(), b.display());
    let before_a = std::fs::read(&a).ok();
    assert!(before_a.is_none());
    let v = run_json(&[
        "--target",
        &targets,
        "--size",
        "16m",
        "--rw",
        "randwrite",
        "--region",
        "50%..75%",
        "--ios",
        "4000",
        "--qd",
        "8",
    ]);
    assert_eq!(u(&v["summary"]["write"]["ios"]), 4000);
    assert_eq!(v["targets"].as_array().unwrap().len(), 2);
    assert_eq!(v["options"]["region"]["start"]["pct"], 50.0);
}

#[test]
fn sequential_reads_and_block_split() {
    let _g = shared();
    let d = workdir();
    let t = d.path().join("data");
    let t = t.to_str().unwrap();
    let v = run_json(&[
        "--target", t, "--size", "64m", "--rw", "read", "--bs", "1m", "--qd", "4", "--ios", "200",
    ]);
    assert_eq!(u(&v["summary"]["read"]["bytes"]), 200 << 20);
    let v = run_json(&[
        "--target",
        t,
        "--rw",
        "randread",
        "--bs",
        "4k:50,64k:50",
        "--ios",
        "4000",
        "--dist",
        "zipf:1.1",
    ]);
    let ios = u(&v["summary"]["read"]["ios"]);
    let bytes = u(&v["summary"]["read"]["bytes"]);
    assert_eq!(ios, 4000);
    let big = (bytes - ios * 4096) / (65536 - 4096);
    let share = big as f64 / ios as f64;
    assert!((share - 0.5).abs() < 0.05, "64k share {share}");
}

#[test]
fn existing_files_are_read_only_unless_handed_over() {
    let _g = shared();
    let d = workdir();
    let t = d.path().join("theirs");
    let data: Vec<u8> = (0..1 << 20).map(|i: u32| (i * 7 % 251) as u8).collect();
    std::fs::write(&t, &data).unwrap();
    let p = t.to_str().unwrap();
    // Reads are fine.
    run_json(&["--target", p, "--ios", "100"]);
    // Writes are refused, and the file is untouched.
    let err = run_fails(&["--target", p, "--rw", "randwrite", "--ios", "100"], 2);
    assert!(
        err.contains("did not create") && err.contains("--allow-overwrite"),
        "{err}"
    );
    assert_eq!(std::fs::read(&t).unwrap(), data);
    // Handed over, writes happen.
    run_json(&[
        "--target",
        p,
        "--rw",
        "randwrite",
        "--ios",
        "100",
        "--allow-overwrite",
    ]);
    assert_ne!(std::fs::read(&t).unwrap(), data);
}

#[test]
fn created_files_are_marked_reused_and_incompressible() {
    let _g = shared();
    let d = workdir();
    let t = d.path().join("data");
    let p = t.to_str().unwrap();
    run_json(&["--target", p, "--size", "8m", "--ios", "10"]);
    assert_eq!(std::fs::metadata(&t).unwrap().len(), 8 << 20);
    // Second run: iogauge recognises its own file and may write to it without a flag.
    let v = run_json(&["--target", p, "--rw", "randwrite", "--ios", "100"]);
    assert_eq!(v["targets"][0]["owned"], true);
    assert_eq!(v["targets"][0]["created"], false);
    // A bigger --size extends and fills the file it owns.
    run_json(&["--target", p, "--size", "12m", "--ios", "10"]);
    let bytes = std::fs::read(&t).unwrap();
    assert_eq!(bytes.len(), 12 << 20);
    // Pre-filled with random data: no 4 KiB block is all zeros, and byte values are spread.
    assert!(
        bytes.chunks(4096).all(|c| c.iter().any(|&b| b != 0)),
        "a block was left unfilled"
    );
    let mut hist = [0u64; 256];
    bytes.iter().for_each(|&b| hist[b as usize] += 1);
    let mean = bytes.len() as f64 / 256.0;
    assert!(
        hist.iter().all(|&h| (h as f64 - mean).abs() / mean < 0.05),
        "byte histogram not flat"
    );
}

#[test]
fn default_scratch_target_in_the_working_directory() {
    let _g = shared();
    let d = workdir();
    let out = bin()
        .current_dir(d.path())
        .args(["run", "--size", "16m", "--time", "1s", "--json"])
        .output()
        .unwrap();
    assert_success(&out);
    assert!(d.path().join("iogauge-scratch/data").exists());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(u(&v["summary"]["read"]["ios"]) > 0);
}

#[test]
fn text_summary_names_the_job() {
    let _g = shared();
    let d = workdir();
    let t = d.path().join("data");
    let out = bin()
        .args([
            "run",
            "--target",
            t.to_str().unwrap(),
            "--size",
            "8m",
            "--ios",
            "500",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("randread 8k, QD 32 x 1 worker, io_uring, O_DIRECT"),
        "{s}"
    );
    assert!(s.contains("created and pre-filled"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.starts_with("read ") && l.contains("500")),
        "{s}"
    );
}

#[test]
fn ctrl_c_keeps_the_partial_result() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let child = spawn(&[
        "run",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "32m",
        "--time",
        "60s",
        "--json",
    ]);
    std::thread::sleep(Duration::from_millis(2500));
    sigint(&child);
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 130);
    let v: Value = serde_json::from_slice(&out.stdout).expect("partial result is JSON");
    assert_eq!(v["interrupted"], true);
    assert!(u(&v["summary"]["read"]["ios"]) > 0);
    let el = f(&v["summary"]["elapsed_s"]);
    assert!(el > 0.5 && el < 10.0, "elapsed {el}");
}

#[test]
fn ctrl_c_during_prefill_removes_the_partial_file() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("big");
    let child = spawn(&[
        "run",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "4g",
        "--time",
        "1s",
    ]);
    // Wait until the file exists (pre-fill under way), then interrupt.
    let t0 = std::time::Instant::now();
    while !t.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    sigint(&child);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted while pre-filling"), "{err}");
    assert!(!t.exists(), "the partial file must be removed");
}

/// Completed reads and writes of a block device, from /proc/diskstats (fields 4 and 8).
fn diskstats(dev: &str) -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap();
    let f: Vec<u64> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.get(2) == Some(&dev))
        .unwrap_or_else(|| panic!("{dev} not in /proc/diskstats"))[3..]
        .iter()
        .map(|x| x.parse().unwrap())
        .collect();
    (f[0], f[4])
}

#[test]
fn o_direct_ios_reach_the_device() {
    // The cross-check against the kernel's own counters: every I/O iogauge reports under
    // O_DIRECT was completed by the device (others may add more, never less).
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let p = t.to_str().unwrap();
    let v = run_json(&["--target", p, "--size", "64m", "--ios", "1"]);
    let dev = v["targets"][0]["device"]
        .as_str()
        .expect("target has a backing device")
        .to_string();
    let before = diskstats(&dev);
    run_json(&["--target", p, "--ios", "3000", "--qd", "8"]);
    let mid = diskstats(&dev);
    run_json(&[
        "--target",
        p,
        "--ios",
        "3000",
        "--qd",
        "8",
        "--rw",
        "randwrite",
    ]);
    let after = diskstats(&dev);
    let reads = mid.0 - before.0;
    let writes = after.1 - mid.1;
    // Random 8k I/Os rarely merge; allow 2% for the ones that do.
    assert!(
        reads >= 2940,
        "device completed {reads} reads for 3000 O_DIRECT reads"
    );
    assert!(
        writes >= 2940,
        "device completed {writes} writes for 3000 O_DIRECT writes"
    );
}

#[test]
fn workload_vs_hardware_and_device_intervals() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let p = t.to_str().unwrap();
    let v = run_json(&["--target", p, "--size", "64m", "--time", "2s", "--qd", "8"]);
    let dev = v["targets"][0]["device"].as_str().unwrap().to_string();
    let h = &v["hardware"];
    let ratio = f(&h["read"]["ratio"]);
    // O_DIRECT: every read reaches the disk (others may add reads, never take them away).
    assert!(ratio >= 0.95, "device/workload reads {ratio}: {h}");
    assert!(h.get("notes").is_none(), "the findings say it now: {h}");
    let named = |v: &Value, rule: &str| {
        v["findings"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x["rule"] == rule))
    };
    assert!(!named(&v, "page-cache-reads"), "{}", v["findings"]);
    // Raw snapshots on the grid: one at the start, one per interval boundary, one at the end.
    let intervals = v["intervals"].as_array().unwrap();
    let samples = v["samples"].as_array().unwrap().len();
    assert!(
        (intervals.len() + 1..=intervals.len() + 2).contains(&samples),
        "{samples} samples"
    );
    for iv in intervals.iter().filter(|i| f(&i["dur_s"]) > 0.9) {
        let disk = &iv["disks"][&dev];
        for k in [
            "r_s", "w_s", "rMB_s", "wMB_s", "rareq_sz", "wareq_sz", "aqu_sz", "r_await", "w_await",
            "util",
        ] {
            assert!(disk[k].is_number(), "interval disks.{dev}.{k}: {iv}");
        }
        let (w, dr) = (f(&iv["read"]["iops"]), f(&disk["r_s"]));
        assert!(dr >= 0.9 * w, "interval device r/s {dr} vs workload {w}");
        assert!(f(&iv["cpu"]["idle"]) <= 100.0);
    }
    // Through the page cache, a small file read twice is served from memory: said in words.
    let small = d.path().join("small");
    let s = small.to_str().unwrap();
    run_json(&["--target", s, "--size", "8m", "--buffered", "--ios", "2000"]);
    let v = run_json(&["--target", s, "--buffered", "--ios", "20000", "--qd", "4"]);
    let r = f(&v["hardware"]["read"]["ratio"]);
    assert!(r < 0.5, "cached reads reached the device: ratio {r}");
    assert!(named(&v, "page-cache-reads"), "{}", v["findings"]);
}
