//! `digest` and `lat_curves` on documents and histograms from real runs of this iogauge:
//! `run` (randread for 2 s, randrw for 4 s, both with a 1 s ramp and 250 ms intervals on a
//! 64 MiB file on ext4 on vda), `calibrate --point-time 500ms` and `db run --sessions 4
//! --update-pct 25 --time 4s --ramp 1s --interval 250ms` on a private PostgreSQL cluster.
//! The documents are stored without their bulky raw `samples`; `histograms.json` holds the
//! stored histograms (hex) of runs 1 (randread), 2 (randrw), 3 (calibrate: two points) and
//! 4 (db run).
//!
//! Expected figures were read off the documents by hand (their `summary`, `hardware` and
//! interval fields), not computed by the code under test.

use iogauge_campaign::digest::{
    catalogue, digest, lat_curves, metric, whole_disks, CURVE_PERCENTILES,
};
use iogauge_campaign::RunDigest;
use iogauge_model::Document;
use iogauge_stats::LatHist;
use std::collections::BTreeMap;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A stored document as the store hands it over: read (and upgraded) by the model.
fn read(text: &str) -> Document {
    Document::from_json(text).unwrap_or_else(|e| panic!("{e}"))
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The stored histograms of fixture run `id`, as the store returns them.
fn hists(id: &str) -> Vec<(String, Vec<u8>)> {
    let all: BTreeMap<String, BTreeMap<String, String>> =
        serde_json::from_str(&fixture("histograms.json")).unwrap();
    all[id].iter().map(|(l, h)| (l.clone(), unhex(h))).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn assert_metric(d: &RunDigest, key: &str, want: f64) {
    let got = d.metrics.get(key).copied();
    assert!(
        got.is_some_and(|g| close(g, want)),
        "{key}: {got:?}, want {want}"
    );
}

#[test]
fn every_metric_key_is_in_the_catalogue() {
    for (name, id) in [
        ("run_randread.json", "1"),
        ("run_randrw.json", "2"),
        ("calibrate.json", "3"),
        ("db_run.json", "4"),
    ] {
        let d = digest(1, 1, &read(&fixture(name)), &hists(id)).unwrap();
        for k in d.metrics.keys() {
            assert!(metric(k).is_some(), "{name}: {k} not in the catalogue");
        }
    }
    assert!(catalogue().len() > 20);
}

#[test]
fn randread_run() {
    let d = digest(1, 2, &read(&fixture("run_randread.json")), &hists("1")).unwrap();
    assert_eq!((d.id, d.rep, d.kind.as_str()), (1, 2, "run"));
    assert!(!d.interrupted);
    assert!(d.started_at.starts_with("20"), "{}", d.started_at);
    // summary.read.iops 54800.00892280332 + write.iops 0.
    assert_metric(&d, "iops", 54800.00892280332);
    assert_metric(&d, "read_iops", 54800.00892280332);
    // hardware: read.device_iops + write.device_iops.
    assert_metric(&d, "device_iops", 54710.963029353494);
    // No writes: no write figure at all, and reads only.
    assert!(
        d.metrics.keys().all(|k| !k.starts_with("write_")),
        "{:?}",
        d.metrics
    );
    assert_eq!(d.read_share, Some(1.0));
    // 8 measured intervals of 250 ms: shorter than the 12-interval window, not judged.
    assert_eq!((d.steady_from_s, d.steady_left_s), (None, None));
    // 4 ramp intervals, then 8 measured.
    assert_eq!(d.series.len(), 12);
    assert_eq!(d.series.iter().filter(|p| p.ramp).count(), 4);
    let p = &d.series[5];
    assert_eq!((p.t_s, p.dur_s, p.ramp), (1.25, 0.25, false));
    assert_eq!((p.read_iops, p.write_iops), (51972.0, 0.0));
    // Reads only: the read direction's latency.
    assert_eq!(p.lat_mean_us, Some(615.2592368198257));
    assert_eq!(p.lat_p99_us, Some(784.383));
    // disks.vda: r_s + w_s, util.
    assert_eq!(p.dev_iops, Some(51759.092123117625));
    assert_eq!(p.util_pct, Some(94.42753355794495));
    assert!(d.aas.is_empty());
    // p99.99 from the whole-run histogram lies between the document's p99.9 and max.
    let p99_9 = d.metrics["read_lat_p99_9_ms"];
    let p99_99 = d.metrics["read_lat_p99_99_ms"];
    assert!(p99_9 <= p99_99 && p99_99 <= 11.1, "{p99_9} {p99_99}");
}

#[test]
fn randrw_run_with_steady_state() {
    let doc = fixture("run_randrw.json");
    let d = digest(2, 1, &read(&doc), &hists("2")).unwrap();
    assert_metric(&d, "iops", 45494.54122425356);
    for k in [
        "read_lat_p99_ms",
        "write_lat_p99_ms",
        "write_iops",
        "write_lat_p99_99_ms",
    ] {
        assert!(d.metrics.contains_key(k), "{k}");
    }
    // 127270 reads of 127270 + 54724 I/Os.
    assert!(close(d.read_share.unwrap(), 127270.0 / 181994.0));
    // steady.reached_at_s 0.0 after the first measured interval at t_s 1.0.
    assert_eq!(d.steady_from_s, Some(1.0));
    assert_eq!(d.steady_left_s, None);
    // Both directions: the larger p99 (write 1901.567 against read 1707.007).
    let p = &d.series[5];
    assert_eq!(p.lat_p99_us, Some(1901.567));
    assert_eq!((p.read_iops, p.write_iops), (33168.0, 14088.0));
    assert_eq!(p.dev_iops, Some(33060.33483507121 + 14040.142198560186));

    // Stored steady times are relative to the measured window's start (t_s 1.0).
    let mut v: serde_json::Value = serde_json::from_str(&doc).unwrap();
    v["steady"]["reached_at_s"] = 0.5.into();
    v["steady"]["left_at_s"] = 2.0.into();
    let d = digest(2, 1, &read(&v.to_string()), &hists("2")).unwrap();
    assert_eq!((d.steady_from_s, d.steady_left_s), (Some(1.5), Some(3.0)));
}

#[test]
fn calibration() {
    let d = digest(3, 1, &read(&fixture("calibrate.json")), &hists("3")).unwrap();
    assert_eq!(d.kind, "calibrate");
    let want = [
        ("max_iops", 62381.790860302695),
        ("latency_ms", 1.0194670648652104),
        ("max_mbps", 3426.988160041489),
        ("max_pmbps", 3238.4164699416733),
    ];
    assert_eq!(d.metrics.len(), want.len(), "{:?}", d.metrics);
    for (k, v) in want {
        assert_metric(&d, k, v);
    }
    // The series is the max_iops point's (small reads at 64 outstanding): a ramp interval
    // and a measured one, starting at the point's own start.
    assert_eq!(d.series.len(), 2);
    assert!(d.series[0].ramp && !d.series[1].ramp);
    assert_eq!(d.series[0].t_s, 0.0);
    assert_eq!(d.read_share, Some(1.0));
    // Preflight warning and both verdicts.
    assert_eq!(d.warnings.len(), 3, "{:?}", d.warnings);
    assert!(d.warnings[0].starts_with("the tested span is 64.0 MiB"));
    // Without a max_iops point (cap never met): the last point, large reads at 8 per worker.
    let mut v: serde_json::Value = serde_json::from_str(&fixture("calibrate.json")).unwrap();
    v["max_iops"] = serde_json::Value::Null;
    v["latency"] = serde_json::Value::Null;
    let d = digest(3, 1, &read(&v.to_string()), &[]).unwrap();
    assert!(!d.metrics.contains_key("max_iops") && !d.metrics.contains_key("latency_ms"));
    let last = &v["points"][11]["intervals"][1];
    assert_eq!(
        d.series[1].read_iops,
        last["read"]["iops"].as_f64().unwrap()
    );
}

#[test]
fn db_run() {
    let doc = fixture("db_run.json");
    // The fixture is a real `db run` document: it reads as the model's type.
    assert!(matches!(read(&doc), Document::DbRun(_)));
    let d = digest(4, 3, &read(&doc), &hists("4")).unwrap();
    assert_eq!(d.kind, "db run");
    assert_metric(&d, "ops_s", 2231.7120956720946);
    assert_metric(&d, "db_physical_reads_s", 142315.71437223983);
    assert_metric(&d, "db_logical_reads_s", 232742.06558514765);
    assert_metric(&d, "db_avg_read_ms", 0.0016218765493524034);
    assert_metric(&d, "commits_s", 786.6217921847234);
    // log_bytes_s 11593188.590590294 / 2^20.
    assert_metric(&d, "log_mbps", 11.056126204099936);
    assert_metric(&d, "op_read_lat_p99_ms", 3.500031);
    assert_metric(&d, "op_update_lat_mean_ms", 5.804665648205586);
    assert!(d.metrics.contains_key("op_update_lat_p99_99_ms"));
    // vda's r_s + w_s over the 16 measured intervals, weighted by their length.
    assert!(close(d.metrics["device_iops"], 1337.5057299742664));
    // In physical I/Os: physical reads / (physical reads + buffers written + WAL writes);
    // this schema-1 fixture has no WAL writes.
    let written = 0.0 + 498.65089837383414 + 60383.382562231884;
    assert_metric(&d, "db_physical_writes_s", written);
    let share = 142315.71437223983 / (142315.71437223983 + written);
    assert!(close(d.read_share.unwrap(), share), "{:?}", d.read_share);
    assert!(
        d.metrics.contains_key("device_read_iops") && d.metrics.contains_key("device_write_iops")
    );
    assert!(close(
        d.metrics["device_read_iops"] + d.metrics["device_write_iops"],
        d.metrics["device_iops"]
    ));
    assert!(
        !d.metrics.contains_key("log_sync_ms"),
        "not measured in schema 1"
    );
    assert_eq!(d.steady_from_s, Some(1.0));
    assert_eq!(d.series.len(), 20);
    let p = &d.series[6];
    assert_eq!((p.t_s, p.read_iops, p.write_iops), (1.5, 1684.0, 488.0));
    // Updates are the slower operations: their mean and p99.
    assert_eq!(p.lat_mean_us, Some(6473.847606557376));
    assert_eq!(p.lat_p99_us, Some(19054.591));
    assert_eq!(p.dev_iops, Some(1186.654499928711));
    assert_eq!(d.aas.len(), 20);
    assert_eq!(d.aas[6].t_s, 1.5);
    assert_eq!(d.aas[6].events["WALWriteLock"], 1.0);
    // The data-set warning and the page-cache note.
    assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
    assert!(d.warnings[1].contains("OS page cache served them"));
}

#[test]
fn read_only_db_run_has_no_update_or_wal_figures() {
    let mut v: serde_json::Value = serde_json::from_str(&fixture("db_run.json")).unwrap();
    v["summary"]["sessions"]["updates_s"] = 0.0.into();
    let d = digest(4, 1, &read(&v.to_string()), &hists("4")).unwrap();
    for k in [
        "commits_s",
        "log_mbps",
        "op_update_lat_mean_ms",
        "op_update_lat_p99_ms",
    ] {
        assert!(!d.metrics.contains_key(k), "{k}");
    }
    // The read share counts physical I/Os, so the fixture's buffer writes still count.
    assert!(d.read_share.unwrap() < 1.0);
    // No database I/O at all: the operations' mix.
    v["summary"]["db"]["physical_reads_s"] = 0.0.into();
    v["summary"]["db"]["buffers_written_s"]["bgwriter"] = 0.0.into();
    v["summary"]["db"]["buffers_written_s"]["backend"] = 0.0.into();
    let d = digest(4, 1, &read(&v.to_string()), &hists("4")).unwrap();
    assert_eq!(d.read_share, Some(1.0));
}

#[test]
fn wal_latency_metrics_of_a_run_with_writers() {
    let mut v: serde_json::Value = serde_json::from_str(&fixture("db_run.json")).unwrap();
    let db = &mut v["summary"]["db"];
    db["log_writes_s"] = 300.0.into();
    db["avg_log_write_ms"] = 0.05.into();
    db["avg_log_sync_ms"] = 1.25.into();
    let d = digest(4, 1, &read(&v.to_string()), &hists("4")).unwrap();
    assert_metric(&d, "log_write_ms", 0.05);
    assert_metric(&d, "log_sync_ms", 1.25);
    assert_metric(
        &d,
        "db_physical_writes_s",
        498.65089837383414 + 60383.382562231884 + 300.0,
    );
}

#[test]
fn corrupt_histogram_names_run_and_label() {
    let bad = vec![("read".to_string(), vec![1, 2, 3])];
    let e = digest(12, 1, &read(&fixture("run_randread.json")), &bad).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("run 12: stored histogram read does not decode"),
        "{e}"
    );
    let e = lat_curves(&[&hists("1"), &bad]).unwrap_err();
    assert!(e.to_string().starts_with("run 2 of the case"), "{e}");
}

#[test]
fn curves_merge_whole_run_histograms() {
    let (a, b) = (hists("1"), hists("2"));
    let curves = lat_curves(&[&a, &b]).unwrap();
    let labels: Vec<&str> = curves.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["read", "write"]);
    // The merged read curve equals the two runs' read histograms added by hand; its count
    // is both runs' reads (109627 + 127270), per-interval histograms left out.
    let dec = |h: &[(String, Vec<u8>)], l: &str| {
        LatHist::decode(&h.iter().find(|(x, _)| x == l).unwrap().1).unwrap()
    };
    let mut read = dec(&a, "read");
    read.merge(&dec(&b, "read"));
    assert_eq!(read.count(), 109627 + 127270);
    let pts = &curves[0].points;
    assert_eq!(pts.len(), CURVE_PERCENTILES.len());
    assert_eq!(pts[0], (0.0, read.min_ns() as f64 / 1e3));
    assert_eq!(pts[5], (99.0, read.quantile_ns(0.99) as f64 / 1e3));
    assert_eq!(pts[11], (100.0, read.max_ns() as f64 / 1e3));
    assert!(pts.windows(2).all(|w| w[0].1 <= w[1].1), "{pts:?}");
    // The randread run's write histogram is empty: the write curve is the randrw run's.
    assert_eq!(
        curves[1].points[11].1,
        dec(&b, "write").max_ns() as f64 / 1e3
    );

    let db = lat_curves(&[&hists("4")]).unwrap();
    let labels: Vec<&str> = db.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["db read", "db update"]);
    // A calibration stored before step histograms has per-point ones only: no curve.
    assert!(lat_curves(&[&hists("3")]).unwrap().is_empty());
    assert!(lat_curves(&[]).unwrap().is_empty());
}

