//! ORION's matrix and large I/O types: the CSV files (never over an existing one), `-type seq`,
//! `-matrix point` and `row`, each step's stored histogram, and the flags refused where they
//! mean nothing.

use super::*;

#[test]
fn matrix_writes_orion_csv_files_and_never_overwrites() {
    // The matrix's size follows the device's latency; what is asserted holds at any size.
    let _g = busy();
    let d = workdir();
    let t = d.path().join("cal");
    let csv = d.path().join("csv");
    let mut args = quick(
        t.to_str().unwrap(),
        &["--matrix", "--csv", csv.to_str().unwrap(), "--json"],
    );
    // A tight cap keeps the matrix small: its small levels end at the max_iops depth.
    let cap = args.iter().position(|a| a == "50ms").unwrap();
    args[cap] = "2ms".into();
    let v = json_of_args(&args);
    assert_eq!(
        v["options"]["matrix"], "detailed",
        "a bare --matrix is detailed"
    );
    let cells = v["matrix"].as_array().expect("matrix in the document");
    let iops = std::fs::read_to_string(csv.join("iops.csv")).unwrap();
    let rows: Vec<&str> = iops.lines().collect();
    let small_levels = rows[0].split(',').count() - 1;
    let large_levels = rows.len() - 1;
    assert_eq!(
        cells.len(),
        small_levels * large_levels - 1,
        "every cell but (0, 0)\n{iops}"
    );
    assert!(rows[0].starts_with("large\\small iops,0,1"), "{iops}");
    assert!(rows[1].starts_with("0,,"), "no I/O in the corner: {iops}");
    for f in ["mbps.csv", "lat.csv"] {
        assert_eq!(
            std::fs::read_to_string(csv.join(f))
                .unwrap()
                .lines()
                .count(),
            rows.len(),
            "{f}"
        );
    }
    // Large I/O in a cell with small I/O: both ran together.
    let mixed = cells
        .iter()
        .find(|c| u(&c["small"]) > 0 && u(&c["large"]) > 0)
        .unwrap();
    assert!(
        f(&mixed["small_iops"]) > 0.0 && f(&mixed["large_mbps"]) > 0.0,
        "{mixed}"
    );
    // A second run refuses to replace the files, before measuring anything.
    let again = bin().args(&args).output().unwrap();
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{err}");
    assert!(err.contains("iops.csv already exists"), "{err}");
    let err = String::from_utf8_lossy(
        &bin()
            .args(["calibrate", "--csv", "x"])
            .output()
            .unwrap()
            .stderr,
    )
    .into_owned();
    assert!(err.contains("--matrix"), "{err}");
}
/// The stored histograms of run `id` in the test store, decoded, by label.
fn stored_hists(id: i64) -> Vec<(String, iogauge_stats::LatHist)> {
    let store = iogauge_store::Store::open(&test_store()).unwrap();
    let run = store.get(id).unwrap().expect("the run is stored");
    run.histograms
        .iter()
        .map(|(l, b)| (l.clone(), iogauge_stats::LatHist::decode(b).unwrap()))
        .collect()
}

