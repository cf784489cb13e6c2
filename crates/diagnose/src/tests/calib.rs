//! A calibration's curve: saturation judged across its points, and the span it tested.

use crate::fixture::{evidence, find, of};
use iogauge_model::calib::{CalibrationReport, Step};
use iogauge_model::derive::Derived;
use iogauge_model::finding::Layer;
use iogauge_model::Document;

const CALIBRATE_V1: &str = include_str!("../../../campaign/tests/fixtures/calibrate.json");

fn calibration() -> CalibrationReport {
    match Document::from_json(CALIBRATE_V1).unwrap() {
        Document::Calibration(c) => *c,
        other => panic!("a calibration, not a {}", other.meta().kind),
    }
}

/// `vda` at `util` % in every interval of every point.
fn busy(c: &mut CalibrationReport, util: f64) {
    for i in c.points.iter_mut().flat_map(|p| &mut p.intervals) {
        let s = i.system.get_or_insert_with(Derived::default);
        s.disks.entry("vda".into()).or_default().util = util;
    }
}

/// The 64-outstanding point flattened: IOPS stop rising at 32 while latency keeps growing.
fn saturating() -> CalibrationReport {
    let mut c = calibration();
    for p in &mut c.points {
        if p.point.step == Step::Small && p.point.outstanding == 64 {
            p.point.iops = 57_000.0;
        }
    }
    c
}

#[test]
fn a_curve_that_stops_rising_while_latency_grows_is_a_saturated_device() {
    let mut c = saturating();
    busy(&mut c, 100.0);
    let v = of(c);
    let f = &v[0];
    assert_eq!(f.layer, Layer::Device, "{v:#?}");
    assert_eq!(evidence(f, "where IOPS stopped rising"), 32.0);
    // (1019.5 µs − 57.5 µs) ÷ 1019.5 µs: the deepest point's time beyond the floor.
    let want = (1_019.467_064_865_210_5 - 57.459_261_559_856_3) / 1_019.467_064_865_210_5;
    assert!((f.impact - want).abs() < 1e-9, "{} vs {want}", f.impact);
    assert_eq!(evidence(f, "%util there"), 100.0);
}

#[test]
fn a_curve_still_rising_or_an_idle_device_is_not_saturated() {
    let mut rising = calibration();
    busy(&mut rising, 100.0);
    assert!(of(rising).iter().all(|f| f.layer != Layer::Device));
    let mut idle = saturating();
    busy(&mut idle, 40.0);
    assert!(of(idle).iter().all(|f| f.layer != Layer::Device));
}

#[test]
fn a_small_span_of_a_rotating_disk_is_said_with_low_impact() {
    let v = of(calibration());
    let f = find(&v, Layer::Span);
    assert!(f.impact <= 0.1 && f.impact > 0.09, "{}", f.impact);
    assert!((evidence(f, "tested span") - 0.024_414_062_5).abs() < 1e-12);
    let mut spinning_not = calibration();
    spinning_not.preflight.targets[0].rotational = Some(false);
    assert!(of(spinning_not).iter().all(|f| f.layer != Layer::Span));
    // A VM's disk (virtio_blk says rotational 1): preflight records its medium as unknown,
    // and nothing is said about seeks.
    let mut vm = calibration();
    vm.preflight.targets[0].rotational = None;
    assert!(of(vm).iter().all(|f| f.layer != Layer::Span));
}

#[test]
fn a_first_point_faster_than_any_device_is_memory_answering() {
    let mut c = calibration();
    assert!(of(c.clone()).iter().all(|f| f.layer != Layer::PageCache));
    c.points[0].point.lat_us.mean = 2.5;
    let v = of(c);
    let f = &v[0];
    assert_eq!(f.layer, Layer::PageCache, "{v:#?}");
    assert_eq!(f.impact, 1.0);
    assert_eq!(evidence(f, "mean latency at 1 outstanding"), 2.5);
}
