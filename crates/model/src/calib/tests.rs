//! A calibration's options as stored: old documents' matrix booleans, the modes and large
//! type round-tripping, the setup's fields in their place, IOPS per disk.

use super::*;
use crate::Document;

const CALIBRATE_V1: &str = include_str!("../../../campaign/tests/fixtures/calibrate.json");

fn spec_of(json: &str) -> CalibrateSpec {
    match Document::from_json(json).unwrap() {
        Document::Calibration(c) => c.options,
        other => panic!("a calibration, not a {}", other.meta().kind),
    }
}

/// Documents stored before ORION's modes said `"matrix": false|true` and had no large
/// type: they read as basic or detailed, with random large I/Os.
#[test]
fn old_matrix_bools_read_as_basic_and_detailed() {
    assert!(CALIBRATE_V1.contains("\"matrix\": false"));
    let old = spec_of(CALIBRATE_V1);
    assert_eq!(old.matrix, MatrixMode::Basic);
    assert_eq!(old.large_type, LargeType::Rand);
    assert_eq!((old.num_small, old.num_large), (None, None));
    let detailed = spec_of(&CALIBRATE_V1.replace("\"matrix\": false", "\"matrix\": true"));
    assert_eq!(detailed.matrix, MatrixMode::Detailed);
    let none = spec_of(&CALIBRATE_V1.replace("\"matrix\": false,", ""));
    assert_eq!(none.matrix, MatrixMode::Basic);
}

#[test]
fn modes_and_large_type_round_trip() {
    let mut s = spec_of(CALIBRATE_V1);
    s.matrix = MatrixMode::Row;
    s.num_large = Some(4);
    s.large_type = LargeType::Seq;
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["matrix"], "row");
    assert_eq!(v["num_large"], 4);
    assert!(v.get("num_small").is_none());
    assert_eq!(v["large_type"], "seq");
    let back: CalibrateSpec = serde_json::from_value(v).unwrap();
    assert_eq!(back, s);
    for m in ["basic", "detailed", "row", "col", "point"] {
        assert_eq!(m.parse::<MatrixMode>().unwrap().name(), m);
    }
    assert!("rows".parse::<MatrixMode>().unwrap_err().contains("basic"));
    assert_eq!("seq".parse::<LargeType>(), Ok(LargeType::Seq));
    assert!("sequential".parse::<LargeType>().is_err());
}

/// The I/O setup is flattened where its fields always stood: a calibration's options
/// serialise in the order documents have had since schema 1.
#[test]
fn options_keep_their_key_order() {
    let mut s = spec_of(CALIBRATE_V1);
    s.setup.layout = Some(crate::spec::LayoutOpts {
        spec: "stripe:64k".parse().unwrap(),
        failgroups: None,
        degraded: Vec::new(),
        read_from: crate::layout::ReadFrom::Primary,
        member_iops: None,
    });
    let text = serde_json::to_string(&s).unwrap();
    let keys = [
        "small_bs",
        "large_bs",
        "point_time",
        "point_ramp",
        "max_latency_us",
        "criterion",
        "disks",
        "max_outstanding",
        "write_pct",
        "cache_size",
        "matrix",
        "large_type",
        "engine",
        "direct",
        "region",
        "seed",
        "layout",
        "mem",
        "fixed_bufs",
        "ring_setup",
        "submit_batch",
    ];
    let at: Vec<usize> = keys
        .iter()
        .map(|k| {
            text.find(&format!("\"{k}\":"))
                .unwrap_or_else(|| panic!("{k}: {text}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
    let back: CalibrateSpec = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s);
}

#[test]
fn iops_per_disk_divides_max_iops() {
    assert_eq!(iops_per_disk(Some(1200.0), 4), Some(300.0));
    assert_eq!(iops_per_disk(None, 4), None);
    let Document::Calibration(c) = Document::from_json(CALIBRATE_V1).unwrap() else {
        panic!("a calibration");
    };
    // Read from a document stored before the field: absent, not invented.
    assert_eq!(c.iops_per_disk, None);
}
