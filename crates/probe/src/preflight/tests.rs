//! Tests of preflight.rs: every warning on hand-built facts, then one pass over this machine.

use super::*;
use iogauge_model::preflight::{MdMember, MdSync};

const GIB: u64 = 1 << 30;

fn dev(
    name: &str,
    kind: DevKind,
    size: u64,
    rotational: Option<bool>,
    below: Vec<BlockDev>,
) -> BlockDev {
    BlockDev {
        name: name.into(),
        kind,
        size_bytes: Some(size),
        rotational,
        scheduler: None,
        model: None,
        dm_name: None,
        md_level: None,
        loop_backing_file: None,
        virtual_disk: None,
        queue: Default::default(),
        below,
    }
}

/// dm-0 (vg0-data) on md0 (raid1 over sdb1, sdc1).
fn lvm_on_md0() -> BlockDev {
    let part = |n: &str| {
        let disk = dev(&n[..3], DevKind::Disk, 500 * GIB, Some(true), vec![]);
        dev(n, DevKind::Partition, 500 * GIB, Some(true), vec![disk])
    };
    let md0 = dev(
        "md0",
        DevKind::Md,
        500 * GIB,
        Some(false),
        vec![part("sdb1"), part("sdc1")],
    );
    let mut dm0 = dev("dm-0", DevKind::Dm, 400 * GIB, Some(false), vec![md0]);
    dm0.dm_name = Some("vg0-data".into());
    dm0
}

fn target(path: &str, tested: u64, device: Option<BlockDev>) -> TargetFacts {
    let device_bytes = device.as_ref().and_then(|d| d.size_bytes);
    TargetFacts {
        path: path.into(),
        fs: Some("ext4".into()),
        rotational: device.as_ref().and_then(rotational_of),
        span_pct: device_bytes.map(|s| tested as f64 / s as f64 * 100.0),
        device,
        tested_bytes: tested,
        device_bytes,
        role: None,
        mount: None,
        layout: None,
    }
}

fn member(name: &str, index: u32, faulty: bool) -> MdMember {
    MdMember {
        name: name.into(),
        index,
        faulty,
        spare: false,
        write_mostly: false,
    }
}

fn raid1(name: &str, working: u32, faulty_second: bool, sync: Option<MdSync>) -> MdArray {
    MdArray {
        name: name.into(),
        active: true,
        level: Some("raid1".into()),
        members: vec![member("sdb1", 0, false), member("sdc1", 1, faulty_second)],
        raid_disks: Some(2),
        active_disks: Some(working),
        status: Some(if working == 2 { "UU" } else { "U_" }.into()),
        degraded: working < 2 || faulty_second,
        sync,
    }
}

fn sync(action: &str, percent: Option<f64>) -> Option<MdSync> {
    Some(MdSync {
        action: action.into(),
        percent,
        delayed_or_pending: percent.is_none(),
    })
}

fn warnings(targets: Vec<TargetFacts>, md_arrays: Vec<MdArray>) -> Vec<String> {
    warnings_for(&Preflight {
        targets,
        md_arrays,
        warnings: vec![],
        io_limits: None,
    })
}

#[test]
fn healthy_system_has_no_warnings() {
    let t = target("/data/x", 300 * GIB, Some(lvm_on_md0()));
    assert_eq!(
        warnings(vec![t], vec![raid1("md0", 2, false, None)]),
        Vec::<String>::new()
    );
}

#[test]
fn degraded_array_under_a_target_is_loud() {
    let t = target("/data/x", 300 * GIB, Some(lvm_on_md0()));
    let w = warnings(vec![t], vec![raid1("md0", 1, true, None)]);
    assert_eq!(
        w,
        [
            "md0 is DEGRADED (raid1 [2/1] [U_], sdc1 failed): a test of it measures the \
          surviving disk(s), not the array"
        ]
    );
}

#[test]
fn degraded_array_elsewhere_is_softer() {
    let vda = dev("vda", DevKind::Disk, 250 * GIB, Some(false), vec![]);
    let t = target("/x", 200 * GIB, Some(vda));
    // Missing disk, nothing marked failed.
    let w = warnings(vec![t], vec![raid1("md5", 1, false, None)]);
    assert_eq!(
        w,
        ["md5 is degraded (raid1 [2/1] [U_]); no target is on it"]
    );
}

