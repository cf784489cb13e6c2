//! `iogauge plan` end to end: the forward and reverse examples of the issue, JSON keys, a
//! history fixture checked by hand, a stored calibration as the per-disk source, and every
//! bad input as a one-line usage error. Here the examples and the JSON keys; histories in
//! `plan/history.rs`, stored calibrations in `plan/stored.rs`, flags in `plan/flags.rs`.

use crate::common::{bin, f, fails, json_of, shared, text_of, u, workdir};
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
    json_of(&[&["plan"], args, &["--json"]].concat())
}

fn plan_text(args: &[&str]) -> String {
    text_of(&[&["plan"], args].concat())
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

mod flags;
mod history;
mod stored;
