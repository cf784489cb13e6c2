//! The job's own logic on synthetic intervals: the `--steady` watch, the grid, shares.

use super::*;
use iogauge_stats::Nanos;
use iogauge_stats::{DirStats, PerDir, SteadyConfig, SteadyCriterion};

fn ramp_iv(index: u32, ios: u64) -> Interval {
    let mut io = PerDir::<DirStats>::default();
    for _ in 0..ios {
        io.read.record(4096, 1000);
    }
    Interval {
        phase: Phase::Ramp,
        index,
        start: Nanos(u64::from(index) * 1_000_000_000),
        end: Nanos(u64::from(index + 1) * 1_000_000_000),
        io,
        members: Vec::new(),
    }
}

fn watch(ramp_end: &RampEnd, min_s: u64, timeout_s: u64) -> SteadyWatch<'_> {
    SteadyWatch {
        detector: SteadyDetector::new(SteadyConfig {
            criterion: SteadyCriterion::Deviation { pct: 10.0 },
            window: 3,
            interval_s: 1.0,
            drop_pct: 30.0,
            drop_intervals: 3,
        }),
        ramp_end,
        every: Duration::from_secs(1),
        min: Duration::from_secs(min_s),
        timeout: Duration::from_secs(timeout_s),
        window: None,
    }
}

#[test]
fn steady_watch_ends_the_ramp_on_the_next_reachable_boundary() {
    // Ramp then flat: 100, 200, 300, 1000, 1000, 1000 → the window 3..6 holds.
    let end = RampEnd::new();
    let mut w = watch(&end, 0, 60);
    for (i, ios) in [100, 200, 300, 1000, 1000].into_iter().enumerate() {
        w.observe(
            &ramp_iv(i as u32, ios),
            Duration::from_millis(1000 * i as u64 + 1010),
        );
        assert_eq!(end.get(), None, "decided too early at {i}");
    }
    // The collector sees interval 5 (ended at 6 s) at 6.01 s: the next boundary is 7 s.
    w.observe(&ramp_iv(5, 1000), Duration::from_millis(6010));
    assert_eq!(w.window, Some((3, 6)));
    assert_eq!(end.get(), Some(Duration::from_secs(7)));
    // Latched: later intervals change nothing.
    w.observe(&ramp_iv(6, 10), Duration::from_millis(7010));
    assert_eq!(end.get(), Some(Duration::from_secs(7)));
    // Too close to the boundary (under the 50 ms margin): the one after.
    let end = RampEnd::new();
    let mut w = watch(&end, 0, 60);
    for i in 0..3 {
        w.observe(&ramp_iv(i, 500), Duration::from_millis(2980));
    }
    assert_eq!(end.get(), Some(Duration::from_secs(4)));
}

#[test]
fn steady_watch_respects_min_ramp_and_timeout() {
    let end = RampEnd::new();
    let mut w = watch(&end, 10, 60);
    for i in 0..3 {
        w.observe(&ramp_iv(i, 500), Duration::from_millis(3010));
    }
    assert_eq!(
        end.get(),
        Some(Duration::from_secs(10)),
        "--ramp is a floor"
    );
    // Steady only at the timeout boundary: the timeout ends the ramp, not the watch.
    let end = RampEnd::new();
    let mut w = watch(&end, 0, 4);
    for i in 0..3 {
        w.observe(&ramp_iv(i, 500), Duration::from_millis(3990));
    }
    assert_eq!(end.get(), None);
    assert_eq!(w.window, None);
    // Never steady: nothing set.
    let end = RampEnd::new();
    let mut w = watch(&end, 0, 60);
    for (i, ios) in [100, 300, 900, 2700, 8100].into_iter().enumerate() {
        w.observe(&ramp_iv(i as u32, ios), Duration::from_secs(i as u64 + 1));
    }
    assert_eq!(end.get(), None);
}

#[test]
fn on_grid_rounds_up() {
    let s = Duration::from_millis;
    assert_eq!(on_grid(s(0), s(250)), s(0));
    assert_eq!(on_grid(s(1), s(250)), s(250));
    assert_eq!(on_grid(s(1500), s(250)), s(1500));
    assert_eq!(on_grid(s(1501), s(1000)), s(2000));
}

#[test]
fn shares_add_up() {
    for (total, n) in [(10u64, 3u64), (7, 7), (1, 4), (1_000_003, 64)] {
        let s: u64 = (0..n).map(|i| share(total, n, i)).sum();
        assert_eq!(s, total);
    }
}

#[test]
fn closed_intervals_are_kept_packed_and_merged_exactly() {
    // Two workers, three intervals each: the caller sees each merged interval counting, the
    // job keeps it packed (#25: a long run's memory near what it stores), data unchanged.
    let (tx, rx) = channel::<Msg>();
    for worker in 0..2 {
        for i in 0..3 {
            let mut iv = ramp_iv(i, 100 + u64::from(i));
            iv.io.write.record(8192, 5_000 + u64::from(i));
            tx.send(Msg::Part {
                worker,
                interval: Box::new(iv),
            })
            .unwrap();
        }
        tx.send(Msg::Done {
            worker,
            result: Ok(()),
        })
        .unwrap();
    }
    drop(tx);
    let (stop, halt) = (AtomicBool::new(false), AtomicBool::new(false));
    let mut seen = Vec::new();
    let (kept, interrupted) = collect(2, &rx, &stop, &halt, &Gate::new(2), &mut None, &mut |iv| {
        assert!(!iv.io.read.lat.is_packed());
        seen.push(iv.clone());
    })
    .unwrap();
    assert!(!interrupted);
    assert_eq!(kept.len(), 3);
    for (k, s) in kept.iter().zip(&seen) {
        assert!(k.io.read.lat.is_packed() && k.io.write.lat.is_packed());
        assert_eq!(k, s);
        assert_eq!(k.io.read.ios, 2 * (100 + u64::from(k.index)));
        assert_eq!(k.io.write.lat.count(), 2);
    }
}
