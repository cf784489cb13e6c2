//! The text of `iogauge calibrate`: head (options and preflight), live point lines, body
//! (curves, matrix, CALIBRATE_IO figures and verdicts).

use super::calibration;
use crate::{calibration_body, calibration_head, point_line, preflight_text};
use insta::assert_snapshot;
use iogauge_model::calib::{CalibrationReport, Cell, Criterion, Point, PointReport, Step};
use iogauge_model::iopath::{EngineKind, IoPath, MemMode, PoolInfo};
use iogauge_model::preflight::{
    BlockDev, DevKind, FileLayout, MdArray, MountFacts, Preflight, QueueFacts, TargetFacts,
};
use iogauge_stats::LatSummary;
use std::path::PathBuf;

#[test]
fn head_of_the_fixture() {
    assert_snapshot!("head", calibration_head(&calibration()));
}

#[test]
fn body_of_the_fixture() {
    assert_snapshot!("body", calibration_body(&calibration()));
}

#[test]
fn point_lines_of_the_fixture() {
    let s: String = calibration()
        .points
        .iter()
        .map(|p| point_line(&p.point) + "\n")
        .collect();
    assert_snapshot!("point_lines", s);
}

#[test]
fn preflight_of_the_fixture() {
    assert_snapshot!("preflight", preflight_text(&calibration().preflight));
}

fn dev(name: &str, kind: DevKind, below: Vec<BlockDev>) -> BlockDev {
    BlockDev {
        name: name.into(),
        kind,
        size_bytes: Some(1 << 40),
        rotational: Some(kind != DevKind::Dm),
        scheduler: Some("mq-deadline".into()),
        model: None,
        dm_name: None,
        md_level: None,
        loop_backing_file: None,
        virtual_disk: None,
        queue: Default::default(),
        below,
    }
}

/// Two targets: one on LVM over a degraded md raid1 over partitions of two disks, one on a
/// loop device over a file; the md arrays and the warnings.
fn layered_preflight() -> Preflight {
    let disk = |n: &str| {
        let mut d = dev(n, DevKind::Disk, vec![]);
        d.queue = QueueFacts {
            write_cache: Some("write through".into()),
            logical_block: Some(512),
            physical_block: Some(4096),
            discard_max_bytes: Some(0),
            nr_requests: Some(64),
            read_ahead_kb: Some(128),
            wbt_lat_usec: None,
        };
        d
    };
    let part = |n: &str, d: &str| dev(n, DevKind::Partition, vec![disk(d)]);
    let mut md = dev(
        "md0",
        DevKind::Md,
        vec![part("sda1", "sda"), part("sdb1", "sdb")],
    );
    md.md_level = Some("raid1".into());
    let mut dm = dev("dm-0", DevKind::Dm, vec![md]);
    dm.dm_name = Some("vg-data".into());
    let mut lo = dev("loop0", DevKind::Loop, vec![]);
    lo.loop_backing_file = Some(PathBuf::from("/var/tmp/disk.img"));
    lo.rotational = Some(false);
    lo.scheduler = Some("none".into());
    let md_array = |name: &str, level: Option<&str>, status: Option<&str>, degraded| MdArray {
        name: name.into(),
        active: true,
        level: level.map(Into::into),
        members: vec![],
        raid_disks: Some(2),
        active_disks: Some(if degraded { 1 } else { 2 }),
        status: status.map(Into::into),
        degraded,
        sync: None,
    };
    Preflight {
        targets: vec![
            TargetFacts {
                path: PathBuf::from("/srv/data/iogauge.dat"),
                fs: Some("xfs".into()),
                device: Some(dm),
                tested_bytes: 8 << 30,
                device_bytes: Some(1 << 40),
                span_pct: Some(0.78125),
                rotational: Some(true),
                role: None,
                mount: Some(MountFacts {
                    point: PathBuf::from("/srv/data"),
                    source: Some("/dev/mapper/vg-data".into()),
                    fs_type: "xfs".into(),
                    options: vec!["noatime".into(), "rw".into(), "logbsize=256k".into()],
                }),
                layout: Some(FileLayout {
                    files: 1,
                    bytes: 8 << 30,
                    extents: 9000,
                }),
            },
            TargetFacts {
                path: PathBuf::from("/dev/loop0"),
                fs: None,
                device: Some(lo),
                tested_bytes: 1 << 30,
                device_bytes: None,
                span_pct: None,
                rotational: Some(false),
                role: None,
                mount: None,
                layout: None,
            },
        ],
        md_arrays: vec![
            md_array("md0", Some("raid1"), Some("U_"), true),
            md_array("md1", None, None, false),
        ],
        warnings: vec![
            "md0 is DEGRADED [U_]: one mirror carries every read; figures are a degraded array's"
                .into(),
            "/dev/loop0 is a loop device over /var/tmp/disk.img: the file's filesystem is measured too"
                .into(),
        ],
        io_limits: None,
    }
}

