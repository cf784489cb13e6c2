//! Findings and the per-layer split in the text views, on the fixtures with findings and
//! layer figures added by hand (the fixtures themselves, stored before either existed, are
//! the other modules' snapshots and render as before).

use super::{calibration, db_run, run_randread, run_randrw};
use crate::split::tests::rates;
use crate::text::findings::tests::finding;
use crate::text::findings::HEALTHY;
use crate::{calibration_body, db_run_text, interval_table, run_text};
use insta::assert_snapshot;
use iogauge_model::finding::{Evidence, Finding, Layer};

/// A device-bound run's findings: the device first, then the OS queue and the CPU.
fn device_bound() -> Vec<Finding> {
    let mut d = finding(
        Layer::Device,
        0.71,
        "vda is saturated: 90% busy, its service time rising with the queue",
    );
    d.next = "a faster device, or fewer outstanding I/Os for the same throughput".into();
    let mut q = finding(Layer::OsQueue, 0.18, "I/Os wait in the OS queue before vda");
    q.evidence = vec![Evidence::new("queue time ÷ device time", 0.25, "×")];
    let mut c = finding(Layer::Cpu, 0.04, "cpu 3 is busy submitting");
    c.evidence = vec![Evidence::new("cpu 3 busy", 64.0, "%")];
    vec![c, q, d, finding(Layer::None, 0.0, HEALTHY)]
}

/// The hardware notes (cache, write multiplication) give way to the findings.
#[test]
fn run_with_findings_replaces_the_notes() {
    let mut r = run_randread();
    let h = r.hardware.as_mut().expect("the fixture has hardware rows");
    h.notes = vec!["the devices completed 1.50x the workload's reads: read-ahead".into()];
    let before = run_text(&r);
    assert!(before.contains("note: the devices completed"), "{before}");
    r.findings = device_bound();
    let t = run_text(&r);
    assert!(!t.contains("note:"), "{t}");
    assert!(!t.contains(HEALTHY), "{t}");
    assert_snapshot!("run", t);
}

#[test]
fn healthy_run_says_so_in_one_line() {
    let mut r = run_randrw();
    r.findings = vec![finding(Layer::None, 0.0, HEALTHY)];
    let t = run_text(&r);
    let lines: Vec<&str> = t.lines().filter(|l| l.contains(HEALTHY)).collect();
    assert_eq!(lines, [format!("finding: {HEALTHY}")]);
    assert!(!t.contains("limit:") && !t.contains("next:"), "{t}");
}

/// A calibration with findings shows them instead of its verdicts; one without, its
/// verdicts as before.
#[test]
fn calibration_findings_replace_the_verdicts() {
    let mut c = calibration();
    assert!(!c.verdicts.is_empty(), "the fixture has verdicts");
    assert!(calibration_body(&c).contains("verdicts:"));
    c.findings = device_bound();
    let t = calibration_body(&c);
    assert!(!t.contains("verdicts:"), "{t}");
    for v in &c.verdicts {
        assert!(!t.contains(v.as_str()), "{v} said again: {t}");
    }
    assert_snapshot!("calibration", t);
}

/// A db run's findings are shares of DB time; its page-cache note gives way to them.
#[test]
fn db_run_findings_in_db_time() {
    let mut d = db_run();
    let mut w = finding(Layer::DbWal, 0.55, "commits wait on the WAL's syncs");
    w.evidence = vec![Evidence::new("WALSync share of DB time", 55.0, "%")];
    w.next = "synchronous_commit, or a WAL device with a faster sync".into();
    d.findings = vec![
        w,
        finding(Layer::DbLocks, 0.2, "sessions wait on each other's locks"),
    ];
    let t = db_run_text(&d);
    assert!(!t.contains("note: 100% of PostgreSQL"), "{t}");
    assert!(t.contains("(55% of the DB time;"), "{t}");
    assert_snapshot!("db", t);
}

/// With the tracer's figures the interval table adds each traced device's queue and device
/// time; an interval without them shows `-`.
#[test]
fn interval_table_with_the_layer_split() {
    let mut r = run_randrw();
    r.intervals.truncate(4);
    for (i, iv) in r.intervals.iter_mut().enumerate().skip(1) {
        let sys = iv.system.as_mut().expect("the fixture has samples");
        sys.layers
            .insert("vda".into(), rates(40_000.0, 120.0 * i as f64, 650.0));
    }
    let t = interval_table(&r);
    let head = t.lines().next().unwrap();
    assert!(head.contains("%util   q_ms   d_ms"), "{head}");
    assert!(
        t.lines().nth(3).unwrap().contains("   0.24   0.65 |"),
        "{t}"
    );
    assert_snapshot!("intervals", t);
}
