//! Preflight: what `iogauge calibrate` shows before any I/O and stores with the run. For each
//! target its filesystem, block device chain, size and rotational-or-not; the md arrays of
//! the system; and warnings about what would make the figures lie: a degraded mirror
//! measures one disk, a resync competes with the test, a small tested span on a large device
//! (short-stroking) keeps an HDD's heads on a few tracks and flatters its seek times.
//!
//! [`preflight`] reads the system and never fails: what it cannot find out becomes a warning.
//! [`warnings_for`] is pure, so every message is tested on hand-built facts.

use crate::fs::fs_of;
use crate::mdstat::read_mdstat;
use crate::sysfs::{file_dev, Sysfs};
use iogauge_model::preflight::{leaves, BlockDev, DevKind, MdArray, Preflight, TargetFacts};
use std::fs::Metadata;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A tested span below this share of the device draws a short-stroking warning.
pub const SHORT_SPAN_PCT: f64 = 10.0;

/// Inspects `targets` (path, tested bytes) on this system for a job this process runs (`run`,
/// `calibrate`): with the cgroup I/O limits that apply to it ([`crate::io_limits_of`]). A
/// block device target (`/dev/sdb`) is the device itself (`st_rdev`); a file is held by the
/// filesystem's device (`st_dev`). A file that does not exist yet (iogauge creates it) is
/// judged by its nearest existing parent directory.
pub fn preflight(targets: &[(PathBuf, u64)]) -> Preflight {
    let roled: Vec<_> = targets.iter().map(|(p, b)| (p.clone(), *b, None)).collect();
    Preflight {
        io_limits: Some(crate::io_limits_of(None)),
        ..preflight_roles(&roled)
    }
}

/// As [`preflight`], each target with its role in a database run ([`TargetFacts::role`]).
pub fn preflight_roles(targets: &[(PathBuf, u64, Option<&str>)]) -> Preflight {
    let mut warnings = Vec::new();
    let md_arrays = read_mdstat().unwrap_or_else(|e| {
        warnings.push(format!("could not check md arrays for degradation: {e}"));
        Vec::new()
    });
    let sysfs = Sysfs::system();
    let targets = targets
        .iter()
        .map(|(path, tested, role)| TargetFacts {
            role: role.map(str::to_string),
            ..target_facts(&sysfs, path, *tested, &mut warnings)
        })
        .collect();
    let mut p = Preflight {
        targets,
        md_arrays,
        warnings,
        io_limits: None,
    };
    let more = warnings_for(&p);
    p.warnings.extend(more);
    p
}

fn target_facts(sys: &Sysfs, path: &Path, tested: u64, warnings: &mut Vec<String>) -> TargetFacts {
    let mut facts = TargetFacts::new(path.to_path_buf(), tested);
    let shown = path.display();
    let (seen, meta) = match nearest_existing(path) {
        Ok(found) => found,
        Err(e) => {
            warnings.push(format!("could not inspect {shown}: {e}"));
            return facts;
        }
    };
    let is_block = meta.file_type().is_block_device();
    if !is_block {
        facts.mount = crate::layout::mount_of(&seen);
        if seen == path {
            facts.layout = crate::layout::file_layout(path);
        }
        match fs_of(&seen) {
            Ok(fs) => facts.fs = Some(fs.name),
            Err(e) => warnings.push(format!("could not read the filesystem of {shown}: {e}")),
        }
    }
    let devnum = if is_block { meta.rdev() } else { meta.dev() };
    let (major, minor) = (libc::major(devnum), libc::minor(devnum));
    let found = if major != 0 {
        sys.by_devnum(major, minor, &file_dev).map(Some)
    } else if facts.fs.as_deref() == Some("btrfs") {
        // btrfs's st_dev is anonymous: its mount (read above) names a member (btrfs.rs).
        match facts.mount.as_ref().and_then(crate::btrfs::member_source) {
            Some(src) => sys.btrfs(src, &file_dev),
            None => Ok(None),
        }
    } else {
        Ok(None)
    };
    match found {
        Ok(Some(dev)) => {
            facts.device_bytes = dev.size_bytes;
            facts.span_pct = dev
                .size_bytes
                .filter(|&s| s > 0)
                .map(|s| tested as f64 / s as f64 * 100.0);
            facts.rotational = rotational_of(&dev);
            facts.device = Some(dev);
        }
        Ok(None) => {
            // Anonymous device numbers: tmpfs, NFS, overlayfs, a btrfs sysfs does not list.
            let fs = facts.fs.as_deref().unwrap_or("its filesystem");
            if !matches!(fs, "tmpfs" | "ramfs") {
                warnings.push(format!(
                    "{shown} is on {fs}, which has no block device of its own (st_dev \
                     {major}:{minor}): device size, tested span and rotational are unknown"
                ));
            }
        }
        Err(e) => warnings.push(format!("could not resolve the device behind {shown}: {e}")),
    }
    facts
}