#[test]
fn preflight_of_layered_devices() {
    assert_snapshot!("preflight_layered", preflight_text(&layered_preflight()));
}

fn cell(small: u32, large: u32) -> Cell {
    Cell {
        small,
        large,
        small_iops: f64::from(small) * 310.0 / (1.0 + f64::from(large) / 4.0),
        small_lat_us: LatSummary {
            mean: 3000.0 + f64::from(large) * 500.0,
            ..LatSummary::default()
        },
        large_mbps: f64::from(large) * 45.5 / (1.0 + f64::from(small) / 8.0),
    }
}

/// `--matrix --write-pct 30 --criterion p99`, buffered, on the layered devices: a matrix
/// with a missing cell, a point measured again, a point over the cap, the I/O path and a
/// warning the preflight did not give.
fn matrix_calibration() -> CalibrationReport {
    let mut c = calibration();
    c.options.matrix = iogauge_model::calib::MatrixMode::Detailed;
    c.options.write_pct = 30;
    c.options.criterion = Criterion::P99;
    c.options.setup.direct = false;
    for t in &mut c.targets {
        t.direct = false;
    }
    c.preflight = layered_preflight();
    c.warnings = c.preflight.warnings.clone();
    c.warnings
        .push("point 16 ran on 4 KiB pages, not the 2 MiB huge pages of the first".into());
    c.options.io_path = Some(IoPath {
        engine: EngineKind::IoUring,
        memory: PoolInfo {
            mem: MemMode::Page,
            huge: None,
            buffers: 64,
            buffer_bytes: 1 << 20,
            pool_bytes: 64 << 20,
            huge_bytes: 0,
            fallback: None,
        },
        fixed_bufs: false,
        fixed_files: true,
        ring: None,
        submit_batch: Some(0),
        fixed_bufs_note: None,
    });
    let small = |n: u32, iops: f64, p99: f64, superseded| PointReport {
        point: Point {
            step: Step::Small,
            outstanding: n,
            workers: 1,
            ios: (iops * 0.5) as u64,
            iops,
            mbps: iops * 8.0 / 1024.0,
            lat_us: LatSummary {
                mean: p99 / 2.0,
                p50: p99 / 2.5,
                p90: p99 / 1.5,
                p95: p99 / 1.2,
                p99,
                p99_9: p99 * 1.5,
                max: p99 * 2.0,
            },
            superseded,
            rank_ios: vec![],
        },
        intervals: vec![],
    };
    c.points = vec![
        small(1, 180.0, 9000.0, false),
        small(2, 150.0, 12000.0, true),
        small(2, 340.0, 14000.0, false),
        small(4, 610.0, 19500.0, false),
        small(8, 700.0, 35000.0, false),
    ];
    c.max_iops = Some(610.0);
    c.latency = Some(19.5);
    c.outstanding = Some(4);
    c.max_mbps = None;
    c.max_pmbps = None;
    c.matrix = [(1, 0), (2, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2)]
        .into_iter()
        .map(|(s, l)| cell(s, l))
        .collect();
    c.verdicts = vec!["max_mbps not measured: the large-I/O step was skipped".into()];
    c
}

