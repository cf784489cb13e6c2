//! The preflight of `db setup` and `db run`, as calibrate's: where the data set (and the WAL)
//! will live or lives — filesystem, device chain, rotational, md arrays, the data set's span
//! of each device — with the warnings (degraded array, short-stroking).

use iogauge_model::preflight::{leaves, DevKind, Preflight};
use std::path::{Path, PathBuf};

/// One directory the cluster uses: its path, the data-set bytes on it and its role (`data`,
/// `tablespace`, `wal`).
pub type Target = (PathBuf, u64, Option<&'static str>);

/// The targets of a cluster: the data set's bytes per place (`None`: the data directory),
/// then the WAL directory when it is apart. The data directory is listed even when every
/// schema is in a tablespace (its catalog and, without `--wal-dir`, the WAL are there).
pub fn targets(
    placement: &[(Option<PathBuf>, u64)],
    data_dir: &Path,
    wal_dir: Option<&Path>,
) -> Vec<Target> {
    let in_data: u64 = placement
        .iter()
        .filter(|(at, _)| at.is_none())
        .map(|(_, b)| b)
        .sum();
    let mut out: Vec<Target> = vec![(data_dir.to_path_buf(), in_data, Some("data"))];
    for (at, bytes) in placement {
        if let Some(at) = at {
            out.push((at.clone(), *bytes, Some("tablespace")));
        }
    }
    out.extend(wal_dir.map(|w| (w.to_path_buf(), 0, Some("wal"))));
    out
}

/// Where `db setup` will put the data: `schemas` of `schema_bytes` each, over `tablespaces`
/// round-robin (schema N on the ((N − 1) mod count)-th) or else in the data directory.
pub fn planned(
    tablespaces: &[PathBuf],
    schemas: u32,
    schema_bytes: u64,
) -> Vec<(Option<PathBuf>, u64)> {
    if tablespaces.is_empty() {
        return vec![(None, u64::from(schemas) * schema_bytes)];
    }
    let n = tablespaces.len();
    let mut out: Vec<(Option<PathBuf>, u64)> =
        tablespaces.iter().map(|t| (Some(t.clone()), 0)).collect();
    for s in 0..schemas as usize {
        out[s % n].1 += schema_bytes;
    }
    out
}

/// The preflight of `targets`; `direct` when the server reads its data with O_DIRECT
/// (`debug_io_direct` holds `data`), else the read-ahead of the data's devices is weighed.
pub fn preflight(targets: &[Target], direct: bool) -> Preflight {
    let mut p = iogauge_probe::preflight_roles(targets);
    if !direct {
        let more = read_ahead_warnings(&p);
        p.warnings.extend(more);
    }
    p
}

/// Read-ahead above this many database blocks draws a warning.
pub const READ_AHEAD_BLOCKS: u32 = 32;

/// Whether the server's settings have it read its data with O_DIRECT.
pub fn reads_direct(settings: &[iogauge_model::db::report::Setting]) -> bool {
    settings.iter().any(|s| direct_setting(&s.name, &s.setting))
}

/// Whether setting `name` to `value` has the server read its data with O_DIRECT
/// (`debug_io_direct` listing `data`; InnoDB's `innodb_flush_method=O_DIRECT`).
pub fn direct_setting(name: &str, value: &str) -> bool {
    if name == "innodb_flush_method" {
        // MariaDB/InnoDB: O_DIRECT and O_DIRECT_NO_FSYNC read data files without the cache.
        return value.to_ascii_uppercase().starts_with("O_DIRECT");
    }
    name == "debug_io_direct"
        && value
            .trim_matches('\'')
            .split(',')
            .any(|v| v.trim().eq_ignore_ascii_case("data"))
}

/// PostgreSQL reads through the page cache: where a data device reads ahead many blocks, the
/// kernel may turn its single-block reads into larger device reads (SLOB reads with
/// O_DIRECT, `filesystemio_options=setall`). One line per device whose `read_ahead_kb`
/// exceeds [`READ_AHEAD_BLOCKS`] 8 KiB blocks.
pub fn read_ahead_warnings(p: &Preflight) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for t in p
        .targets
        .iter()
        .filter(|t| t.role.as_deref() != Some("wal"))
    {
        let Some(dev) = &t.device else { continue };
        let top = std::iter::once(dev).filter(|d| d.kind != DevKind::Btrfs);
        for d in top.chain(leaves(dev)) {
            let Some(ra) = d.queue.read_ahead_kb else {
                continue;
            };
            if ra <= READ_AHEAD_BLOCKS * 8 || seen.contains(&d.name.as_str()) {
                continue;
            }
            seen.push(&d.name);
            out.push(format!(
                "{} reads ahead {ra} KiB ({} of PostgreSQL's 8 KiB blocks) and PostgreSQL reads \
                 through the page cache: the kernel may turn its single-block reads into larger \
                 device reads; pass --direct-io (PostgreSQL 16+) so each read reaches the device \
                 as one block, or lower /sys/block/{}/queue/read_ahead_kb",
                d.name,
                ra / 8,
                d.name
            ));
        }
    }
    out
}