/// A calibration's step histograms (`small`, `large`, `single`, `matrix small`) make its
/// curves, in step order, merged over the case's runs; per-point ones stay out.
#[test]
fn calibration_curves_come_from_step_histograms() {
    let hist = |us: &[u64]| {
        let mut h = LatHist::new();
        for u in us {
            h.record(u * 1000);
        }
        h.encode().unwrap()
    };
    let run = |small_us: u64| {
        vec![
            ("0:Small:1".to_string(), hist(&[1])),
            ("matrix small".to_string(), hist(&[900, 950])),
            ("single".to_string(), hist(&[4000])),
            ("large".to_string(), hist(&[2000, 3000])),
            ("small".to_string(), hist(&[small_us, small_us])),
        ]
    };
    let (a, b) = (run(100), run(300));
    let curves = lat_curves(&[&a, &b]).unwrap();
    let labels: Vec<&str> = curves.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["small", "large", "single", "matrix small"]);
    let small = &curves[0].points;
    // HDR histograms keep 3 significant digits.
    assert!(
        (small[0].1 / 100.0 - 1.0).abs() < 1e-3,
        "minimum over both runs: {small:?}"
    );
    assert!(
        (small[11].1 / 300.0 - 1.0).abs() < 1e-3,
        "maximum over both runs: {small:?}"
    );
}

#[test]
fn whole_disks_leave_out_partitions_and_virtual_devices() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["vda", "vda1"], &["vda"]),
        (&["nvme0n1", "nvme0n1p2", "dm-0"], &["nvme0n1"]),
        // nvme0n10 is a namespace, not a partition of nvme0n1.
        (&["nvme0n1", "nvme0n10"], &["nvme0n1", "nvme0n10"]),
        (&["md0", "sda", "sdb"], &["sda", "sdb"]),
        (&["loop3", "vdb"], &["vdb"]),
        (&["sdaa", "sda"], &["sdaa", "sda"]),
        // Nothing qualifies: everything rather than nothing.
        (&["md0"], &["md0"]),
    ];
    for (names, want) in cases {
        assert_eq!(&whole_disks(names.iter().copied()), want, "{names:?}");
    }
}

#[test]
fn catalogue_keys_are_unique() {
    for (i, a) in catalogue().iter().enumerate() {
        assert!(
            catalogue()[i + 1..].iter().all(|b| b.key != a.key),
            "{}",
            a.key
        );
    }
}