#[test]
fn head_buffered_with_writes_and_layers() {
    assert_snapshot!("head_matrix", calibration_head(&matrix_calibration()));
}

#[test]
fn body_with_matrix_marks_and_verdicts() {
    assert_snapshot!("body_matrix", calibration_body(&matrix_calibration()));
}

/// Stopped before any figure: every CALIBRATE_IO value and the end time are `-`.
#[test]
fn body_interrupted_without_figures() {
    let mut c = calibration();
    c.meta.interrupted = true;
    c.meta.ended_at = None;
    c.points.truncate(1);
    c.max_iops = None;
    c.latency = None;
    c.outstanding = None;
    c.max_mbps = None;
    c.max_pmbps = None;
    c.verdicts.clear();
    assert_snapshot!("body_interrupted", calibration_body(&c));
}

/// Over MPI ranks: the ranks line, each point's I/Os by rank, a failed rank's warning.
#[test]
fn body_across_ranks() {
    let mut c = calibration();
    for p in c.points.iter_mut().map(|p| &mut p.point) {
        let ios = p.ios;
        // One outstanding I/O, and step single, run on rank 0 alone.
        p.rank_ios = if p.outstanding == 1 || p.step == Step::Single {
            vec![ios, 0]
        } else {
            vec![ios / 2, ios - ios / 2]
        };
    }
    c.ranks = (0..2)
        .map(|rank| iogauge_model::calib::CalibRank {
            rank,
            host: "db1".into(),
            targets: vec![format!("/data/c.{rank}").into()],
            error: None,
            sent_bytes: 0,
        })
        .collect();
    assert_snapshot!("body_ranks", calibration_body(&c));
}

/// `--large-type seq --matrix row --num-large 2 --disks 4`: the head names the sequential
/// large reads, the matrix its row, the figures the IOPS per disk.
#[test]
fn seq_row_matrix_with_iops_per_disk() {
    use iogauge_model::calib::{LargeType, MatrixMode};
    let mut c = calibration();
    c.options.large_type = LargeType::Seq;
    c.options.matrix = MatrixMode::Row;
    c.options.num_large = Some(2);
    c.options.disks = 4;
    c.num_disks = 4;
    c.matrix = [(1, 2), (2, 2), (4, 2)]
        .into_iter()
        .map(|(s, l)| cell(s, l))
        .collect();
    let head = calibration_head(&c);
    assert!(
        head.starts_with("iogauge calibrate: 8k random and 1m sequential reads"),
        "{head}"
    );
    let body = calibration_body(&c);
    let max_iops = c.max_iops.unwrap();
    assert!(
        body.contains(&format!("iops/disk  = {:.0}\n", max_iops / 4.0)),
        "{body}"
    );
    assert_snapshot!("head_seq", head);
    assert_snapshot!("body_seq_row", body);
}

/// With the tracer's figures in the max_iops point's intervals the body says where an I/O's
/// time went there, as a run's summary does; the fixture, without them, says nothing of it.
#[test]
fn body_with_the_layer_split_at_max_iops() {
    assert!(!calibration_body(&calibration()).contains("time went"));
    let mut c = calibration();
    let at = c.outstanding.expect("the fixture has max_iops");
    for p in c.points.iter_mut().filter(|p| p.point.outstanding == at) {
        for iv in &mut p.intervals {
            let sys = iv.system.as_mut().expect("the fixture has samples");
            sys.layers.insert(
                "vda".into(),
                crate::split::tests::rates(40_000.0, 120.0, 650.0),
            );
        }
    }
    let body = calibration_body(&c);
    let line = body
        .lines()
        .find(|l| l.starts_with("where an I/O's time went at max_iops (64 outstanding, mean µs): "))
        .unwrap_or_else(|| panic!("{body}"));
    assert!(
        line.contains(", OS queue 120.0, device 650.0 (of "),
        "{line}"
    );
}
