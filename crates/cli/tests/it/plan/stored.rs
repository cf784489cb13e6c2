//! A stored calibration (or run) as the per-disk figures: its IOPS and MB/s divided by its
//! disks.

use super::*;

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
