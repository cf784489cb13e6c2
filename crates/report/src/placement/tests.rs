//! The placement table on the captured calibration and db run (both on vda): each figure is
//! the document's own, ratios are db ÷ calibration, the disks divide the per-disk figures,
//! and the device await is weighted by reads.

use super::*;
use iogauge_model::derive::DiskRates;
use iogauge_model::Document;

const CALIBRATE: &str = include_str!("../../../campaign/tests/fixtures/calibrate.json");
const DB_RUN: &str = include_str!("../../../campaign/tests/fixtures/db_run.json");

fn fixtures() -> (CalibrationReport, DbReport) {
    match (
        Document::from_json(CALIBRATE).unwrap(),
        Document::from_json(DB_RUN).unwrap(),
    ) {
        (Document::Calibration(c), Document::DbRun(d)) => (*c, *d),
        _ => panic!("a calibration and a db run"),
    }
}

/// The row keys, in order.
const METRICS: [&str; 7] = [
    "reads_s",
    "pg_reads_s",
    "read_ms",
    "device_await_ms",
    "reads_s_per_disk",
    "read_mib_s",
    "max_mib_s",
];

fn get<'a>(p: &'a Placement, metric: &str) -> &'a Row {
    p.rows.iter().find(|r| r.metric == metric).unwrap()
}

#[test]
fn every_figure_is_the_documents_own() {
    let (cal, db) = fixtures();
    let p = placement((3, &cal), (4, &db));
    let keys: Vec<&str> = p.rows.iter().map(|r| r.metric).collect();
    assert_eq!(keys, METRICS);
    let cache = db.cache.as_ref().unwrap();
    let reads = get(&p, "reads_s");
    assert_eq!(reads.calibration, cal.max_iops);
    assert_eq!(reads.db_run, Some(cache.device_reads_s));
    assert_eq!(
        reads.ratio,
        Some(cache.device_reads_s / cal.max_iops.unwrap())
    );
    let pg = get(&p, "pg_reads_s");
    assert_eq!(
        (pg.calibration, pg.db_run, pg.ratio),
        (None, Some(db.summary.db.physical_reads_s), None),
        "PostgreSQL's reads, without a ratio"
    );
    // The criterion is the mean: the latency row is the calibration's own `latency`.
    let lat = get(&p, "read_ms");
    assert!((lat.calibration.unwrap() - cal.latency.unwrap()).abs() < 1e-12);
    assert_eq!(lat.db_run, db.summary.db.avg_read_ms);
    let per = get(&p, "reads_s_per_disk");
    assert_eq!(per.calibration, cal.max_iops, "one disk");
    assert_eq!(per.db_run, Some(cache.device_reads_s));
    assert_eq!(get(&p, "read_mib_s").db_run, Some(cache.device_read_mb_s));
    let large = get(&p, "max_mib_s");
    assert_eq!((large.calibration, large.db_run), (cal.max_mbps, None));
    assert!(get(&p, "device_await_ms").calibration.unwrap() > 0.0);
    assert_eq!(p.same_disks, Some(true));
    assert_eq!(
        (p.calibration.disks, p.db_run.disks),
        (Some(1), Some(1)),
        "the db run stored before --disks: its sampled vda"
    );
    assert_eq!(p.calibration.devices, ["vda"]);
    assert_eq!(p.outstanding, Some(64));
}

#[test]
fn the_disks_divide_the_figures_per_disk() {
    let (mut cal, mut db) = fixtures();
    cal.num_disks = 2;
    db.num_disks = Some(4);
    let p = placement((3, &cal), (4, &db));
    let per = get(&p, "reads_s_per_disk");
    let reads = db.cache.as_ref().unwrap().device_reads_s;
    assert_eq!(per.calibration, Some(cal.max_iops.unwrap() / 2.0));
    assert_eq!(per.db_run, Some(reads / 4.0));
    assert!((per.ratio.unwrap() - (reads / 4.0) / (cal.max_iops.unwrap() / 2.0)).abs() < 1e-12);
    assert_eq!((p.calibration.disks, p.db_run.disks), (Some(2), Some(4)));
}

#[test]
fn other_disks_or_none_are_said() {
    let (cal, mut db) = fixtures();
    db.cache.as_mut().unwrap().disks = vec!["vdb".into()];
    let p = placement((3, &cal), (4, &db));
    assert_eq!(p.same_disks, Some(false));
    // vdb was never sampled: no await from it, rather than vda's.
    assert_eq!(get(&p, "device_await_ms").db_run, None);
    db.cache = None;
    let p = placement((3, &cal), (4, &db));
    assert_eq!(p.same_disks, None);
    for m in [
        "reads_s",
        "device_await_ms",
        "reads_s_per_disk",
        "read_mib_s",
    ] {
        let r = get(&p, m);
        assert_eq!((r.db_run, r.ratio), (None, None), "{m}");
        assert!(r.calibration.is_some(), "{m}");
    }
    assert!(get(&p, "pg_reads_s").db_run.is_some());
}

/// iostat's r_await over a window is Δtime reading ÷ Δreads: a quiet interval's slow reads
/// weigh by their number, not by the interval.
#[test]
fn device_await_weighs_by_reads() {
    let disk = |r_s: f64, r_await: f64| DiskRates {
        r_s,
        r_await,
        ..DiskRates::default()
    };
    let at = |pairs: &[(&str, DiskRates)]| {
        let mut d = Derived::default();
        for (n, r) in pairs {
            d.disks.insert((*n).into(), r.clone());
        }
        d
    };
    // 1000 reads of 1 ms, then 10 of 100 ms, then an interval without samples.
    let a = at(&[("vda", disk(1000.0, 1.0)), ("vdb", disk(0.0, 0.0))]);
    let b = at(&[("vda", disk(5.0, 100.0)), ("vdb", disk(5.0, 100.0))]);
    let ivs = [(1.0, Some(&a)), (1.0, Some(&b)), (1.0, None)];
    let disks: Vec<String> = vec!["vda".into(), "vdb".into()];
    let got = read_await_ms(&ivs, &disks).unwrap();
    assert!((got - 2000.0 / 1010.0).abs() < 1e-12, "{got}");
    // Half-second intervals halve both counts: the same await.
    let half = [(0.5, Some(&a)), (0.5, Some(&b))];
    assert!((read_await_ms(&half, &disks).unwrap() - got).abs() < 1e-12);
    assert_eq!(read_await_ms(&ivs, &["sdz".into()]), None, "not sampled");
    assert_eq!(read_await_ms(&[], &disks), None);
}

#[test]
fn a_calibration_figure_of_zero_has_no_ratio() {
    assert_eq!(row("m", "m", "", "", Some(0.0), Some(5.0)).ratio, None);
    assert_eq!(row("m", "m", "", "", Some(2.0), Some(5.0)).ratio, Some(2.5));
    assert_eq!(row("m", "m", "", "", None, Some(5.0)).ratio, None);
}
