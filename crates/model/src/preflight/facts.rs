//! The storage facts of two results side by side: `compare` lists those that differ ("mount
//! options differ: +nodatacow"), since a figure that moved with a mount option or a write
//! cache did not move with the storage.

use super::{leaves, BlockDev, Preflight, TargetFacts};

/// One fact per line, `name: value`, of one target: filesystem, mount options, the device
/// the filesystem submits to and its queue settings (its own, else its first disk's), and
/// whether its files are fragmented.
fn facts(t: &TargetFacts) -> Vec<(String, String)> {
    let mut f = Vec::new();
    if let Some(fs) = &t.fs {
        f.push(("filesystem".into(), fs.clone()));
    }
    if let Some(m) = &t.mount {
        f.push(("mount options".into(), m.options.join(",")));
    }
    if let Some(d) = &t.device {
        f.push(("device".into(), d.name.clone()));
        if let Some(profile) = &d.md_level {
            f.push(("redundancy".into(), profile.clone()));
        }
        let q: Option<&BlockDev> = std::iter::once(d)
            .chain(leaves(d))
            .find(|x| !x.queue.is_empty());
        if let Some(x) = q {
            let q = &x.queue;
            let mut put = |k: &str, v: Option<String>| {
                if let Some(v) = v {
                    f.push((k.to_string(), v));
                }
            };
            put("write cache", q.write_cache.clone());
            put(
                "sector sizes",
                q.logical_block
                    .zip(q.physical_block)
                    .map(|(l, p)| format!("{l}/{p}")),
            );
            put(
                "discard",
                q.discard_max_bytes
                    .map(|d| if d > 0 { "yes" } else { "no" }.to_string()),
            );
            put("scheduler", x.scheduler.clone());
            put("nr_requests", q.nr_requests.map(|n| n.to_string()));
            put("read-ahead KiB", q.read_ahead_kb.map(|n| n.to_string()));
        }
    }
    if let Some(l) = &t.layout {
        let frag = if l.fragmented() {
            "fragmented"
        } else {
            "contiguous"
        };
        f.push(("layout".into(), frag.into()));
    }
    f
}

/// The facts that differ between `a` and `b`, one line each: `data: mount options differ:
/// +nodatacow,+nodatasum` (options `b` has that `a` lacks with `+`, the reverse with `-`),
/// `target: write cache differs: write back → write through`. Targets pair by role when both
/// have roles, else by position; a fact only one side recorded is not a difference.
pub fn differences(a: &Preflight, b: &Preflight) -> Vec<String> {
    let mut out = Vec::new();
    for (i, ta) in a.targets.iter().enumerate() {
        let tb = match &ta.role {
            Some(role) => b.targets.iter().find(|t| t.role.as_ref() == Some(role)),
            None => b.targets.get(i).filter(|t| t.role.is_none()),
        };
        let Some(tb) = tb else { continue };
        let who = ta.role.as_deref().unwrap_or("target");
        let fb = facts(tb);
        for (k, va) in facts(ta) {
            let Some((_, vb)) = fb.iter().find(|(kb, _)| *kb == k) else {
                continue;
            };
            if va == *vb {
                continue;
            }
            let (verb, change) = if k == "mount options" {
                let sa: Vec<&str> = va.split(',').collect();
                let sb: Vec<&str> = vb.split(',').collect();
                let plus = sb
                    .iter()
                    .filter(|o| !sa.contains(o))
                    .map(|o| format!("+{o}"));
                let minus = sa
                    .iter()
                    .filter(|o| !sb.contains(o))
                    .map(|o| format!("-{o}"));
                ("differ", plus.chain(minus).collect::<Vec<_>>().join(","))
            } else {
                ("differs", format!("{va} → {vb}"))
            };
            out.push(format!("{who}: {k} {verb}: {change}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::{DevKind, FileLayout, MountFacts, QueueFacts};

    fn target(options: &[&str], cache: &str, extents: u64) -> TargetFacts {
        TargetFacts {
            path: "/srv/pg".into(),
            fs: Some("btrfs".into()),
            device: Some(BlockDev {
                name: "loop3".into(),
                kind: DevKind::Loop,
                size_bytes: None,
                rotational: Some(false),
                scheduler: Some("none".into()),
                model: None,
                dm_name: None,
                md_level: None,
                loop_backing_file: None,
                virtual_disk: None,
                queue: QueueFacts {
                    write_cache: Some(cache.into()),
                    read_ahead_kb: Some(128),
                    ..Default::default()
                },
                below: vec![],
            }),
            tested_bytes: 0,
            device_bytes: None,
            span_pct: None,
            rotational: None,
            role: Some("data".into()),
            mount: Some(MountFacts {
                point: "/srv".into(),
                source: Some("/dev/loop3".into()),
                fs_type: "btrfs".into(),
                options: options.iter().map(|o| o.to_string()).collect(),
            }),
            layout: Some(FileLayout {
                files: 4,
                bytes: 1 << 30,
                extents,
            }),
        }
    }

    fn pre(t: TargetFacts) -> Preflight {
        Preflight {
            targets: vec![t],
            md_arrays: vec![],
            warnings: vec![],
            io_limits: None,
        }
    }

    #[test]
    fn the_facts_that_moved_are_named() {
        let a = pre(target(&["rw", "noatime"], "write back", 10));
        let b = pre(target(
            &["rw", "noatime", "nodatacow"],
            "write through",
            9000,
        ));
        assert_eq!(
            differences(&a, &b),
            [
                "data: mount options differ: +nodatacow",
                "data: write cache differs: write back → write through",
                "data: layout differs: contiguous → fragmented",
            ]
        );
        assert!(differences(&a, &a).is_empty());
        let mut no_role = target(&["rw"], "write back", 10);
        no_role.role = None;
        assert!(
            differences(&pre(no_role.clone()), &a).is_empty(),
            "a target and a data directory do not pair"
        );
        let mut other = no_role.clone();
        other.mount.as_mut().unwrap().options = vec!["data=journal".into(), "rw".into()];
        assert_eq!(
            differences(&pre(no_role), &pre(other)),
            ["target: mount options differ: +data=journal"]
        );
    }
}
