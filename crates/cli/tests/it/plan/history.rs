//! Sizing from a history of periods (a CSV, or an AWR export through --columns), checked by
//! hand, and bad history files named by line and column.

use super::*;

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
