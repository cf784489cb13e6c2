//! The run summary (`Text`) and the live progress line of `iogauge run`.

use super::{run_randread, run_randrw};
use crate::{progress_line, run_text};
use insta::assert_snapshot;
use iogauge_model::derive::DiskRates;
use iogauge_model::hardware::DeviceRow;
use iogauge_model::iopath::{EngineKind, HugeSource, IoPath, MemMode, PoolInfo};
use iogauge_model::layout::{LayoutSpec, ReadFrom};
use iogauge_model::run::{LayoutReport, MemberReport, Steady, SteadyWaitReport, Summary};
use iogauge_model::spec::{LayoutOpts, SteadyWait};
use iogauge_stats::{SteadyConfig, SteadyCriterion, SteadyReport};
use std::path::PathBuf;
use std::time::Duration;

#[test]
fn randread_with_hardware_rows() {
    assert_snapshot!("randread", run_text(&run_randread()));
}

#[test]
fn randrw_steady_with_hardware_rows() {
    assert_snapshot!("randrw", run_text(&run_randrw()));
}

/// mirror:2 over two files, the second marked failed, with the warnings a run carries.
#[test]
fn layout_with_a_degraded_member_and_warnings() {
    let mut r = run_randrw();
    let mut b = r.targets[0].clone();
    b.path = PathBuf::from("/tmp/fx/data2");
    b.created = true;
    r.targets.push(b);
    r.options.layout = Some(LayoutOpts {
        spec: "mirror:2".parse::<LayoutSpec>().unwrap(),
        failgroups: None,
        degraded: vec!["data2".into()],
        read_from: ReadFrom::Primary,
        member_iops: None,
    });
    r.layout = Some(LayoutReport {
        layout: "mirror:2".into(),
        members: vec![
            MemberReport {
                path: "/tmp/fx/data".into(),
                degraded: false,
                reads_s: 31814.7,
                writes_s: 13679.8,
            },
            MemberReport {
                path: "/tmp/fx/data2".into(),
                degraded: true,
                reads_s: 0.0,
                writes_s: 0.0,
            },
        ],
        read_amplification: Some(1.0),
        write_amplification: Some(1.0),
    });
    r.warnings = vec![
        "--degraded data2: its writes are dropped and its reads go to its partner".into(),
        "the target (64.0 MiB) fits in the page cache; O_DIRECT keeps reads off it".into(),
    ];
    assert_snapshot!("layout", run_text(&r));
}

/// The hardware table with device rows (a member disk and layers above it), notes, the I/O
/// path line, and a job bounded by both time and I/Os.
#[test]
fn hardware_devices_notes_and_io_path() {
    let mut r = run_randread();
    r.options.ios = Some(100_000);
    r.options.io_path = Some(IoPath {
        engine: EngineKind::IoUring,
        memory: PoolInfo {
            mem: MemMode::Hugepage,
            huge: Some(HugeSource::Thp),
            buffers: 32,
            buffer_bytes: 8192,
            pool_bytes: 2 << 20,
            huge_bytes: 2 << 20,
            fallback: None,
        },
        fixed_bufs: true,
        fixed_files: true,
        ring: Some("SINGLE_ISSUER|COOP_TASKRUN".into()),
        submit_batch: Some(1),
        fixed_bufs_note: None,
    });
    let h = r.hardware.as_mut().expect("the fixture has hardware rows");
    let row = |name: &str, r_s: f64, util: f64| DeviceRow {
        name: name.into(),
        rates: DiskRates {
            r_s,
            w_s: 0.4,
            r_mb_s: r_s * 8.0 / 1024.0,
            w_mb_s: 0.0,
            util,
            ..DiskRates::default()
        },
    };
    h.devices = vec![
        row("vda", 54710.9, 89.9),
        row("vda1", 54710.9, 89.9),
        row("dm-0", 54800.0, 90.1),
    ];
    h.notes = vec!["other processes wrote to vda during the run: 0.4 writes/s".into()];
    assert_snapshot!("hardware_devices", run_text(&r));
}

fn steady(reached: Option<f64>, left: Option<(f64, f64)>) -> Steady {
    Steady {
        config: SteadyConfig {
            criterion: SteadyCriterion::Deviation { pct: 20.0 },
            window: 12,
            interval_s: 0.25,
            drop_pct: 30.0,
            drop_intervals: 3,
        },
        report: SteadyReport {
            reached_at: reached.map(|s| (s / 0.25) as usize),
            steady_mean: reached.map(|_| 44459.7),
            window_deviation_pct: reached.map(|_| 12.9),
            window_slope_pct_per_s: reached.map(|_| 2.8),
            left_at: left.map(|(l, _)| (l / 0.25) as usize),
            drop_pct_observed: left.map(|(_, d)| d),
        },
        reached_at_s: reached,
        left_at_s: left.map(|(l, _)| l),
    }
}

/// `--steady iops:20%`: reached in the ramp-up, then left in the measured window.
#[test]
fn steady_wait_reached_then_left() {
    let mut r = run_randrw();
    r.options.steady = Some(SteadyWait {
        criterion: SteadyCriterion::Deviation { pct: 20.0 },
        window: Duration::from_secs(2),
        timeout: Duration::from_secs(30),
    });
    r.steady_wait = Some(SteadyWaitReport {
        reached: true,
        window_s: Some((0.5, 2.5)),
        measured_from_s: 2.5,
    });
    r.steady = Some(steady(Some(0.5), Some((3.0, 42.0))));
    assert_snapshot!("steady_wait_reached", run_text(&r));
}

/// `--steady iops_slope:2%` that timed out, and a measured window that never settled.
#[test]
fn steady_wait_timed_out_and_never_steady() {
    let mut r = run_randrw();
    r.options.steady = Some(SteadyWait {
        criterion: SteadyCriterion::Slope { pct_per_s: 2.0 },
        window: Duration::from_secs(3),
        timeout: Duration::from_secs(10),
    });
    r.steady_wait = Some(SteadyWaitReport {
        reached: false,
        window_s: None,
        measured_from_s: 10.0,
    });
    r.steady = Some(steady(None, None));
    assert_snapshot!("steady_wait_timed_out", run_text(&r));
}

/// Ctrl-C before the first I/O completed, on a job bounded by neither time nor I/Os.
#[test]
fn interrupted_without_io() {
    let mut r = run_randread();
    r.meta.interrupted = true;
    r.options.time = None;
    r.options.ios = None;
    r.options.ramp = Duration::ZERO;
    r.summary = Summary {
        elapsed_s: 0.3,
        ..Summary::default()
    };
    r.hardware = None;
    r.intervals.truncate(1);
    r.warnings = vec!["interrupted: the figures cover 0.3 s".into()];
    assert_snapshot!("interrupted_without_io", run_text(&r));
}

/// One line per interval as `run` prints them live: ramp and measured, read-only and mixed.
#[test]
fn progress_lines() {
    let mut s = String::new();
    for r in [run_randread(), run_randrw()] {
        for iv in &r.intervals {
            s.push_str(&progress_line(iv.t_s + iv.dur_s, iv));
            s.push('\n');
        }
    }
    assert_snapshot!("progress_lines", s);
}
