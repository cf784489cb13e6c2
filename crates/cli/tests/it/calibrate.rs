//! `iogauge calibrate`, `history` and `show` end to end on a real O_DIRECT file and a real
//! SQLite store: the CALIBRATE_IO figures, the stored run read back byte for byte, Ctrl-C
//! keeping finished points, labels, and the errors. ORION's matrix and large I/O types in
//! `calibrate/matrix.rs`.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

/// A short calibration: small file, half-second points, a low ceiling.
fn quick(target: &str, extra: &[&str]) -> Vec<String> {
    let size = [
        "--size",
        "64m",
        "--point-time",
        "500ms",
        "--max-latency",
        "50ms",
    ];
    owned(&[&["calibrate", "--target", target], &size, extra])
}

/// A command line of owned arguments (a [`quick`] one) run to success: its JSON.
fn json_of_args(args: &[String]) -> Value {
    json_of(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn calibration_figures_store_and_show() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("cal");
    // --cache-size: unmeasured large reads before each point (ORION's cache flush).
    let args = quick(t.to_str().unwrap(), &["--json", "--cache-size", "4m"]);
    let out = succeeds(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let printed = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(v["kind"], "calibrate");
    for k in ["max_iops", "latency", "max_mbps", "max_pmbps"] {
        assert!(f(&v[k]) > 0.0, "{k}: {}", v[k]);
    }
    assert_eq!(v["num_disks"], 1);
    assert!(v["started_at"].as_str().unwrap() < v["ended_at"].as_str().unwrap());
    let points = v["points"].as_array().unwrap();
    let small: Vec<&Value> = points.iter().filter(|p| p["step"] == "small").collect();
    // Doubling from 1: 1, 2, 4, ... up to the ceiling of 64 or the first point over the cap.
    assert_eq!(u(&small[0]["outstanding"]), 1);
    assert!(small.len() >= 3, "{} small points", small.len());
    assert!(points.iter().any(|p| p["step"] == "large"));
    assert_eq!(points.iter().filter(|p| p["step"] == "single").count(), 1);
    assert!(points
        .iter()
        .all(|p| !p["intervals"].as_array().unwrap().is_empty()));
    // Each point's intervals carry what the disk under the file did (iostat figures).
    let dev = v["targets"][0]["device"].as_str().unwrap();
    for p in points {
        let iv = &p["intervals"][0];
        assert!(
            iv["disks"][dev]["r_s"].is_number(),
            "point {p} interval lacks {dev}"
        );
    }
    // max_iops is the best point under the cap, and latency is that point's mean in ms.
    let best = small
        .iter()
        .filter(|p| f(&p["lat_us"]["mean"]) <= 50_000.0)
        .max_by(|a, b| f(&a["iops"]).total_cmp(&f(&b["iops"])))
        .unwrap();
    assert_eq!(f(&v["max_iops"]), f(&best["iops"]));
    assert!((f(&v["latency"]) - f(&best["lat_us"]["mean"]) / 1e3).abs() < 1e-9);
    // Preflight saw the file's filesystem and device.
    assert_eq!(v["preflight"]["targets"][0]["fs"], "ext4");
    assert!(v["preflight"]["targets"][0]["device"]["name"].is_string());

    // Stored: history lists it, show --json gives the document back byte for byte.
    let id = stored_id(&out.stderr);
    let rows = json_of(&["history", "--json"]);
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .expect("run listed");
    assert_eq!(row["kind"], "calibrate");
    assert_eq!(f(&row["max_iops"]), f(&v["max_iops"]));
    assert_eq!(text_of(&["show", &id.to_string(), "--json"]), printed);
    let text = text_of(&["show", &id.to_string()]);
    assert!(
        text.starts_with("iogauge calibrate:") && text.contains("preflight:"),
        "{text}"
    );
    assert!(
        text.contains("max_iops   = ") && text.contains("max_pmbps  = "),
        "{text}"
    );
    // Where the time went at max_iops's depth, from the tracer (`succeeds` checked that the
    // parts add up).
    assert!(
        text.lines()
            .any(|l| l.starts_with("where an I/O's time went at max_iops (")),
        "{text}"
    );
}

#[test]
fn history_lists_newest_first_with_runs_and_calibrations() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("own.sqlite");
    let st = store.to_str().unwrap();
    let t = d.path().join("data");
    let p = t.to_str().unwrap();
    for _ in 0..2 {
        succeeds(&[
            "run", "--target", p, "--size", "16m", "--ios", "200", "--store", st,
        ]);
    }
    let text = text_of(&["history", "--store", st]);
    let ids: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .filter(|id| id.parse::<u64>().is_ok())
        .collect();
    assert_eq!(ids, ["2", "1"], "{text}");
    assert!(
        text.contains("run: max_iops and max_mbps are the measured window's"),
        "{text}"
    );
    let s = bin().args(["show", "2", "--store", st]).output().unwrap();
    assert!(String::from_utf8_lossy(&s.stdout).starts_with("iogauge run: randread 8k"));
    let err = String::from_utf8(
        bin()
            .args(["show", "3", "--store", st])
            .output()
            .unwrap()
            .stderr,
    )
    .unwrap();
    assert!(
        err.contains("no run 3") && err.contains("iogauge history"),
        "{err}"
    );
}

#[test]
fn ctrl_c_stores_the_finished_points_as_interrupted() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("cal");
    // Writes mixed in (ORION -write): allowed on iogauge's own file.
    let mut args = quick(t.to_str().unwrap(), &["--json", "--write-pct", "30"]);
    for a in args.iter_mut().filter(|a| *a == "500ms") {
        *a = "1s".into();
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = spawn(&args);
    std::thread::sleep(Duration::from_millis(5500));
    sigint(&child);
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 130);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["options"]["write_pct"], 30);
    let n = v["points"].as_array().unwrap().len();
    assert!(n >= 2, "finished points kept: {n}");
    let id = stored_id(&out.stderr);
    let h: Value =
        serde_json::from_slice(&bin().args(["history", "--json"]).output().unwrap().stdout)
            .unwrap();
    let row = h
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap();
    assert_eq!(row["status"], "interrupted");
}

