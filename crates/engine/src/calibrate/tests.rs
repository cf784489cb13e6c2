//! The search and its caveats on a deterministic device model: latency is the larger of the
//! service time (base + transfer) and queue / capacity (Little's law at saturation). The
//! matrix, the step histograms and sequential large I/Os in `tests/matrix.rs`.

use super::*;
use iogauge_model::calib::{
    figures, saturation, Cell, Criterion, LargeType, MatrixMode, Measured, Point,
};
use iogauge_model::iopath::EngineKind;
use iogauge_model::spec::{IoSetup, Region};
use iogauge_stats::MIB;
use iogauge_stats::{LatHist, LatSummary};
use std::time::Duration;

struct Model {
    base_us: f64,
    max_iops: f64,
    /// MB/s ceiling for large I/O.
    max_mbps: f64,
    interrupt_after: Option<usize>,
    calls: Vec<(Step, u32)>,
    /// Points that come out at a quarter of their IOPS: (step, outstanding, how many times).
    dips: Vec<(Step, u32, usize)>,
    /// Record each point's (and cell's) I/Os into its histogram, one per I/O.
    hists: bool,
}

impl Model {
    fn new(base_us: f64, max_iops: f64) -> Self {
        Model {
            base_us,
            max_iops,
            max_mbps: 500.0,
            interrupt_after: None,
            calls: vec![],
            dips: vec![],
            hists: false,
        }
    }
}

impl Prober for Model {
    type Error = ();
    fn measure_mixed(
        &mut self,
        _: u64,
        small: u32,
        _: u64,
        large: u32,
    ) -> Result<Option<(Cell, LatHist)>, ()> {
        // Small and large share the device: each slows the other.
        let (s, l) = (f64::from(small), f64::from(large));
        let cell = Cell {
            small,
            large,
            small_iops: s * 1000.0 / (1.0 + l),
            small_lat_us: LatSummary {
                mean: 100.0 * (1.0 + l),
                ..Default::default()
            },
            large_mbps: l * 100.0 / (1.0 + s),
        };
        let mut h = LatHist::new();
        if self.hists {
            for _ in 0..small * 10 {
                h.record((100_000.0 * (1.0 + l)) as u64);
            }
        }
        Ok(Some((cell, h)))
    }
    fn measure(&mut self, step: Step, bs: u64, n: u32) -> Result<Option<Measured>, ()> {
        if self.interrupt_after == Some(self.calls.len()) {
            return Ok(None);
        }
        self.calls.push((step, n));
        let cap_iops = self.max_iops.min(self.max_mbps * MIB / bs as f64);
        let transfer_us = bs as f64 / (self.max_mbps * MIB) * 1e6;
        let mut lat_us = (self.base_us + transfer_us).max(f64::from(n) / cap_iops * 1e6);
        if let Some(d) = self
            .dips
            .iter_mut()
            .find(|d| (d.0, d.1) == (step, n) && d.2 > 0)
        {
            // A noisy point: a quarter of the IOPS (Little's law: 4× the latency).
            d.2 -= 1;
            lat_us *= 4.0;
        }
        let iops = f64::from(n) / lat_us * 1e6;
        let mut hist = LatHist::new();
        if self.hists {
            for _ in 0..iops as u64 {
                hist.record((lat_us * 1e3) as u64);
            }
        }
        let l = LatSummary {
            mean: lat_us,
            p50: lat_us,
            p90: lat_us * 1.2,
            p95: lat_us * 1.3,
            p99: lat_us * 1.5,
            p99_9: lat_us * 2.0,
            max: lat_us * 3.0,
        };
        Ok(Some(Measured {
            point: Point {
                step,
                outstanding: n,
                workers: 1,
                ios: iops as u64,
                iops,
                mbps: iops * bs as f64 / MIB,
                lat_us: l,
                superseded: false,
                rank_ios: vec![],
            },
            intervals: vec![],
            samples: vec![],
            hist,
            io_path: None,
        }))
    }
}

fn spec(cap_us: f64, max: u32) -> CalibrateSpec {
    CalibrateSpec {
        small_bs: 8192,
        large_bs: 1 << 20,
        point_time: Duration::from_secs(1),
        point_ramp: Duration::ZERO,
        max_latency_us: cap_us,
        criterion: Criterion::Mean,
        disks: 1,
        max_outstanding: max,
        write_pct: 0,
        cache_size: None,
        matrix: MatrixMode::Basic,
        num_small: None,
        num_large: None,
        large_type: LargeType::Rand,
        setup: IoSetup {
            engine: EngineKind::IoUring,
            direct: true,
            region: Region::default(),
            seed: 1,
            layout: None,
            io: Default::default(),
        },
        io_path: None,
    }
}

