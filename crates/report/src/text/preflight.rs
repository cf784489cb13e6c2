//! The preflight block every result prints before its figures: per target its filesystem,
//! device chain and span, then the storage facts that change what the figures mean (the
//! mount's options, each device's write cache, sector sizes, discard, scheduler, queue size,
//! read-ahead and writeback throttling, the files' extents per GiB), the cgroup I/O limits on
//! the job, the md arrays, and the warnings.

use iogauge_model::preflight::{leaves, BlockDev, DevKind, MountFacts, Preflight, TargetFacts};
use iogauge_stats::Bytes;
use std::fmt::Write as _;

/// The preflight block: one line per target (the first few of many: a job over many ranks
/// has one or more a rank), then warnings.
pub fn preflight_text(p: &Preflight) -> String {
    let mut s = String::new();
    let shown = super::ranks::targets_listed(p.targets.len());
    for t in &p.targets[..shown] {
        // A database run's targets say what they hold (data, tablespace, wal).
        let role = t.role.as_deref().unwrap_or("target");
        let mut line = format!("  {role} {}", t.path.display());
        if let Some(fs) = &t.fs {
            let _ = write!(line, " on {fs}");
        }
        if let Some(d) = &t.device {
            let _ = write!(line, ", device {}", chain(d));
        }
        if t.role.is_some() && t.tested_bytes == 0 {
            if role != "wal" {
                line.push_str("; holds no schema");
            }
        } else {
            let what = if t.role.is_some() { "holds" } else { "tests" };
            let _ = write!(line, "; {what} {}", Bytes(t.tested_bytes));
            if let (Some(dev), Some(pct)) = (t.device_bytes, t.span_pct) {
                let _ = write!(line, " of {} ({pct:.1}%)", Bytes(dev));
            }
        }
        let _ = writeln!(s, "{line}");
        for l in storage_lines(t) {
            let _ = writeln!(s, "    {l}");
        }
    }
    super::ranks::more_targets(&mut s, shown, p.targets.len(), "preflight.targets[]");
    for l in limit_lines(p) {
        let _ = writeln!(s, "  {l}");
    }
    for a in &p.md_arrays {
        let _ = writeln!(
            s,
            "  md {}: {} {}{}",
            a.name,
            a.level.as_deref().unwrap_or("?"),
            a.status
                .as_deref()
                .map(|st| format!("[{st}]"))
                .unwrap_or_default(),
            if a.degraded { " DEGRADED" } else { "" }
        );
    }
    for w in &p.warnings {
        let _ = writeln!(s, "  WARNING: {w}");
    }
    s
}

/// `md0 (md raid1) -> sda1 (partition) -> sda (disk, rotational, mq-deadline) + ...`
fn chain(d: &BlockDev) -> String {
    let mut facts: Vec<String> = vec![match d.kind {
        DevKind::Disk => "disk".into(),
        DevKind::Partition => "partition".into(),
        DevKind::Loop => match &d.loop_backing_file {
            Some(f) => format!("loop over {}", f.display()),
            None => "loop".into(),
        },
        DevKind::Md => format!("md {}", d.md_level.as_deref().unwrap_or(""))
            .trim_end()
            .to_string(),
        DevKind::Dm => format!("dm {}", d.dm_name.as_deref().unwrap_or(""))
            .trim_end()
            .to_string(),
        DevKind::Btrfs => format!("btrfs {}", d.md_level.as_deref().unwrap_or(""))
            .trim_end()
            .to_string(),
        DevKind::Other => "device".into(),
    }];
    if d.below.is_empty() || d.kind == DevKind::Disk {
        if let Some(why) = &d.virtual_disk {
            // The strongest sign says enough here; the JSON keeps them all.
            let first = why.split(", ").next().unwrap_or(why);
            facts.push(format!("a VM's disk ({first}): medium unknown"));
        } else if let Some(r) = d.rotational {
            facts.push(if r { "rotational" } else { "non-rotational" }.into());
        }
        if let Some(sched) = &d.scheduler {
            facts.push(format!("scheduler {sched}"));
        }
    }
    let mut s = format!("{} ({})", d.name, facts.join(", "));
    if !d.below.is_empty() {
        let below: Vec<String> = d.below.iter().map(chain).collect();
        let _ = write!(s, " -> {}", below.join(" + "));
    }
    s
}

/// The storage facts of one target: its mount, each disk's queue (once per distinct
/// setting), and its files' layout. Each line starts with what it is about.
pub fn storage_lines(t: &TargetFacts) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(m) = &t.mount {
        out.push(mount_line(m));
    }
    if let Some(d) = &t.device {
        // The top device's settings first (the one the filesystem submits to), then each
        // disk's; disks set alike share one line.
        let mut lines: Vec<(Vec<&str>, String)> = Vec::new();
        for dev in std::iter::once(d).chain(leaves(d)) {
            if dev.queue.is_empty() || lines.iter().any(|(n, _)| n.contains(&dev.name.as_str())) {
                continue;
            }
            let facts = queue_facts(dev).join(", ");
            match lines.iter_mut().find(|(_, f)| *f == facts) {
                Some((names, _)) => names.push(&dev.name),
                None => lines.push((vec![&dev.name], facts)),
            }
        }
        out.extend(
            lines
                .into_iter()
                .map(|(n, f)| format!("{}: {f}", n.join(", "))),
        );
    }
    if let Some(l) = &t.layout {
        let per = l
            .extents_per_gib()
            .map_or("-".into(), |e| format!("{e:.0}"));
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        out.push(format!(
            "layout: {} of 1 MiB or more, {} in {} ({per} per GiB{})",
            plural(l.files, "file", "files"),
            Bytes(l.bytes),
            plural(l.extents, "extent", "extents"),
            if l.fragmented() { ", fragmented" } else { "" }
        ));
    }
    out
}

