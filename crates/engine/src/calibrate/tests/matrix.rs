//! ORION's matrix modes, each step's merged histogram, and sequential large I/Os, on the
//! same device model.

use super::*;

/// ORION's row, col and point: only the cells with the fixed level; basic runs none.
#[test]
fn matrix_modes_fix_a_row_a_column_or_one_cell() {
    let run = |mode, num_small, num_large| {
        let mut m = Model::new(500.0, 10_000.0);
        let mut s = spec(2_000.0, 1024);
        s.matrix = mode;
        s.num_small = num_small;
        s.num_large = num_large;
        let out = calibrate(&mut m, &s).unwrap();
        let (small, large) = levels(&s, &out);
        let cells: Vec<(u32, u32)> = out.matrix.iter().map(|c| (c.small, c.large)).collect();
        (cells, small, large)
    };
    let (cells, ..) = run(MatrixMode::Basic, None, None);
    assert!(cells.is_empty());
    let (cells, small, _) = run(MatrixMode::Row, None, Some(3));
    assert!(cells.iter().all(|c| c.1 == 3), "{cells:?}");
    let smalls: Vec<u32> = cells.iter().map(|c| c.0).collect();
    assert_eq!(smalls, small, "every small level, 0 included");
    let (cells, _, large) = run(MatrixMode::Col, Some(4), None);
    assert!(cells.iter().all(|c| c.0 == 4), "{cells:?}");
    let larges: Vec<u32> = cells.iter().map(|c| c.1).collect();
    assert_eq!(larges, large);
    let (cells, ..) = run(MatrixMode::Point, Some(8), Some(2));
    assert_eq!(cells, [(8, 2)]);
    // A fixed level of 0 leaves out the empty cell.
    let (cells, _, large) = run(MatrixMode::Col, Some(0), None);
    assert_eq!(cells.len(), large.len() - 1);
    assert!(!cells.contains(&(0, 0)));
}

/// Each step's merged histogram holds exactly its counting points' I/Os (a superseded
/// first measurement left out), and the matrix's small I/Os have theirs.
#[test]
fn step_histograms_merge_the_points_that_count() {
    let mut m = Model::new(300.0, 20_000.0);
    m.max_mbps = 1e4;
    m.hists = true;
    m.dips = vec![(Step::Small, 4, 1)];
    let mut s = spec(2_000.0, 64);
    s.matrix = MatrixMode::Row;
    s.num_large = Some(1);
    let out = calibrate(&mut m, &s).unwrap();
    assert!(out.measured.iter().any(|m| m.point.superseded));
    let ctx = Context {
        spec: s,
        preflight: iogauge_model::preflight::Preflight {
            targets: vec![],
            md_arrays: vec![],
            warnings: vec![],
            io_limits: None,
        },
        targets: vec![],
        io_uring: String::new(),
        started_at: String::new(),
    };
    let (_, hists) = calibration_document(ctx, &out).unwrap();
    let get = |label: &str| {
        let (_, bytes) = hists
            .iter()
            .find(|(l, _)| l == label)
            .unwrap_or_else(|| panic!("no {label} histogram"));
        LatHist::decode(bytes).unwrap()
    };
    for step in [Step::Small, Step::Large, Step::Single] {
        let ios: u64 = out.points(step).map(|p| p.ios).sum();
        assert!(ios > 0);
        assert_eq!(get(step.name()).count(), ios, "{step:?}");
    }
    let all_small: u64 = out
        .measured
        .iter()
        .filter(|m| m.point.step == Step::Small)
        .map(|m| m.point.ios)
        .sum();
    assert!(
        get("small").count() < all_small,
        "the superseded point is left out"
    );
    let cells_small: u64 = out.matrix.iter().map(|c| u64::from(c.small) * 10).sum();
    assert_eq!(get(MATRIX_SMALL).count(), cells_small);
    // Per-point histograms are still there, one per measured point.
    assert_eq!(
        hists.iter().filter(|(l, _)| l.contains(':')).count(),
        out.measured.len()
    );
}

/// `--large-type seq`: one worker per outstanding large I/O, each streaming its own slice
/// of the span from evenly spaced starts and wrapping within it; small I/Os stay random,
/// step single one worker streaming with all its I/Os in flight.
#[test]
fn sequential_large_ios_are_one_stream_per_outstanding_io() {
    use crate::offsets::{Extent, OpGen, Space};
    use iogauge_model::spec::RwMode;
    let mut s = spec(2_000.0, 64);
    s.large_type = LargeType::Seq;
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut nothing = |_: &Point| {};
    let p = EngineProber {
        targets: &[],
        spec: &s,
        stop: &stop,
        on_point: &mut nothing,
        cores: 2,
        runs: 0,
        sampling: &Unsampled,
    };
    let small = p.point_job(Step::Small, 8192, 8);
    assert_eq!(
        (small.rw, small.workers, small.qd),
        (RwMode::RandRead, 2, 4)
    );
    let large = p.point_job(Step::Large, 1 << 20, 4);
    assert_eq!((large.rw, large.workers, large.qd), (RwMode::Read, 4, 1));
    let single = p.point_job(Step::Single, 1 << 20, 4);
    assert_eq!((single.rw, single.workers, single.qd), (RwMode::Read, 1, 4));
    // 4 streams over 16 MiB: stream w reads 4w, 4w+1, … MiB and wraps to 4w.
    let space = Space::new(vec![Extent {
        target: 0,
        start: 0,
        len: 16 << 20,
    }]);
    for w in 0..4u64 {
        let mut g = OpGen::new(&large, space.clone(), w as u32, 4);
        let mibs: Vec<u64> = (0..6).map(|_| g.next_op().offset >> 20).collect();
        let b = 4 * w;
        assert_eq!(mibs, [b, b + 1, b + 2, b + 3, b, b + 1], "stream {w}");
    }
    // Writes only at --write-pct 100; random large I/Os as before.
    s.write_pct = 100;
    let p = EngineProber {
        targets: &[],
        spec: &s,
        stop: &stop,
        on_point: &mut nothing,
        cores: 2,
        runs: 0,
        sampling: &Unsampled,
    };
    assert_eq!(p.point_job(Step::Large, 1 << 20, 2).rw, RwMode::Write);
    s.write_pct = 0;
    s.large_type = LargeType::Rand;
    let p = EngineProber {
        targets: &[],
        spec: &s,
        stop: &stop,
        on_point: &mut nothing,
        cores: 2,
        runs: 0,
        sampling: &Unsampled,
    };
    let rand = p.point_job(Step::Large, 1 << 20, 4);
    assert_eq!((rand.rw, rand.workers, rand.qd), (RwMode::RandRead, 2, 2));
}