#[test]
fn finds_the_knee_by_doubling_then_bisecting() {
    // 500 µs base, 10k IOPS ceiling: saturated from 5 outstanding, latency reaches the
    // 2 ms cap at 20.
    let mut m = Model::new(500.0, 10_000.0);
    let s = spec(2_000.0, 1024);
    let out = calibrate(&mut m, &s).unwrap();
    let small: Vec<u32> = m
        .calls
        .iter()
        .filter(|c| c.0 == Step::Small)
        .map(|c| c.1)
        .collect();
    assert_eq!(
        &small[..6],
        &[1, 2, 4, 8, 16, 32],
        "doubling until the cap fails at 32"
    );
    assert!(small.len() > 6, "then bisects between 16 and 32: {small:?}");
    let f = figures(&out, Criterion::Mean, 2_000.0);
    assert_eq!(f.max_iops, Some(10_000.0));
    let at = f.outstanding.unwrap();
    assert!((16..=20).contains(&at), "knee at {at}, the model's is 20");
    assert!(f.latency.unwrap() <= 2.0);
    // Large I/O: 500 MB/s ceiling; single stream at 1 outstanding.
    assert!(
        (f.max_mbps.unwrap() - 500.0).abs() < 1.0,
        "{:?}",
        f.max_mbps
    );
    assert!(f.max_pmbps.unwrap() <= f.max_mbps.unwrap());
    let single: Vec<&(Step, u32)> = m.calls.iter().filter(|c| c.0 == Step::Single).collect();
    assert_eq!(
        single,
        [&(Step::Single, 2)],
        "one process at the best large depth"
    );
    assert!(!out.interrupted);
    // Where it saturates is the diagnosis's finding, from the same judgement of the curve.
    let small: Vec<&Point> = out.points(Step::Small).collect();
    assert!(saturation(&small, |p| p.lat_us.mean).is_some());
    assert!(caveats(&out, &s, Some(false)).is_empty());
}

#[test]
fn cap_never_met_reports_the_best_point_and_no_max_iops() {
    let mut m = Model::new(5_000.0, 10_000.0);
    let s = spec(2_000.0, 1024);
    let out = calibrate(&mut m, &s).unwrap();
    assert_eq!(
        out.points(Step::Small).count(),
        1,
        "stops at the first failing point"
    );
    let f = figures(&out, Criterion::Mean, 2_000.0);
    assert_eq!(f.max_iops, None);
    let v = caveats(&out, &s, None);
    assert!(
        v.iter()
            .any(|x| x.contains("never met") && x.contains("best point")),
        "{v:?}"
    );
}

#[test]
fn cap_always_met_runs_to_the_ceiling_and_says_it_is_a_lower_bound() {
    let mut m = Model::new(100.0, 1e9);
    m.max_mbps = 1e9;
    let s = spec(1e9, 64);
    let out = calibrate(&mut m, &s).unwrap();
    let small: Vec<u32> = out.points(Step::Small).map(|p| p.outstanding).collect();
    assert_eq!(small, [1, 2, 4, 8, 16, 32, 64]);
    let v = caveats(&out, &s, None);
    assert!(v.iter().any(|x| x.contains("lower bound")), "{v:?}");
}

#[test]
fn few_points_under_the_cap_and_cache_latency_are_called_out() {
    // Cap met only at 1 and 2 outstanding; 200 µs on a "rotating" disk is a cache.
    let mut m = Model::new(200.0, 5_000.0);
    let s = spec(450.0, 1024);
    let out = calibrate(&mut m, &s).unwrap();
    let v = caveats(&out, &s, Some(true));
    assert!(v.iter().any(|x| x.contains("too few")), "{v:?}");
    assert!(v.iter().any(|x| x.contains("rotating disk")), "{v:?}");
    assert!(!caveats(&out, &s, Some(false))
        .iter()
        .any(|x| x.contains("rotating")));
}

#[test]
fn interruption_keeps_finished_points() {
    let mut m = Model::new(100.0, 10_000.0);
    m.interrupt_after = Some(3);
    let out = calibrate(&mut m, &spec(2_000.0, 1024)).unwrap();
    assert!(out.interrupted);
    assert_eq!(out.measured.len(), 3);
    assert!(
        out.points(Step::Large).next().is_none(),
        "no step after the interruption"
    );
}

#[test]
fn p99_criterion_moves_the_knee_down() {
    let mut m = Model::new(500.0, 10_000.0);
    let mut s = spec(2_000.0, 1024);
    s.criterion = Criterion::P99;
    let out = calibrate(&mut m, &s).unwrap();
    let f = figures(&out, Criterion::P99, 2_000.0);
    // p99 = 1.5 × mean: the cap binds at 13.3 outstanding instead of 20.
    let at = f.outstanding.unwrap();
    assert!((8..=13).contains(&at), "{at}");
    assert!(f.latency.unwrap() <= 2.0);
}