/// `path` or its nearest existing ancestor, with its metadata.
fn nearest_existing(path: &Path) -> io::Result<(PathBuf, Metadata)> {
    let mut last = None;
    for p in path.ancestors() {
        let p = if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        };
        match std::fs::metadata(p) {
            Ok(m) => return Ok((p.to_path_buf(), m)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::ErrorKind::NotFound.into()))
}

/// True if any leaf rotates, false if every leaf says it does not, else unknown (a VM's disk
/// among them: [`BlockDev::rotates`]).
fn rotational_of(dev: &BlockDev) -> Option<bool> {
    let rot: Vec<_> = leaves(dev).iter().map(|d| d.rotates()).collect();
    if rot.contains(&Some(true)) {
        Some(true)
    } else if rot.iter().all(|r| *r == Some(false)) {
        Some(false)
    } else {
        None
    }
}

/// The warnings the facts call for, one plain line each, naming the device.
pub fn warnings_for(p: &Preflight) -> Vec<String> {
    let mut out = Vec::new();
    for a in &p.md_arrays {
        let used = p
            .targets
            .iter()
            .any(|t| t.device.as_ref().is_some_and(|d| holds_md(d, &a.name)));
        let name = &a.name;
        if a.degraded {
            let what = describe(a);
            out.push(if used {
                format!(
                    "{name} is DEGRADED ({what}): a test of it measures the surviving \
                     disk(s), not the array"
                )
            } else {
                format!("{name} is degraded ({what}); no target is on it")
            });
        }
        if let Some(s) = &a.sync {
            // No percentage: DELAYED or PENDING; it may start at any moment.
            let (doing, effect) = match s.percent {
                Some(pct) => (
                    format!("is {} ({pct:.1}%)", verb(&s.action)),
                    "background I/O",
                ),
                None => (
                    format!("has a {} waiting to start", s.action),
                    "once it starts, its background I/O",
                ),
            };
            out.push(if used {
                format!("{name} {doing}: {effect} will lower and skew the figures")
            } else {
                format!("{name} {doing}; no target is on it, but {effect} also loads any disks it shares with them")
            });
        }
    }
    // A database's files on tmpfs or ramfs live in memory: its reads and writes there never
    // reach storage, so the run would measure RAM. (A calibration cannot test tmpfs with
    // O_DIRECT at all; its target is refused before.)
    for t in &p.targets {
        if let (Some(role), Some(fs)) = (&t.role, &t.fs) {
            if matches!(fs.as_str(), "tmpfs" | "ramfs") {
                out.push(format!(
                    "{role} {} is on {fs}, which is memory: the database's I/O there measures \
                     RAM, not storage; put it on the storage under test",
                    t.path.display()
                ));
            }
        }
    }
    out.extend(layout_warnings(p));
    // A database's data set counts once per device: its data directory and tablespaces on
    // one device add up (the WAL's span says nothing). A calibration's targets stand alone.
    let mut spans: Vec<(&TargetFacts, u64)> = Vec::new();
    for t in &p.targets {
        match t.role.as_deref() {
            Some("wal") => continue,
            Some(_) => {
                let same = spans.iter_mut().find(|(u, _)| {
                    u.role.is_some()
                        && u.device.as_ref().map(|d| &d.name) == t.device.as_ref().map(|d| &d.name)
                });
                match same {
                    Some((_, bytes)) if t.device.is_some() => *bytes += t.tested_bytes,
                    _ => spans.push((t, t.tested_bytes)),
                }
            }
            None => spans.push((t, t.tested_bytes)),
        }
    }
    for (t, tested) in spans {
        let (Some(dev), Some(size)) = (&t.device, t.device_bytes.filter(|&s| s > 0)) else {
            continue;
        };
        let pct = tested as f64 / size as f64 * 100.0;
        if pct >= SHORT_SPAN_PCT || (t.role.is_some() && tested == 0) {
            continue;
        }
        let fix = match t.role {
            Some(_) => "load a larger data set (db setup --schemas, --scale)",
            None => "test the whole device or a larger --size",
        };
        let rot = medium_clause(t.rotational, dev);
        out.push(format!(
            "the tested span is {} of {} on {} ({}); short-stroking flatters HDDs{rot} — {fix}",
            fmt_bytes(tested),
            fmt_bytes(size),
            label(dev),
            fmt_pct(pct),
        ));
    }
    out
}

