//! Reading stored documents: schema-1 documents captured from a real iogauge (the campaign
//! fixtures) upgrade and type (a db run's WAL figures become the log's, schema 4); schema-2 snapshots' cumulative buckets become each interval's;
//! documents round-trip exactly; what is not a document
//! is refused with the reason.

use super::*;

const RUN_V1: &str = include_str!("../../../campaign/tests/fixtures/run_randrw.json");
const CALIBRATE_V1: &str = include_str!("../../../campaign/tests/fixtures/calibrate.json");
const DB_V1: &str = include_str!("../../../campaign/tests/fixtures/db_run.json");

#[test]
fn schema_1_documents_upgrade_to_their_types() {
    let Document::Run(r) = Document::from_json(RUN_V1).unwrap() else {
        panic!("a run");
    };
    assert_eq!((r.meta.schema, r.meta.kind), (SCHEMA, Kind::Run));
    assert_eq!(r.meta.started_at, "2026-11-23T04:00:24.354Z");
    assert_eq!(r.meta.ended_at, None);
    assert_eq!(r.summary.read.ios, 127270);

    let Document::Calibration(c) = Document::from_json(CALIBRATE_V1).unwrap() else {
        panic!("a calibration");
    };
    assert_eq!(c.meta.kind, Kind::Calibrate);
    assert_eq!(c.meta.started_at, "2026-11-23T04:00:32.023Z");
    assert_eq!(c.meta.ended_at.as_deref(), Some("2026-11-23T04:00:39.618Z"));
    assert!(c.max_iops.is_some_and(|v| v > 62381.0));

    let Document::DbRun(d) = Document::from_json(DB_V1).unwrap() else {
        panic!("a db run");
    };
    assert_eq!(d.meta.kind, Kind::DbRun);
    assert_eq!(d.grid.interval, std::time::Duration::from_millis(250));
    assert_eq!(d.grid.time, std::time::Duration::from_secs(4));
    assert_eq!(d.summary.sessions.ops, 8951);
    // Schema 3 → 4: the WAL's figures are the log's.
    assert_eq!(d.summary.db.log_bytes_s.0, 11593188.590590294);
    assert_eq!(d.summary.db.log_syncs_s.0, 306.9196279490949);
    assert_eq!(d.summary.db.avg_log_sync_ms, None);
    let json = Document::DbRun(d).to_json();
    for old in ["\"wal_bytes_s\"", "\"avg_wal_sync_ms\"", "\"walwriter\""] {
        assert!(!json.contains(old), "{old} in {json}");
    }
    assert!(json.contains("\"log_writer\"") && json.contains("\"log_bytes_s\""));
}

/// A db run stored before `db run --disks` has no `num_disks`: it reads, and its disks are
/// the data's disks it sampled; a stored count wins over them, and is kept.
#[test]
fn a_db_run_without_its_disks_counts_the_sampled_ones() {
    let Document::DbRun(mut d) = Document::from_json(DB_V1).unwrap() else {
        panic!("a db run");
    };
    assert_eq!(d.num_disks, None);
    assert_eq!(d.spindles(), Some(1), "vda");
    d.num_disks = Some(4);
    assert_eq!(d.spindles(), Some(4));
    let back = Document::from_json(&Document::DbRun(d.clone()).to_json()).unwrap();
    assert!(matches!(back, Document::DbRun(b) if b.num_disks == Some(4)));
    d.num_disks = None;
    d.cache = None;
    assert_eq!(d.spindles(), None, "a server whose disks are unknown");
}

#[test]
fn documents_round_trip_exactly() {
    for v1 in [RUN_V1, CALIBRATE_V1, DB_V1] {
        let doc = Document::from_json(v1).unwrap();
        let text = doc.to_json();
        let back = Document::from_json(&text).unwrap();
        assert_eq!(back, doc);
        assert_eq!(back.to_json(), text);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["kind"], doc.kind().name());
        assert!(v.get("start_time").is_none());
    }
    let v: Value = serde_json::from_str(&Document::from_json(DB_V1).unwrap().to_json()).unwrap();
    assert_eq!(v["grid"]["interval"], 0.25);
}