#[test]
fn sync_in_progress_or_waiting() {
    let t = || target("/data/x", 300 * GIB, Some(lvm_on_md0()));
    let w = warnings(
        vec![t()],
        vec![raid1("md0", 2, false, sync("resync", Some(12.6)))],
    );
    assert_eq!(
        w,
        ["md0 is resyncing (12.6%): background I/O will lower and skew the figures"]
    );

    let w = warnings(
        vec![t()],
        vec![raid1("md0", 2, false, sync("resync", None))],
    );
    assert_eq!(
        w,
        [
            "md0 has a resync waiting to start: once it starts, its background I/O will lower and \
          skew the figures"
        ]
    );

    let w = warnings(
        vec![t()],
        vec![raid1("md9", 1, false, sync("recovery", Some(8.1)))],
    );
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[1].starts_with("md9 is recovering (8.1%); no target is on it"),
        "{w:?}"
    );
}

#[test]
fn short_span() {
    let vda = |rot| dev("vda", DevKind::Disk, 250 * GIB, rot, vec![]);
    let w = warnings(vec![target("/x", GIB, Some(vda(Some(true))))], vec![]);
    assert_eq!(
        w,
        [
            "the tested span is 1.0 GiB of 250.0 GiB on vda (0.4%); short-stroking flatters HDDs, \
          and this device is rotational — test the whole device or a larger --size"
        ]
    );
    let w = warnings(vec![target("/x", GIB, Some(vda(Some(false))))], vec![]);
    assert_eq!(
        w,
        [
            "the tested span is 1.0 GiB of 250.0 GiB on vda (0.4%); short-stroking flatters HDDs \
          — test the whole device or a larger --size"
        ]
    );
    // A VM's disk says rotational 1 (virtio_blk's default): its medium is unknown.
    let mut virtio = vda(Some(true));
    virtio.virtual_disk = Some("driver virtio_blk".into());
    let w = warnings(vec![target("/x", GIB, Some(virtio))], vec![]);
    assert_eq!(
        w,
        [
            "the tested span is 1.0 GiB of 250.0 GiB on vda (0.4%); short-stroking flatters HDDs, \
          and this VM's disk may or may not be one (its medium is unknown) — test the whole \
          device or a larger --size"
        ]
    );
    let w = warnings(vec![target("/x", 64 << 20, Some(lvm_on_md0()))], vec![]);
    assert!(
        w[0].contains("64.0 MiB of 400.0 GiB on dm-0 (vg0-data) (<0.1%)"),
        "{w:?}"
    );
    assert!(
        w[0].contains("rotational"),
        "the disks under md0 spin: {w:?}"
    );
    // 10% and more, or no device: nothing to say.
    assert!(warnings(vec![target("/x", 25 * GIB, Some(vda(Some(true))))], vec![]).is_empty());
    assert!(warnings(vec![target("/x", GIB, None)], vec![]).is_empty());
    // A database's data names the data set as the fix; its WAL's span draws no warning.
    let role = |r: &str| TargetFacts {
        role: Some(r.into()),
        ..target("/pg", GIB, Some(vda(Some(false))))
    };
    let w = warnings(vec![role("data"), role("wal"), role("tablespace")], vec![]);
    // Data directory and tablespace on one device: one span, their sum.
    assert_eq!(
        w,
        [
            "the tested span is 2.0 GiB of 250.0 GiB on vda (0.8%); short-stroking flatters HDDs \
          — load a larger data set (db setup --schemas, --scale)"
        ]
    );
    // A data directory holding no schema (all in tablespaces elsewhere) has no span.
    let empty = TargetFacts {
        tested_bytes: 0,
        ..role("data")
    };
    assert!(warnings(vec![empty], vec![]).is_empty());
    // A database's WAL (or data, or tablespace) on tmpfs is memory: said so (#25 row 22).
    let on_tmpfs = TargetFacts {
        fs: Some("tmpfs".into()),
        tested_bytes: 0,
        ..role("wal")
    };
    assert_eq!(
        warnings(vec![on_tmpfs], vec![]),
        [
            "wal /pg is on tmpfs, which is memory: the database's I/O there measures RAM, not \
          storage; put it on the storage under test"
        ]
    );
}

