//! `iogauge plan` end to end: the forward and reverse examples of the issue, JSON keys, a
//! history fixture checked by hand, a stored calibration as the per-disk source, and every
//! bad input as a one-line usage error.

use crate::common::{bin, f, fails, shared, u, workdir};
use iogauge_model::Document;
use iogauge_store::{NewRun, Store};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/plan")
        .join(name)
        .display()
        .to_string()
}

fn plan_json(args: &[&str]) -> Value {
    let out = bin()
        .arg("plan")
        .args(args)
        .arg("--json")
        .output()
        .expect("spawn iogauge");
    assert!(
        out.status.success(),
        "iogauge plan {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn plan_text(args: &[&str]) -> String {
    let out = bin()
        .arg("plan")
        .args(args)
        .output()
        .expect("spawn iogauge");
    assert!(
        out.status.success(),
        "iogauge plan {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn forward_example_sizes_disks_and_cells() {
    let _g = shared();
    let args = [
        "--iops",
        "10000",
        "--read-pct",
        "50",
        "--redundancy",
        "normal",
        "--disk-iops",
        "180",
        "--per-enclosure",
        "12",
    ];
    let v = plan_json(&args);
    assert_eq!(v["mode"], "size");
    assert_eq!(f(&v["workload_iops"]), 10_000.0);
    assert_eq!(f(&v["hardware_iops"]), 15_000.0);
    assert_eq!(u(&v["disks"]), 84);
    assert_eq!(format!("{:.1}", f(&v["disks_exact"])), "83.3");
    assert_eq!(u(&v["enclosures"]), 7);
    assert_eq!(format!("{:.1}", f(&v["enclosures_exact"])), "6.9");
    assert_eq!(format!("{:.3}", f(&v["utilization"])), "0.992");
    assert_eq!(v["binding"], "iops");

    let text = plan_text(&args);
    for want in ["15000", "84 (83.3)", "7 (6.9)", "99.2%", "write penalty 2"] {
        assert!(text.contains(want), "{want:?} missing in\n{text}");
    }
}

#[test]
fn redundancy_levels_set_the_hardware_iops() {
    let _g = shared();
    // (flags, hardware IOPS for 10,000 workload IOPS at 50:50)
    let table: [(&[&str], f64); 7] = [
        (&["--redundancy", "normal"], 15_000.0),
        (&["--redundancy", "high"], 20_000.0),
        (&["--redundancy", "raid0"], 10_000.0),
        (&["--redundancy", "raid10"], 15_000.0),
        (&["--redundancy", "raid5"], 25_000.0),
        (&["--redundancy", "raid6"], 35_000.0),
        (&["--write-penalty", "2.5"], 17_500.0),
    ];
    for (flags, want) in table {
        let mut args = vec!["--iops", "10000", "--read-pct", "50", "--disk-iops", "180"];
        args.extend_from_slice(flags);
        assert_eq!(f(&plan_json(&args)["hardware_iops"]), want, "{flags:?}");
    }
}

#[test]
fn reverse_mode_gives_the_workload_an_array_serves() {
    let _g = shared();
    // 250 disks × 200 IOPS = 50,000 disk write IOPS: 25,000 application writes when mirrored.
    let v = plan_json(&[
        "--disks",
        "250",
        "--disk-iops",
        "200",
        "--redundancy",
        "normal",
        "--read-pct",
        "0",
    ]);
    assert_eq!(v["mode"], "capacity");
    assert_eq!(f(&v["hardware_iops"]), 50_000.0);
    assert_eq!(f(&v["workload_iops"]), 25_000.0);
    assert_eq!(f(&v["write_only_iops"]), 25_000.0);
    assert_eq!(u(&v["disks"]), 250);

    let text = plan_text(&[
        "--disks",
        "168",
        "--disk-iops",
        "180",
        "--redundancy",
        "normal",
        "--read-pct",
        "0",
    ]);
    assert!(text.contains("serves 15120 workload IOPS"), "{text}");
}

#[test]
fn json_has_the_documented_keys_in_every_mode() {
    let _g = shared();
    let keys = [
        "workload_iops",
        "hardware_iops",
        "disks",
        "enclosures",
        "utilization",
    ];
    let mbps_keys = [
        "workload_mbps",
        "hardware_mbps",
        "disks_mbps",
        "enclosures_mbps",
        "utilization_mbps",
    ];
    let size = plan_json(&[
        "--iops",
        "10000",
        "--read-pct",
        "70",
        "--mbps",
        "900",
        "--redundancy",
        "high",
        "--disk-profile",
        "15k",
        "--per-enclosure",
        "12",
        "--target-util",
        "70%",
        "--read-cache-hit",
        "60%",
    ]);
    for k in keys.iter().chain(&mbps_keys) {
        assert!(!size[k].is_null(), "{k} missing or null: {size}");
    }
    assert_eq!(f(&size["disk_iops"]), 180.0);
    assert_eq!(f(&size["disk_mbps"]), 200.0);
    assert_eq!(f(&size["target_util"]), 0.7);
    // 7,000 reads × 0.4 + 3,000 writes × 3.
    assert!(
        (f(&size["hardware_iops"]) - 11_800.0).abs() < 1e-6,
        "{size}"
    );
    // 11,800 / (180 × 0.7) = 93.7 → 94 disks.
    assert_eq!(u(&size["disks"]), 94);

    let history = plan_json(&[
        "--history",
        &fixture("history.csv"),
        "--redundancy",
        "normal",
        "--disk-iops",
        "180",
    ]);
    let capacity = plan_json(&[
        "--disks",
        "24",
        "--disk-profile",
        "10k",
        "--redundancy",
        "raid5",
        "--read-pct",
        "80",
    ]);
    for (mode, v) in [("history", &history), ("capacity", &capacity)] {
        assert_eq!(v["mode"], mode);
        for k in keys.iter().chain(&mbps_keys) {
            assert!(v.get(k).is_some(), "{mode}: {k} missing: {v}");
        }
    }
}

/// history.csv at normal redundancy (hardware = read + 2 × write), sorted ascending:
/// 200 700 900 1200 1300 1600 2500 2700 3000(l11) 3000(l21) 3400 3600 4000(l4) 4000(l6) 4700
/// 5000(l7) 5000(l18) 6000(l12) 6800(l20) 7000(l9). Nearest rank of p95 over 20 periods is
/// ⌈19⌉ = 19: 6800, line 20 (18:00); p50 is rank 10: 3000, line 21; p90 rank 18: 6000.
/// 6800 / 180 = 37.8 → 38 disks, 4 cells of 12 (3.1).
#[test]
fn history_is_sized_at_its_p95_period() {
    let _g = shared();
    let v = plan_json(&[
        "--history",
        &fixture("history.csv"),
        "--redundancy",
        "normal",
        "--disk-iops",
        "180",
        "--per-enclosure",
        "12",
    ]);
    assert_eq!(v["mode"], "history");
    assert_eq!(u(&v["periods"]), 20);
    assert_eq!(f(&v["percentile"]), 95.0);
    let p = &v["percentiles"]["hardware_iops"];
    let got = [&p["p50"], &p["p90"], &p["p95"], &p["p99"], &p["max"]].map(f);
    assert_eq!(got, [3000.0, 6000.0, 6800.0, 7000.0, 7000.0]);
    assert_eq!(
        (u(&v["sized_line"]), v["sized_timestamp"].as_str()),
        (20, Some("2024-03-01 18:00"))
    );
    assert_eq!(f(&v["hardware_iops"]), 6800.0);
    assert_eq!(f(&v["workload_iops"]), 5900.0);
    assert_eq!((u(&v["disks"]), u(&v["enclosures"])), (38, 4));
    let top: Vec<u64> = v["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| u(&t["line"]))
        .collect();
    assert_eq!(top, [9, 20, 12, 7, 18, 16, 4, 6, 15, 3]);
    assert_eq!(v["top"][0]["timestamp"], "2024-03-01 07:00");
    let bars = v["histogram"].as_array().unwrap();
    assert_eq!(bars.iter().map(|b| u(&b["periods"])).sum::<u64>(), 20);

    let p50 = plan_json(&[
        "--history",
        &fixture("history.csv"),
        "--percentile",
        "50",
        "--redundancy",
        "normal",
        "--disk-iops",
        "180",
    ]);
    assert_eq!(
        (u(&p50["sized_line"]), f(&p50["hardware_iops"])),
        (21, 3000.0)
    );

    let text = plan_text(&[
        "--history",
        &fixture("history.csv"),
        "--redundancy",
        "normal",
        "--disk-iops",
        "180",
    ]);
    for want in [
        "20 periods",
        "p95",
        "top 10 periods",
        "2024-03-01 07:00",
        "needs 38 disks",
    ] {
        assert!(text.contains(want), "{want:?} missing in\n{text}");
    }
}

/// awr.csv through --columns at high redundancy (hardware = read + 3 × write): IOPS
/// 2100, 4200, 4400, 3300; MB/s 70, 450, 260, 75. p95 of 4 periods is rank 4, the maximum:
/// 4400 IOPS (line 4) → 25 disks of 180; 450 MB/s (line 3) → 3 disks of 200.
#[test]
fn history_columns_map_an_awr_export_with_mbps() {
    let _g = shared();
    let v = plan_json(&[
        "--history",
        &fixture("awr.csv"),
        "--columns",
        "timestamp=BEGIN_TIME,read_iops=PHYRDS_PS,write_iops=PHYWRTS_PS",
        "--columns",
        "read_mbps=READ_MB_PS,write_mbps=WRITE_MB_PS",
        "--redundancy",
        "high",
        "--disk-profile",
        "15k",
    ]);
    assert_eq!((u(&v["sized_line"]), u(&v["sized_line_mbps"])), (4, 3));
    assert_eq!(
        (f(&v["hardware_iops"]), f(&v["hardware_mbps"])),
        (4400.0, 450.0)
    );
    assert_eq!((u(&v["disks"]), u(&v["disks_mbps"])), (25, 3));
    assert_eq!(v["binding"], "iops");
}

/// A real stored document of `kind` (captured from this iogauge) with `fields` replaced.
fn document(kind: &str, fields: &[(&str, Value)]) -> Document {
    let name = match kind {
        "calibrate" => "calibrate.json",
        _ => "run_randread.json",
    };
    let path = format!(
        "{}/../campaign/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for (k, x) in fields {
        v[*k] = x.clone();
    }
    Document::from_value(v).expect("a document")
}

fn insert(store: &Path, kind: &str, fields: &[(&str, Value)]) -> i64 {
    let mut s = Store::open(store).expect("open the test store");
    s.insert(&NewRun {
        document: &document(kind, fields),
        histograms: &[],
        campaign: None,
    })
    .expect("insert a run")
}

#[test]
fn from_run_divides_a_calibration_by_its_disks() {
    let _g = shared();
    let dir = workdir();
    let store = dir.path().join("results.sqlite");
    let calib = insert(
        &store,
        "calibrate",
        &[
            ("max_iops", 7200.0.into()),
            ("max_mbps", 8000.0.into()),
            ("num_disks", 40.into()),
        ],
    );
    let no_iops = insert(
        &store,
        "calibrate",
        &[
            ("max_iops", Value::Null),
            ("max_mbps", 800.0.into()),
            ("num_disks", 4.into()),
        ],
    );
    let run = insert(&store, "run", &[]);
    let store_arg = store.display().to_string();
    let calib_arg = calib.to_string();
    let v = plan_json(&[
        "--from-run",
        &calib_arg,
        "--store",
        &store_arg,
        "--iops",
        "10000",
        "--read-pct",
        "50",
        "--mbps",
        "1000",
        "--redundancy",
        "normal",
    ]);
    assert_eq!((f(&v["disk_iops"]), f(&v["disk_mbps"])), (180.0, 200.0));
    assert_eq!(u(&v["disks"]), 84);
    // 500 + 2 × 500 = 1,500 MB/s over 200 MB/s per disk: 7.5 → 8.
    assert_eq!(u(&v["disks_mbps"]), 8);

    let base = [
        "--store",
        &store_arg,
        "--iops",
        "100",
        "--read-pct",
        "50",
        "--redundancy",
        "normal",
    ];
    let cases = [
        (run.to_string(), "is a run, not a calibration"),
        (no_iops.to_string(), "has no max_iops"),
        ("999".to_string(), "no run 999"),
    ];
    for (id, want) in cases {
        let mut args = vec!["plan", "--from-run", &id];
        args.extend_from_slice(&base);
        let err = fails(&args, 2);
        assert!(
            err.contains(want) && err.contains("--from-run"),
            "{id}: {err}"
        );
    }
}

#[test]
fn bad_history_files_name_the_line_and_column() {
    let _g = shared();
    let cases = [
        ("bad_row.csv", "line 3: 2 fields where the header has 3"),
        (
            "missing_column.csv",
            "line 1: no column \"read_iops\" for read_iops",
        ),
        (
            "negative.csv",
            "line 3, column 3 (write_iops): -5 is negative",
        ),
        (
            "non_numeric.csv",
            "line 3, column 2 (read_iops): \"lots\" is not a number",
        ),
        ("empty.csv", "line 1: the file is empty"),
        ("does-not-exist.csv", "cannot open"),
    ];
    for (file, want) in cases {
        let path = fixture(file);
        let err = fails(
            &[
                "plan",
                "--history",
                &path,
                "--redundancy",
                "normal",
                "--disk-iops",
                "180",
            ],
            2,
        );
        assert!(err.contains(want), "{file}: {err}");
        assert!(err.contains(&format!("--history {path}")), "{file}: {err}");
    }
}

#[test]
fn bad_flags_are_usage_errors_naming_the_flag() {
    let _g = shared();
    let w = ["--iops", "1000", "--read-pct", "50"];
    let d = ["--disk-iops", "180"];
    let r = ["--redundancy", "normal"];
    let cat = |parts: &[&[&'static str]]| -> Vec<&'static str> {
        let mut v = vec!["plan"];
        for p in parts {
            v.extend_from_slice(p);
        }
        v
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            cat(&[&w, &r, &["--disk-profile", "5.4k"]]),
            "--disk-profile",
        ),
        (cat(&[&w, &d, &["--redundancy", "raid7"]]), "raid7"),
        (
            cat(&[&w, &d, &r, &["--history", "x.csv"]]),
            "--iops and --history",
        ),
        (cat(&[&w, &d, &r, &["--disk-profile", "15k"]]), "use one"),
        (
            cat(&[&w, &d, &r, &["--write-penalty", "3"]]),
            "--redundancy and --write-penalty",
        ),
        (
            cat(&[&w, &d, &["--write-penalty", "0.5"]]),
            "'0.5' for '--write-penalty <N>'",
        ),
        (cat(&[&w, &d]), "--redundancy"),
        (cat(&[&w, &r]), "--disk-iops"),
        (cat(&[&d, &r]), "say what to plan"),
        (cat(&[&["--iops", "1000"], &d, &r]), "--read-pct"),
        (cat(&[&["--disks", "10"], &d, &r]), "--read-pct"),
        (
            cat(&[&w, &d, &r, &["--percentile", "95"]]),
            "--percentile applies to --history",
        ),
        (
            cat(&[&w, &d, &r, &["--columns", "read_iops=r/s"]]),
            "--columns applies to --history",
        ),
        (cat(&[&w, &d, &r, &["--mbps", "100"]]), "--disk-mbps"),
        (
            cat(&[&w, &r, &["--disk-profile", "15k", "--disk-mbps", "100"]]),
            "--disk-mbps goes with --disk-iops",
        ),
        (cat(&[&w, &d, &r, &["--read-pct", "101"]]), "--read-pct"),
        (
            cat(&[&w, &d, &r, &["--target-util", "0%"]]),
            "--target-util",
        ),
        (
            cat(&[&w, &d, &r, &["--read-cache-hit", "100%"]]),
            "--read-cache-hit",
        ),
        (cat(&[&w, &r, &["--disk-iops", "0"]]), "--disk-iops"),
        (
            cat(&[&w, &d, &r, &["--per-enclosure", "0"]]),
            "--per-enclosure",
        ),
        (
            cat(&[&d, &r, &["--history", "h.csv", "--read-pct", "50"]]),
            "--read-pct does not apply to --history",
        ),
        (
            cat(&[&d, &r, &["--history", "h.csv", "--columns", "reads=r/s"]]),
            "--columns reads=r/s: unknown role",
        ),
    ];
    for (args, want) in cases {
        let err = fails(&args, 2);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn help_states_each_profile_figure() {
    let _g = shared();
    let out = bin().args(["plan", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for p in iogauge_plan::DiskProfile::ALL {
        let figures = format!("{p} {}, {}", p.iops(), p.mbps());
        assert!(help.contains(&figures), "help lacks {figures:?}:\n{help}");
    }
}