#[test]
fn schema_2_snapshots_keep_their_intervals_buckets_once_upgraded() {
    use crate::layers::{LayerCounters, RingCounters, StageCounters, StageHist};
    use crate::system::{CpuCounters, MemInfo, Snapshot};
    let hist = |b: &[(u32, u64)]| StageHist {
        count: b.iter().map(|x| x.1).sum(),
        sum_ns: 1000,
        buckets: b.to_vec(),
    };
    let snapshot = |i: u64, b: &[(u32, u64)]| Snapshot {
        at_ns: i * 1_000_000_000,
        disks: Vec::new(),
        cpu: CpuCounters::default(),
        mem: MemInfo::default(),
        psi: None,
        cpus: Vec::new(),
        load: None,
        layers: vec![LayerCounters {
            name: "vda".into(),
            write: StageCounters {
                queue: hist(b),
                ..Default::default()
            },
            ..Default::default()
        }],
        ring: Some(RingCounters {
            read: hist(b),
            write: StageHist::default(),
            ..Default::default()
        }),
        others: Vec::new(),
        swap: None,
        job: None,
        psi_cpu: None,
    };
    // Schema 2: cumulative buckets.
    let cumulative = [
        vec![(100, 1)],
        vec![(100, 3), (120, 1)],
        vec![(90, 2), (100, 3), (120, 4)],
    ];
    let mut v: Value =
        serde_json::from_str(&Document::from_json(RUN_V1).unwrap().to_json()).unwrap();
    v["schema"] = Value::from(2);
    v["samples"] = serde_json::to_value(
        (0..3)
            .map(|i| snapshot(i as u64, &cumulative[i]))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let Document::Run(r) = Document::from_value(v).unwrap() else {
        panic!("a run");
    };
    let fresh = [
        vec![(100, 1)],
        vec![(100, 2), (120, 1)],
        vec![(90, 2), (120, 3)],
    ];
    for (s, want) in r.samples.iter().zip(&fresh) {
        assert_eq!(&s.layers[0].write.queue.buckets, want);
        assert_eq!(&s.ring.as_ref().unwrap().read.buckets, want);
    }
    assert_eq!(
        r.samples[2].layers[0].write.queue.count, 9,
        "counts stay cumulative"
    );
    assert_eq!(r.meta.schema, SCHEMA);
}

#[test]
fn what_is_not_a_document_is_refused_with_the_reason() {
    let e = |t: &str| Document::from_json(t).unwrap_err().to_string();
    assert!(e("[1]").contains("no \"kind\""), "{}", e("[1]"));
    assert!(e(r#"{"kind": "ior", "schema": 1}"#).contains("\"ior\" is not one iogauge knows"));
    assert!(e(r#"{"kind": "run"}"#).contains("no \"schema\""));
    assert!(e(r#"{"kind": "run", "schema": 99}"#).contains("newer than this iogauge"));
    assert!(e("{").starts_with("not JSON"));
    let mut run: Value = serde_json::from_str(RUN_V1).unwrap();
    run["summary"] = Value::from("garbled");
    assert!(Document::from_value(run).is_err());
}

#[test]
fn kinds_have_one_name_each() {
    for k in [Kind::Run, Kind::Calibrate, Kind::DbRun] {
        assert_eq!(Kind::from_name(k.name()), Some(k));
        assert_eq!(serde_json::to_value(k).unwrap(), k.name());
    }
    assert_eq!(Kind::DbRun.command(), "db run");
    assert_eq!(Kind::from_name("db run"), None);
}

proptest::proptest! {
    /// Stored documents are read back to the last bit, so `show --json` prints what the run
    /// printed (serde_json's exact float parser: the `float_roundtrip` feature).
    #[test]
    fn every_float_reads_back_exactly(xs in proptest::collection::vec(proptest::num::f64::NORMAL, 4)) {
        let Document::Run(mut r) = Document::from_json(RUN_V1).unwrap() else {
            unreachable!("a run")
        };
        r.summary.read.iops = xs[0];
        r.summary.read.mbps = xs[1];
        r.summary.write.lat_us.p99 = xs[2];
        r.summary.elapsed_s = xs[3];
        let doc = Document::from(*r);
        let text = doc.to_json();
        let back = Document::from_json(&text).unwrap();
        proptest::prop_assert_eq!(back.to_json(), text);
    }
}

#[test]
fn a_schema_1_device_row_reads_with_the_figures_it_had() {
    let mut v: Value = serde_json::from_str(RUN_V1).unwrap();
    v["hardware"]["devices"] = serde_json::json!([
        {"name": "loop0", "r_s": 10.0, "w_s": 2.0, "rMB_s": 1.5, "wMB_s": 0.5, "util": 30.0}
    ]);
    let Document::Run(r) = Document::from_value(v).unwrap() else {
        unreachable!("a run")
    };
    let row = &r.hardware.as_ref().unwrap().devices[0];
    assert_eq!(
        (row.name.as_str(), row.rates.r_s, row.rates.util),
        ("loop0", 10.0, 30.0)
    );
    assert_eq!(row.rates.r_await, 0.0);
}