#[test]
fn rotational_from_leaves() {
    let ssd = dev("nvme0n1", DevKind::Disk, GIB, Some(false), vec![]);
    let unknown = dev("zram0", DevKind::Other, GIB, None, vec![]);
    assert_eq!(rotational_of(&lvm_on_md0()), Some(true));
    assert_eq!(rotational_of(&ssd), Some(false));
    let both = dev("md1", DevKind::Md, GIB, None, vec![ssd.clone(), unknown]);
    assert_eq!(rotational_of(&both), None);
    // A VM's disk that says it rotates: unknown, whatever its partner says.
    let mut vda = dev("vda", DevKind::Disk, GIB, Some(true), vec![]);
    vda.virtual_disk = Some("driver virtio_blk".into());
    assert_eq!(rotational_of(&vda), None);
    assert_eq!(
        rotational_of(&dev("md2", DevKind::Md, GIB, None, vec![vda, ssd])),
        None
    );
}

#[test]
fn formatting() {
    assert_eq!(fmt_bytes(512), "512 B");
    assert_eq!(fmt_bytes(8 << 10), "8.0 KiB");
    assert_eq!(fmt_bytes(3 << 40), "3.0 TiB");
    assert_eq!(fmt_pct(0.4), "0.4%");
    assert_eq!(fmt_pct(0.01), "<0.1%");
}

#[test]
fn this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let not_yet = dir.path().join("scratch/data");
    let p = preflight(&[
        ("/".into(), GIB),
        (not_yet.clone(), GIB),
        ("/proc/self".into(), GIB),
    ]);
    assert_eq!(p.targets.len(), 3);
    let root = &p.targets[0];
    let root_dev = std::fs::metadata("/").unwrap().dev();
    assert_eq!(
        root.device.as_ref().map(|d| d.name.clone()),
        crate::backing_device(root_dev)
    );
    assert!(root.fs.is_some() && root.device_bytes.is_some() && root.span_pct.is_some());
    // A file not created yet is judged by its directory.
    assert_eq!(p.targets[1].path, not_yet);
    assert!(p.targets[1].fs.is_some());
    // /proc has no block device: said, not hidden.
    assert_eq!(p.targets[2].fs.as_deref(), Some("proc"));
    assert!(p
        .warnings
        .iter()
        .any(|w| w.starts_with("/proc/self is on proc, which has no block")));

    // A block device target resolves through st_rdev, to itself.
    if let Some(name) = &root.device.as_ref().map(|d| d.name.clone()) {
        let path = PathBuf::from(format!("/dev/{name}"));
        if path.exists() {
            let p = preflight(&[(path, GIB)]);
            assert_eq!(p.targets[0].device.as_ref().unwrap().name, *name, "{p:?}");
            assert_eq!(p.targets[0].fs, None);
        }
    }
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<Preflight>(&json).unwrap(), p);
}

/// A file whose extents average under 4 MiB is named with its extents per GiB; a contiguous
/// one, or too few bytes to judge, draws nothing.
#[test]
fn a_fragmented_target_is_named() {
    use iogauge_model::preflight::FileLayout;
    let with = |layout: FileLayout| {
        let mut t = target("/srv/pg/data", 0, None);
        t.layout = Some(layout);
        warnings_for(&Preflight {
            targets: vec![t],
            md_arrays: vec![],
            warnings: vec![],
            io_limits: None,
        })
    };
    let frag = FileLayout {
        files: 3,
        bytes: 2 << 30,
        extents: 4096,
    };
    let w = with(frag);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("/srv/pg/data is fragmented: 2048 extents per GiB over 2.0 GiB in 3 files (an extent averages 512.0 KiB"),
        "{}",
        w[0]
    );
    assert!(with(FileLayout {
        extents: 64,
        ..frag
    })
    .is_empty());
    let few = FileLayout {
        files: 1,
        bytes: 16 << 20,
        extents: 4096,
    };
    assert!(with(few).is_empty(), "16 MiB is too little to judge");
}