/// Which devices a database run samples and compares, by kernel name, sorted, each once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbDevices {
    /// Each target's device (a btrfs over several: its members) and the disks under it.
    pub sampled: Vec<String>,
    /// The disks under the data and the tablespaces (not the WAL's): what PostgreSQL's
    /// physical reads are compared with.
    pub disks: Vec<String>,
    /// The disks under every target, the WAL's too: what its writes are compared with.
    pub write_disks: Vec<String>,
}

/// The devices of a run from the chains the preflight resolved.
pub fn devices(preflight: &Preflight) -> DbDevices {
    let mut sampled = Vec::new();
    let mut disks = Vec::new();
    let mut write_disks = Vec::new();
    for t in &preflight.targets {
        let Some(dev) = &t.device else {
            continue;
        };
        let leaves: Vec<String> = leaves(dev).iter().map(|l| l.name.clone()).collect();
        if dev.kind == DevKind::Btrfs {
            // Not a block device: its members are what the filesystem writes to.
            sampled.extend(dev.below.iter().map(|m| m.name.clone()));
        } else {
            sampled.push(dev.name.clone());
        }
        sampled.extend(leaves.iter().cloned());
        write_disks.extend(leaves.iter().cloned());
        if t.role.as_deref() != Some("wal") {
            disks.extend(leaves);
        }
    }
    for v in [&mut sampled, &mut disks, &mut write_disks] {
        v.sort();
        v.dedup();
    }
    DbDevices {
        sampled,
        disks,
        write_disks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::preflight::{BlockDev, TargetFacts};

    fn dev(name: &str, kind: DevKind, below: Vec<BlockDev>) -> BlockDev {
        BlockDev {
            name: name.into(),
            kind,
            size_bytes: None,
            rotational: None,
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

    fn facts(device: BlockDev, role: &str) -> TargetFacts {
        TargetFacts {
            path: PathBuf::from("/x"),
            fs: None,
            device: Some(device),
            tested_bytes: 0,
            device_bytes: None,
            span_pct: None,
            rotational: None,
            role: Some(role.into()),
            mount: None,
            layout: None,
        }
    }

    /// Each data device reading ahead more than 32 blocks is named once; the WAL's device and
    /// a read-ahead of 256 KiB are not; a btrfs node is weighed by its members.
    #[test]
    fn read_ahead_of_the_data_devices() {
        let ra = |name: &str, kb: u32| {
            let mut d = dev(name, DevKind::Disk, vec![]);
            d.queue.read_ahead_kb = Some(kb);
            d
        };
        let fs = dev(
            "btrfs:c37cbc50",
            DevKind::Btrfs,
            vec![ra("loop3", 2560), ra("loop4", 256)],
        );
        let p = Preflight {
            targets: vec![
                facts(fs, "data"),
                facts(ra("loop3", 2560), "tablespace"),
                facts(ra("vdb", 8192), "wal"),
            ],
            md_arrays: vec![],
            warnings: vec![],
            io_limits: None,
        };
        let w = read_ahead_warnings(&p);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("loop3 reads ahead 2560 KiB (320 of PostgreSQL's 8 KiB blocks)")
                && w[0].contains("--direct-io"),
            "{}",
            w[0]
        );
        assert!(direct_setting("debug_io_direct", "data,wal"));
        assert!(direct_setting("debug_io_direct", "'Data'"));
        assert!(!direct_setting("debug_io_direct", "wal"));
        assert!(!direct_setting("io_direct", "data"));
    }

    /// Sampled: every target's device and the disks under it; compared with the database's
    /// reads: the disks under the data and tablespaces, not the WAL's.
    #[test]
    fn devices_from_the_preflight_chains() {
        let md = dev(
            "md0",
            DevKind::Md,
            vec![
                dev("sdb", DevKind::Disk, vec![]),
                dev("sdc", DevKind::Disk, vec![]),
            ],
        );
        let part = dev(
            "sda1",
            DevKind::Partition,
            vec![dev("sda", DevKind::Disk, vec![])],
        );
        let p = Preflight {
            targets: vec![facts(md, "data"), facts(part, "wal")],
            md_arrays: vec![],
            warnings: vec![],
            io_limits: None,
        };
        let d = devices(&p);
        assert_eq!(d.sampled, ["md0", "sda", "sda1", "sdb", "sdc"]);
        assert_eq!(d.disks, ["sdb", "sdc"]);
        assert_eq!(d.write_disks, ["sda", "sdb", "sdc"], "the WAL's disk too");
        // A btrfs over loop devices whose images are on vda: the members and the disk are
        // sampled, not the btrfs node (no block device); the disk is compared.
        let loop_on = |n: &str| dev(n, DevKind::Loop, vec![dev("vda", DevKind::Disk, vec![])]);
        let fs = dev(
            "btrfs:c37cbc50",
            DevKind::Btrfs,
            vec![loop_on("loop3"), loop_on("loop4")],
        );
        let p = Preflight {
            targets: vec![facts(fs, "data")],
            md_arrays: vec![],
            warnings: vec![],
            io_limits: None,
        };
        let d = devices(&p);
        assert_eq!(d.sampled, ["loop3", "loop4", "vda"]);
        assert_eq!(d.disks, ["vda"]);
    }

    #[test]
    fn targets_per_place_then_wal() {
        let p = |s: &str| PathBuf::from(s);
        let placement = [(Some(p("/u01")), 300), (None, 100), (Some(p("/u02")), 200)];
        assert_eq!(
            targets(&placement, Path::new("/pg/data"), Some(Path::new("/redo"))),
            vec![
                (p("/pg/data"), 100, Some("data")),
                (p("/u01"), 300, Some("tablespace")),
                (p("/u02"), 200, Some("tablespace")),
                (p("/redo"), 0, Some("wal")),
            ]
        );
        // Every schema in a tablespace: the data directory still shows, holding none of it.
        assert_eq!(
            targets(&placement[..1], Path::new("/pg/data"), None),
            vec![
                (p("/pg/data"), 0, Some("data")),
                (p("/u01"), 300, Some("tablespace"))
            ]
        );
    }

    #[test]
    fn planned_round_robin() {
        let ts = [PathBuf::from("/a"), PathBuf::from("/b")];
        assert_eq!(
            planned(&ts, 5, 10),
            vec![(Some(ts[0].clone()), 30), (Some(ts[1].clone()), 20)]
        );
        assert_eq!(planned(&[], 5, 10), vec![(None, 50)]);
    }
}