/// ORION's `-type seq`, `-matrix point` and IOPS per disk in one short calibration: large
/// points run one worker per stream (one stream per outstanding I/O), the one cell asked for
/// is the only one, iops_per_disk is max_iops over --disks, and every step's stored
/// histogram holds exactly its counting points' I/Os.
#[test]
fn sequential_large_ios_point_matrix_and_step_histograms() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("cal");
    let mut args = quick(
        t.to_str().unwrap(),
        &[
            "--json",
            "--large-type",
            "seq",
            "--disks",
            "2",
            "--matrix",
            "point",
            "--num-small",
            "2",
            "--num-large",
            "1",
        ],
    );
    // A tight cap keeps the small step short.
    let cap = args.iter().position(|a| a == "50ms").unwrap();
    args[cap] = "2ms".into();
    let out = succeeds(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let o = &v["options"];
    assert_eq!(o["large_type"], "seq");
    assert_eq!(o["matrix"], "point");
    assert_eq!((u(&o["num_small"]), u(&o["num_large"])), (2, 1));
    let points = v["points"].as_array().unwrap();
    let large: Vec<&Value> = points.iter().filter(|p| p["step"] == "large").collect();
    assert!(large.len() >= 2, "{} large points", large.len());
    for p in &large {
        assert_eq!(
            p["workers"], p["outstanding"],
            "one stream per outstanding I/O: {p}"
        );
    }
    let single = points.iter().find(|p| p["step"] == "single").unwrap();
    assert_eq!(single["workers"], 1);
    let cells = v["matrix"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "{cells:?}");
    assert_eq!((u(&cells[0]["small"]), u(&cells[0]["large"])), (2, 1));
    assert!(f(&cells[0]["small_iops"]) > 0.0 && f(&cells[0]["large_mbps"]) > 0.0);
    assert_eq!(f(&v["iops_per_disk"]), f(&v["max_iops"]) / 2.0);

    let hists = stored_hists(stored_id(&out.stderr));
    let get = |label: &str| {
        &hists
            .iter()
            .find(|(l, _)| l == label)
            .unwrap_or_else(|| panic!("no {label} histogram"))
            .1
    };
    for step in ["small", "large", "single"] {
        let ios: u64 = points
            .iter()
            .filter(|p| p["step"] == step && p.get("superseded").is_none())
            .map(|p| u(&p["ios"]))
            .sum();
        assert!(ios > 0, "{step}");
        assert_eq!(get(step).count(), ios, "{step}");
    }
    // The cell's small I/Os: its IOPS over the measured window.
    let window = f(&o["point_time"]);
    let cell_ios = f(&cells[0]["small_iops"]) * window;
    let got = get("matrix small").count() as f64;
    assert!(
        (got - cell_ios).abs() <= cell_ios * 0.05 + 1.0,
        "{got} vs {cell_ios}"
    );
}

/// `--matrix row`: every cell at the --num-large level, the small levels across; its CSV has
/// one row.
#[test]
fn matrix_row_keeps_the_large_level() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("cal");
    let csv = d.path().join("csv");
    let mut args = quick(
        t.to_str().unwrap(),
        &[
            "--json",
            "--matrix",
            "row",
            "--num-large",
            "1",
            "--csv",
            csv.to_str().unwrap(),
        ],
    );
    let cap = args.iter().position(|a| a == "50ms").unwrap();
    args[cap] = "2ms".into();
    let v = json_of_args(&args);
    let cells = v["matrix"].as_array().unwrap();
    assert!(cells.len() >= 2, "{cells:?}");
    assert!(cells.iter().all(|c| u(&c["large"]) == 1), "{cells:?}");
    let smalls: Vec<u64> = cells.iter().map(|c| u(&c["small"])).collect();
    assert_eq!(smalls[0], 0, "the small levels start at 0: {smalls:?}");
    assert!(smalls.windows(2).all(|w| w[0] < w[1]), "{smalls:?}");
    let iops = std::fs::read_to_string(csv.join("iops.csv")).unwrap();
    assert_eq!(iops.lines().count(), 2, "{iops}");
    assert!(iops.lines().nth(1).unwrap().starts_with("1,"), "{iops}");
}

/// --num-small/--num-large only where a mode fixes that level, and always there; seq large
/// I/Os read or write, not both: one line naming the flag, exit 2, before any I/O.
#[test]
fn matrix_and_large_type_flags_are_refused_where_they_mean_nothing() {
    let _g = shared();
    for (args, flag) in [
        (vec!["--matrix", "row"], "--num-large"),
        (vec!["--matrix", "col"], "--num-small"),
        (vec!["--matrix", "point", "--num-small", "1"], "--num-large"),
        (vec!["--num-small", "4"], "--num-small"),
        (vec!["--matrix", "--num-large", "2"], "--num-large"),
        (
            vec!["--matrix", "row", "--num-large", "1", "--num-small", "4"],
            "--num-small",
        ),
        (
            vec!["--matrix", "point", "--num-small", "0", "--num-large", "0"],
            "--num-small 0",
        ),
        (vec!["--matrix", "rows"], "--matrix"),
        (
            vec!["--large-type", "seq", "--write-pct", "30"],
            "--large-type seq",
        ),
        (vec!["--large-type", "stream"], "--large-type"),
        (vec!["--csv", "x", "--matrix", "basic"], "--matrix"),
    ] {
        let mut a = vec!["calibrate"];
        a.extend(args.iter());
        let err = fails(&a, 2);
        assert!(err.contains(flag), "{a:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{a:?}: {err}");
    }
}