/// What the short-stroking warning adds about the device's medium: rotational, or a VM's
/// disk of unknown medium, or nothing.
fn medium_clause(rotational: Option<bool>, dev: &BlockDev) -> &'static str {
    match rotational {
        Some(true) => ", and this device is rotational",
        None if leaves(dev).iter().any(|d| d.virtual_disk.is_some()) => {
            ", and this VM's disk may or may not be one (its medium is unknown)"
        }
        _ => "",
    }
}

/// The targets whose files are fragmented ([`FileLayout::fragmented`]), one line each with
/// their extents per GiB: what every result warns of, a run's included.
///
/// [`FileLayout::fragmented`]: iogauge_model::preflight::FileLayout::fragmented
pub fn layout_warnings(p: &Preflight) -> Vec<String> {
    let mut out = Vec::new();
    for t in &p.targets {
        if let Some(l) = t.layout.filter(|l| l.fragmented()) {
            let what = if l.files == 1 { "file" } else { "files" };
            out.push(format!(
                "{} is fragmented: {:.0} extents per GiB over {} in {} {what} (an extent \
                 averages {}; contiguous files have a few per GiB): one logical run of blocks \
                 becomes many device requests — copy the files afresh or defragment \
                 (filefrag -v, xfs_bmap show which) before measuring",
                t.path.display(),
                l.extents_per_gib().unwrap_or(0.0),
                fmt_bytes(l.bytes),
                l.files,
                fmt_bytes(l.bytes / l.extents.max(1)),
            ));
        }
    }
    out
}

/// Whether `dev` is, or is built on, the md array `name`.
fn holds_md(dev: &BlockDev, name: &str) -> bool {
    (dev.kind == DevKind::Md && dev.name == name) || dev.below.iter().any(|b| holds_md(b, name))
}

/// `raid1 [2/1] [U_], sdb1 failed`.
fn describe(a: &MdArray) -> String {
    let mut parts: Vec<String> = a.level.iter().cloned().collect();
    if let (Some(n), Some(m)) = (a.raid_disks, a.active_disks) {
        parts.push(format!("[{n}/{m}]"));
    }
    if let Some(s) = &a.status {
        parts.push(format!("[{s}]"));
    }
    let mut text = parts.join(" ");
    let failed: Vec<&str> = a
        .members
        .iter()
        .filter(|m| m.faulty)
        .map(|m| m.name.as_str())
        .collect();
    if !failed.is_empty() {
        if !text.is_empty() {
            text.push_str(", ");
        }
        text.push_str(&format!("{} failed", failed.join(" and ")));
    }
    text
}

fn verb(action: &str) -> String {
    match action {
        "resync" => "resyncing".into(),
        "recovery" => "recovering".into(),
        "reshape" => "reshaping".into(),
        "check" => "running a check".into(),
        "repair" => "repairing".into(),
        other => format!("running a {other}"),
    }
}

/// `vda`, or `dm-0 (vg0-data)` where the kernel name alone says little.
fn label(dev: &BlockDev) -> String {
    match &dev.dm_name {
        Some(n) => format!("{} ({n})", dev.name),
        None => dev.name.clone(),
    }
}

/// Binary units, one decimal: `1.0 GiB`.
fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

fn fmt_pct(pct: f64) -> String {
    if pct < 0.1 {
        "<0.1%".into()
    } else {
        format!("{pct:.1}%")
    }
}

#[cfg(test)]
mod tests;
