//! Replays through the whole job on a real file with O_DIRECT: the script's requests are
//! the job's, timed ones go at their times, fast ones as the depth allows.

use super::*;
use crate::target::{prepare, Access, TargetSpec};
use iogauge_model::spec::{JobSpec, RwMode};
use std::sync::atomic::AtomicBool;

const MIB: u64 = 1 << 20;

/// A directory on a disk (O_DIRECT): under the workspace's `target/tmp`, as the integration
/// tests' (a unit test has no `CARGO_TARGET_TMPDIR`).
fn scratch() -> tempfile::TempDir {
    let tmp = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    tempfile::tempdir_in(tmp).unwrap()
}

fn target(dir: &std::path::Path) -> crate::Target {
    let spec = TargetSpec {
        path: dir.join("replay.dat"),
        size: Some(16 * MIB),
    };
    let access = Access {
        direct: true,
        write: true,
        allow_overwrite: false,
    };
    prepare(&spec, access, &mut |_, _| {}, &AtomicBool::new(false)).expect("a file target")
}

fn spec(qd: u32) -> JobSpec {
    let mut s = JobSpec::new(RwMode::RandRw);
    s.bs = iogauge_model::spec::BlockSplit::single(64 * 1024);
    s.qd = qd;
    s.time = None;
    s.interval = Duration::from_millis(100);
    s
}

/// `n` requests `gap` apart, alternating reads of 4 KiB and writes of 64 KiB.
fn script(n: u64, gap: Duration, pace: Pace) -> Script {
    let ops = (0..n).map(move |i| ScriptOp {
        at: gap * i as u32,
        dir: if i % 2 == 0 {
            Direction::Read
        } else {
            Direction::Write
        },
        target: 0,
        offset: (i * 7919 % 200) * 65536,
        len: if i % 2 == 0 { 4096 } else { 65536 },
    });
    Script {
        ops: Box::new(ops),
        pace,
    }
}

#[test]
fn a_timed_replay_issues_every_request_at_its_time() {
    let dir = scratch();
    let t = [target(dir.path())];
    let (n, gap) = (300, Duration::from_millis(2));
    let began = Instant::now();
    let out = crate::replay_telling(
        &spec(64),
        &t,
        script(n, gap, Pace::Timed { speed: 1.0 }),
        &AtomicBool::new(false),
        &mut |_| {},
        &|_| {},
    )
    .expect("the replay runs");
    let took = began.elapsed();
    let reads: u64 = out.intervals.iter().map(|i| i.io.read.ios).sum();
    let writes: u64 = out.intervals.iter().map(|i| i.io.write.ios).sum();
    assert_eq!((reads, writes), (n / 2, n / 2));
    let bytes: u64 = out.intervals.iter().map(|i| i.io.write.bytes.0).sum();
    assert_eq!(bytes, n / 2 * 65536);
    // The last request is due at 598 ms: the replay took about that, not as long as the
    // device makes 300 I/Os take one after another, nor less.
    let last = gap * (n as u32 - 1);
    assert!(took >= last, "{took:?} < {last:?}");
    assert!(took < last + Duration::from_millis(500), "{took:?}");
    let r = out.replay.expect("a replay's outcome");
    assert_eq!(r.issued, n);
    assert_eq!(r.lateness.count(), n);
    assert!(
        r.late * 10 < n,
        "a file keeps up with 500 IOPS: {} of {n} late",
        r.late
    );
}

#[test]
fn a_fast_replay_ignores_the_times_and_issues_in_order() {
    let dir = scratch();
    let t = [target(dir.path())];
    // Recorded 10 s apart: timed, this would take 20 s.
    let (n, gap) = (3, Duration::from_secs(10));
    let began = Instant::now();
    let out = crate::replay_telling(
        &spec(1),
        &t,
        script(n, gap, Pace::Fast { depth: 1 }),
        &AtomicBool::new(false),
        &mut |_| {},
        &|_| {},
    )
    .expect("the replay runs");
    assert!(began.elapsed() < Duration::from_secs(5));
    let ios: u64 = out
        .intervals
        .iter()
        .map(|i| i.io.read.ios + i.io.write.ios)
        .sum();
    assert_eq!(ios, n);
    let r = out.replay.expect("a replay's outcome");
    assert_eq!((r.issued, r.late), (n, 0));
}

#[test]
fn a_replay_refuses_more_than_one_worker() {
    let dir = scratch();
    let t = [target(dir.path())];
    let mut s = spec(4);
    s.workers = 2;
    let e = crate::replay_telling(
        &s,
        &t,
        script(1, Duration::ZERO, Pace::Fast { depth: 4 }),
        &AtomicBool::new(false),
        &mut |_| {},
        &|_| {},
    )
    .expect_err("refused");
    assert!(e.to_string().contains("--workers"), "{e}");
}