/// `mount /srv on /dev/sdb1 (ext4): noatime, rw, data=journal`.
fn mount_line(m: &MountFacts) -> String {
    format!(
        "mount {} on {} ({}): {}",
        m.point.display(),
        m.source.as_deref().unwrap_or("-"),
        m.fs_type,
        m.options.join(",")
    )
}

/// `write cache write back, sectors 512/4096, discard, scheduler none, nr_requests 256,
/// read-ahead 128 KiB`.
fn queue_facts(d: &BlockDev) -> Vec<String> {
    let q = &d.queue;
    let mut f = Vec::new();
    if let Some(w) = &q.write_cache {
        f.push(format!("write cache {w}"));
    }
    match (q.logical_block, q.physical_block) {
        (Some(l), Some(p)) => f.push(format!("sectors {l}/{p} (logical/physical)")),
        (Some(l), None) => f.push(format!("logical sector {l}")),
        _ => {}
    }
    if let Some(dmax) = q.discard_max_bytes {
        f.push(if dmax > 0 { "discard" } else { "no discard" }.into());
    }
    if let Some(sched) = &d.scheduler {
        f.push(format!("scheduler {sched}"));
    }
    if let Some(n) = q.nr_requests {
        f.push(format!("nr_requests {n}"));
    }
    if let Some(ra) = q.read_ahead_kb {
        f.push(format!("read-ahead {ra} KiB"));
    }
    match q.wbt_lat_usec {
        Some(0) => f.push("wbt off".into()),
        Some(us) => f.push(format!("wbt {us} µs")),
        None => {}
    }
    f
}

/// `cgroup limit: loop3 read_iops 500 (blkio.throttle.read_iops_device on /)`, one line per
/// limit that applies to the job.
fn limit_lines(p: &Preflight) -> Vec<String> {
    let Some(l) = &p.io_limits else {
        return Vec::new();
    };
    let mut out: Vec<String> = l
        .limits
        .iter()
        .map(|x| {
            let file = x.file.file_name().unwrap_or_default().to_string_lossy();
            format!(
                "cgroup limit: {} {} {} {} ({file} on {})",
                x.device,
                x.what.name(),
                x.value,
                x.what.unit(),
                x.cgroup
            )
        })
        .collect();
    out.extend(
        l.unread
            .iter()
            .map(|u| format!("cgroup limits unknown: {u}")),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_targets(n: usize) -> Preflight {
        let target = |i: usize| TargetFacts {
            fs: Some("ext4".into()),
            ..TargetFacts::new(format!("/data/d.{i}").into(), 1 << 30)
        };
        Preflight {
            targets: (0..n).map(target).collect(),
            md_arrays: Vec::new(),
            warnings: vec!["a warning".into()],
            io_limits: None,
        }
    }

    /// A rank's target each: all of 16, the first 4 of 17 and where the others are.
    #[test]
    fn many_targets_are_the_first_few_and_a_count() {
        let all = preflight_text(&with_targets(16));
        assert_eq!(all.matches("  target /data/d.").count(), 16, "{all}");
        assert!(!all.contains("more targets"), "{all}");
        let some = preflight_text(&with_targets(17));
        assert_eq!(some.matches("  target /data/d.").count(), 4, "{some}");
        assert!(some.contains("  target /data/d.3 on ext4"), "{some}");
        assert!(
            some.contains("… and 13 more targets (every one is in the JSON's preflight.targets[])"),
            "{some}"
        );
        assert!(some.ends_with("  WARNING: a warning\n"), "{some}");
    }

    /// The cgroup limits on the job, each with its file and cgroup; unread ones said so.
    #[test]
    fn cgroup_limits_are_listed() {
        use iogauge_model::preflight::limits::{IoLimit, IoLimits, Limited};
        let mut p = with_targets(1);
        p.io_limits = Some(IoLimits {
            v1: Some("/".into()),
            v2: None,
            limits: vec![IoLimit {
                device: "loop3".into(),
                devnum: "7:3".into(),
                what: Limited::ReadIops,
                value: 500,
                file: "/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device".into(),
                cgroup: "/".into(),
            }],
            unread: vec!["/sys/fs/cgroup/x/io.max: permission denied".into()],
        });
        let text = preflight_text(&p);
        assert!(
            text.contains(
                "  cgroup limit: loop3 read_iops 500 IOPS (blkio.throttle.read_iops_device on /)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  cgroup limits unknown: /sys/fs/cgroup/x/io.max: permission denied\n"),
            "{text}"
        );
    }

    /// A VM's disk shows its strongest sign and no medium; a physical one its flag.
    #[test]
    fn a_vm_s_disk_has_no_medium() {
        let disk = |virtual_disk: Option<&str>| BlockDev {
            name: "vda".into(),
            kind: DevKind::Disk,
            size_bytes: Some(1 << 30),
            rotational: Some(true),
            scheduler: Some("none".into()),
            model: None,
            dm_name: None,
            md_level: None,
            loop_backing_file: None,
            virtual_disk: virtual_disk.map(Into::into),
            queue: Default::default(),
            below: Vec::new(),
        };
        assert_eq!(
            chain(&disk(Some("driver virtio_blk, on the virtio bus"))),
            "vda (disk, a VM's disk (driver virtio_blk): medium unknown, scheduler none)"
        );
        assert_eq!(chain(&disk(None)), "vda (disk, rotational, scheduler none)");
    }
}