#[test]
fn workers_divide_the_outstanding_ios() {
    for (n, cores, w) in [
        (1, 2, 1),
        (2, 2, 2),
        (3, 2, 1),
        (24, 2, 2),
        (64, 8, 8),
        (12, 8, 6),
        (7, 8, 7),
    ] {
        assert_eq!(workers_for(n, cores), w, "n={n} cores={cores}");
    }
}

#[test]
fn matrix_runs_every_cell_but_the_empty_one() {
    let mut m = Model::new(500.0, 10_000.0);
    let mut s = spec(2_000.0, 1024);
    s.matrix = MatrixMode::Detailed;
    let out = calibrate(&mut m, &s).unwrap();
    let (small, large) = levels(&s, &out);
    let at = figures(&out, Criterion::Mean, 2_000.0).outstanding.unwrap();
    assert_eq!(small.first(), Some(&0));
    assert_eq!(
        small.last(),
        Some(&at),
        "small levels end at the max_iops depth"
    );
    assert_eq!(large, [0, 1, 2], "large levels end at the best large depth");
    assert_eq!(out.matrix.len(), small.len() * large.len() - 1);
    assert!(!out.matrix.iter().any(|c| c.small == 0 && c.large == 0));
    let c = out
        .matrix
        .iter()
        .find(|c| c.small == 4 && c.large == 2)
        .unwrap();
    assert!((c.small_iops - 4000.0 / 3.0).abs() < 1e-9);
}

#[test]
fn a_point_against_the_curve_is_measured_again_and_no_saturation_is_called() {
    // 45 µs, no ceiling in reach: IOPS double with every doubling of outstanding I/Os, but
    // the first measurement at 2 outstanding comes out at a quarter (a noisy device).
    let mut m = Model::new(45.0, 1e9);
    m.max_mbps = 1e6;
    m.dips = vec![(Step::Small, 2, 1)];
    let s = spec(20_000.0, 64);
    let out = calibrate(&mut m, &s).unwrap();
    let at_2 = m.calls.iter().filter(|c| **c == (Step::Small, 2)).count();
    assert_eq!(at_2, 2, "measured once more: {:?}", m.calls);
    let firsts: Vec<&Point> = out
        .measured
        .iter()
        .map(|m| &m.point)
        .filter(|p| p.superseded)
        .collect();
    assert_eq!(firsts.len(), 1);
    assert_eq!(firsts[0].outstanding, 2);
    let counted: Vec<u32> = out.points(Step::Small).map(|p| p.outstanding).collect();
    assert_eq!(
        counted,
        [1, 2, 4, 8, 16, 32, 64],
        "the second measurement counts"
    );
    let v = caveats(&out, &s, None);
    assert!(!v.iter().any(|x| x.contains("saturates")), "{v:?}");
    assert!(
        v.iter()
            .any(|x| x.contains("measured again") && x.contains("noise")),
        "{v:?}"
    );
}

#[test]
fn a_fall_that_repeats_is_kept_but_judged_against_the_whole_curve() {
    // The dip at 2 comes out twice: it is real as measured, yet the curve rises past it
    // (4, 8 … beat the point at 1), so no saturation verdict is taken from it.
    let mut m = Model::new(45.0, 1e9);
    m.max_mbps = 1e6;
    m.dips = vec![(Step::Small, 2, 2)];
    let s = spec(20_000.0, 64);
    let out = calibrate(&mut m, &s).unwrap();
    let at_2 = m.calls.iter().filter(|c| **c == (Step::Small, 2)).count();
    assert_eq!(at_2, 2, "measured once more, not again and again");
    let v = caveats(&out, &s, None);
    assert!(!v.iter().any(|x| x.contains("saturates")), "{v:?}");
    assert!(v.iter().any(|x| x.contains("the fall is real")), "{v:?}");
}

#[test]
fn a_dip_that_would_end_a_search_is_measured_again_first() {
    // Cap 1 ms; the first measurement at 4 outstanding doubles its latency past the cap.
    // Without a second look the knee would be 2; measured again it passes, and the search
    // goes on to the model's real knee.
    let mut m = Model::new(300.0, 1e9);
    m.max_mbps = 1e6;
    m.dips = vec![(Step::Small, 4, 1), (Step::Large, 2, 1)];
    let s = spec(1_000.0, 64);
    let out = calibrate(&mut m, &s).unwrap();
    let f = figures(&out, Criterion::Mean, 1_000.0);
    assert!(f.outstanding.unwrap() >= 32, "{f:?} {:?}", m.calls);
    // Large I/O: a dip at 2 must not end the throughput search early either.
    let large: Vec<u32> = out.points(Step::Large).map(|p| p.outstanding).collect();
    assert!(large.len() > 2, "{large:?}");
}

mod matrix;
