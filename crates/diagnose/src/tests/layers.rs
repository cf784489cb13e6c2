//! The rules that need the block-layer tracer, on constructed `Derived::layers`.

use crate::fixture::{dir, disk, evidence, find, of, run, set_layers};
use iogauge_model::finding::Layer;
use iogauge_model::summary::DirSummary;

#[test]
fn queue_time_rivalling_device_time_is_the_os_queue() {
    // 1 ms application latency: 600 µs queued, 300 µs in the device.
    let mut r = run(
        dir(30000.0, 8.0, 1000.0),
        DirSummary::default(),
        disk(30000.0, 0.9, 0.0, 0.0, 100.0, 27.0),
    );
    set_layers(&mut r, "vda", 30000.0, 5.0, 600.0, 300.0);
    let v = of(r);
    let q = find(&v, Layer::OsQueue);
    assert!((q.impact - 0.6).abs() < 1e-9, "{}", q.impact);
    assert_eq!(evidence(q, "queue ÷ device"), 2.0);
    assert_eq!(v[0].layer, Layer::OsQueue, "{v:#?}");
    // The device's finding counts only its own time.
    let d = find(&v, Layer::Device);
    assert!((d.impact - 0.3).abs() < 1e-9, "{}", d.impact);
}

#[test]
fn a_short_queue_is_not_a_finding() {
    let mut r = run(
        dir(30000.0, 8.0, 1000.0),
        DirSummary::default(),
        disk(30000.0, 0.9, 0.0, 0.0, 100.0, 27.0),
    );
    set_layers(&mut r, "vda", 30000.0, 5.0, 50.0, 900.0);
    let v = of(r);
    assert!(v.iter().all(|f| f.layer != Layer::OsQueue), "{v:#?}");
    assert_eq!(v[0].layer, Layer::Device);
}

#[test]
fn time_before_the_queue_is_a_throttle() {
    // A cgroup read-IOPS limit: 9 ms before the queue, 0.3 ms below it.
    let mut r = run(
        dir(100.0, 8.0, 9500.0),
        DirSummary::default(),
        disk(100.0, 0.3, 0.0, 0.0, 3.0, 0.03),
    );
    set_layers(&mut r, "vda", 100.0, 9000.0, 20.0, 280.0);
    let v = of(r);
    let f = &v[0];
    assert_eq!(f.layer, Layer::Throttle, "{v:#?}");
    assert!((f.impact - 9000.0 / 9500.0).abs() < 1e-9, "{}", f.impact);
    assert_eq!(evidence(f, "before the queue"), 9000.0);
    assert!(!f.title.contains("likely"), "traced: {}", f.title);
}

/// `name`'s queue holds `nr` requests in every interval of `r`.
fn set_nr_requests(r: &mut iogauge_model::run::RunReport, name: &str, nr: u32) {
    for i in &mut r.intervals {
        if let Some(l) = i.system.as_mut().and_then(|s| s.layers.get_mut(name)) {
            l.nr_requests = Some(nr);
        }
    }
}

#[test]
fn time_before_a_full_queue_is_waiting_for_a_request_not_a_throttle() {
    // 32 readers, 4 requests: 2,000 reads/s × 2 ms in the device = 4 in use; 14 ms before.
    let build = |nr: u32| {
        let mut r = run(
            dir(2000.0, 4.0, 16000.0),
            DirSummary::default(),
            disk(2000.0, 2.0, 0.0, 0.0, 100.0, 4.0),
        );
        set_layers(&mut r, "vda", 2000.0, 14000.0, 5.0, 1995.0);
        set_nr_requests(&mut r, "vda", nr);
        of(r)
    };
    let v = build(4);
    let f = &v[0];
    assert_eq!(f.layer, Layer::OsQueue, "{v:#?}");
    assert_eq!(f.rule, "os-queue-full");
    assert!((f.impact - 14000.0 / 16000.0).abs() < 1e-9, "{}", f.impact);
    assert_eq!(evidence(f, "nr_requests"), 4.0);
    assert!((evidence(f, "in use") - 4.0).abs() < 1e-9);
    assert!(v.iter().all(|f| f.layer != Layer::Throttle), "{v:#?}");
    // The same wait with 64 requests, 4 in use: a throttle, not the queue.
    let v = build(64);
    assert_eq!(v[0].layer, Layer::Throttle, "{v:#?}");
    assert!(v.iter().all(|f| f.layer != Layer::OsQueue), "{v:#?}");
}

#[test]
fn a_slow_member_shows_in_its_request_times() {
    let mut r = run(
        dir(400.0, 8.0, 5000.0),
        DirSummary::default(),
        disk(0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    );
    r.targets[0].device = Some("loop0".into());
    let mut t = r.targets[0].clone();
    t.device = Some("loop1".into());
    r.targets.push(t);
    set_layers(&mut r, "loop0", 200.0, 9000.0, 10.0, 200.0);
    set_layers(&mut r, "loop1", 200.0, 5.0, 10.0, 200.0);
    let v = of(r);
    let f = find(&v, Layer::Members);
    assert!(f.title.starts_with("loop0"), "{}", f.title);
    assert!(f.impact > 0.9, "{}", f.impact);
}