#[test]
fn calibrate_errors() {
    let _g = shared();
    let d = workdir();
    // Writes only on iogauge's own files.
    let theirs = d.path().join("theirs");
    std::fs::write(&theirs, vec![7u8; 8 << 20]).unwrap();
    let out = bin()
        .args([
            "calibrate",
            "--target",
            theirs.to_str().unwrap(),
            "--write-pct",
            "30",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-overwrite"));
    // A store that is not one is refused and left alone.
    let bogus = d.path().join("notes.txt");
    std::fs::write(&bogus, "my notes\n").unwrap();
    let out = bin()
        .args(["history", "--store", bogus.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not an iogauge results store") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&bogus).unwrap(), "my notes\n");
    for (args, flag) in [
        (vec!["calibrate", "--max-latency", "0ms"], "--max-latency"),
        (vec!["calibrate", "--point-time", "100ms"], "--point-time"),
        (vec!["calibrate", "--criterion", "p42"], "--criterion"),
        (vec!["calibrate", "--disks", "0"], "--disks"),
        (vec!["calibrate", "--write-pct", "101"], "--write-pct"),
        (vec!["calibrate", "--block", "1000"], "--block"),
        (vec!["show", "x"], "ID"),
    ] {
        let err = fails(&args, 2);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

/// `--label` (ORION's -testname) on run and calibrate: stored in the document's head, shown
/// by history (table and JSON) and show; a blank or control-character label is a usage error.
#[test]
fn labels_are_stored_and_shown() {
    let _g = heavy();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let t = d.path().join("lab");
    let on = |args: &[&str]| {
        let out = bin()
            .env("IOGAUGE_STORE", &store)
            .args(args)
            .output()
            .unwrap();
        assert_ran(&out, &format!("{args:?}"));
        String::from_utf8(out.stdout).unwrap()
    };
    let ts = t.to_str().unwrap();
    on(&[
        "run", "--target", ts, "--size", "16m", "--time", "1s", "--label", "before",
    ]);
    let mut a = quick(ts, &["--label", "after the update"]);
    a.push("--disks".into());
    a.push("1".into());
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let text = on(&a);
    assert!(text.contains("label: after the update"), "{text}");
    let h: Value = serde_json::from_str(&on(&["history", "--json"])).unwrap();
    let labels: Vec<&str> = h
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(labels, ["after the update", "before"]);
    let table = on(&["history"]);
    assert!(table.contains("[before] "), "{table}");
    let shown = on(&["show", "2"]);
    assert!(shown.contains("label: after the update"), "{shown}");
    let doc: Value = serde_json::from_str(&on(&["show", "1", "--json"])).unwrap();
    assert_eq!(doc["label"], "before");
    for bad in ["", "  ", "a\tb"] {
        let e = fails(&["run", "--target", ts, "--time", "1s", "--label", bad], 2);
        assert!(e.contains("--label"), "{e}");
    }
}

mod matrix;
