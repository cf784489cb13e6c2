//! ADDM's types: a problem with its benefit, a symptom naming its problem, information.

use crate::fixture::{db, dir, disk, of, run};
use iogauge_model::finding::{Kind, Layer};
use iogauge_model::summary::DirSummary;

/// A saturated disk (QD 32: 8000 IOPS at 4 ms, the device's await 3.8 ms) is a problem that
/// explains 95% of the I/O time: removing it would take the mean latency from 4.0 ms to
/// about 200 µs.
#[test]
fn a_problem_says_what_removing_it_saves() {
    let r = run(
        dir(8000.0, 8.0, 4000.0),
        DirSummary::default(),
        disk(8000.0, 3.8, 0.0, 0.0, 100.0, 30.4),
    );
    let v = of(r);
    assert_eq!(v[0].layer, Layer::Device);
    assert_eq!(v[0].kind, Kind::Problem);
    assert_eq!(
        v[0].benefit.as_deref(),
        Some("removing it saves ~95% of the I/O time: mean latency from 4.0 ms to about 200 µs")
    );
    assert!(v[1..]
        .iter()
        .all(|f| f.kind != Kind::Problem || f.impact >= 0.2));
}

/// A healthy run's one finding is information, with no benefit.
#[test]
fn no_limit_is_information() {
    let r = run(
        dir(200.0, 8.0, 300.0),
        DirSummary::default(),
        disk(200.0, 0.25, 0.0, 0.0, 5.0, 0.05),
    );
    let v = of(r);
    assert_eq!((v[0].layer, v[0].kind), (Layer::None, Kind::Information));
    assert_eq!(v[0].benefit, None);
}

/// A db run whose sessions wait on data-file reads (70% of DB time) on a disk shared with
/// other processes: the read waits are the symptom, the neighbours' share of the disk the
/// problem they follow from; a small wait class is information.
#[test]
fn the_sessions_read_waits_follow_from_a_storage_problem() {
    let mut r = db(
        &[
            ("DataFileRead", 2.8),
            ("CPU", 0.4),
            ("WALSync", 0.4),
            ("ClientRead", 0.4),
        ],
        None,
    );
    r.summary.aas.samples = 10;
    let mut v = of(r.clone());
    let reads = v
        .iter()
        .find(|f| f.rule == "db-io-reads")
        .expect("db-io-reads");
    assert_eq!(
        reads.kind,
        Kind::Problem,
        "alone, the waits are the problem: {v:#?}"
    );
    assert!(reads
        .benefit
        .as_deref()
        .is_some_and(|b| b.contains("of DB time")));
    // The same findings typed beside a storage problem.
    let mut shared = v[0].clone();
    shared.rule = "neighbours".into();
    shared.layer = Layer::Neighbours;
    shared.impact = 0.5;
    v.push(shared);
    let w = crate::view::Whole::of(&r.clone().into());
    crate::typing::type_all(&r.into(), &w, &mut v);
    let reads = v.iter().find(|f| f.rule == "db-io-reads").unwrap();
    assert_eq!(reads.kind, Kind::Symptom);
    assert_eq!(reads.follows.as_deref(), Some("neighbours"));
    assert_eq!(reads.benefit, None);
}

/// Reads the page cache served are a problem (the run measured memory) with no benefit:
/// removing the cache would make the reads slower, not save their time.
#[test]
fn a_cache_is_a_problem_without_a_benefit() {
    let mut r = run(
        dir(100_000.0, 4.0, 8.0),
        DirSummary::default(),
        disk(10.0, 0.3, 0.0, 0.0, 1.0, 0.0),
    );
    r.options.direct = false;
    let v = of(r);
    assert_eq!((v[0].layer, v[0].kind), (Layer::PageCache, Kind::Problem));
    assert_eq!(v[0].benefit, None);
}
