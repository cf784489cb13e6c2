//! The cgroup I/O limits that apply to a process: its cgroups from /proc/PID/cgroup, where
//! the hierarchies are mounted from /proc/self/mountinfo, then cgroup v1's
//! `blkio.throttle.{read,write}_{bps,iops}_device` (`MAJ:MIN VALUE` a line) on its cgroup
//! (v1's throttle is flat: a parent's limits do not hold its children) and v2's `io.max`
//! (`MAJ:MIN rbps=N wbps=max riops=N wiops=max` a line; the root has none) on its cgroup and
//! every one above it. Documentation/admin-guide/cgroup-v1/blkio-controller.rst, cgroup-v2.rst "IO".
//!
//! The files' parsers take text (tested on literal lines); [`io_limits_of`] reads the live
//! system and never fails: a file it cannot read is named in [`IoLimits::unread`].

use iogauge_model::preflight::limits::{IoLimit, IoLimits, Limited};
use procfs::FromBufRead;
use std::io;
use std::path::{Path, PathBuf};

/// `(major, minor, value)` of each line of a v1 `blkio.throttle.*_device` file.
pub fn parse_throttle_v1(text: &str) -> Result<Vec<(u32, u32, u64)>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut cols = line.split_whitespace();
            let (Some(dev), Some(v), None) = (cols.next(), cols.next(), cols.next()) else {
                return Err(format!("{line:?}: want MAJ:MIN VALUE"));
            };
            let (major, minor) =
                devnum(dev).ok_or_else(|| format!("{line:?}: {dev:?} is not MAJ:MIN"))?;
            let value = v
                .parse()
                .map_err(|_| format!("{line:?}: {v:?} is not a number"))?;
            Ok((major, minor, value))
        })
        .collect()
}

/// One line of a v2 `io.max` file: major, minor, and the keys set to a number.
pub type IoMaxLine = (u32, u32, Vec<(Limited, u64)>);

/// Each line of a v2 `io.max` file: the keys set to a number (`max` is no limit; keys
/// iogauge does not know are left out).
pub fn parse_io_max(text: &str) -> Result<Vec<IoMaxLine>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut cols = line.split_whitespace();
            let dev = cols.next().unwrap_or_default();
            let (major, minor) =
                devnum(dev).ok_or_else(|| format!("{line:?}: {dev:?} is not MAJ:MIN"))?;
            let mut set = Vec::new();
            for kv in cols {
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| format!("{line:?}: {kv:?} is not KEY=VALUE"))?;
                let Some(what) = Limited::ALL.into_iter().find(|w| w.v2_key() == k) else {
                    continue;
                };
                if v != "max" {
                    let n = v
                        .parse()
                        .map_err(|_| format!("{line:?}: {kv:?} is neither a number nor max"))?;
                    set.push((what, n));
                }
            }
            Ok((major, minor, set))
        })
        .collect()
}

fn devnum(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// A process's cgroup in the v1 `blkio` hierarchy and in the v2 one, from its
/// /proc/PID/cgroup text (`7:blkio:/x`, `0::/y`).
pub fn parse_proc_cgroup(text: &str) -> Result<(Option<String>, Option<String>), String> {
    let groups = procfs::ProcessCGroups::from_buf_read(text.as_bytes())
        .map_err(|e| format!("/proc/PID/cgroup: {e}"))?;
    let mut v1 = None;
    let mut v2 = None;
    for g in &groups {
        if g.hierarchy == 0 && g.controllers.is_empty() {
            v2 = Some(g.pathname.clone());
        } else if g.controllers.iter().any(|c| c == "blkio") {
            v1 = Some(g.pathname.clone());
        }
    }
    Ok((v1, v2))
}

/// Where the v1 `blkio` and the v2 hierarchies are mounted: (mount point, the hierarchy's
/// path at it) from a /proc/self/mountinfo text.
pub fn parse_cgroup_mounts(text: &str) -> Result<[Option<(PathBuf, String)>; 2], String> {
    let infos = procfs::process::MountInfos::from_buf_read(text.as_bytes())
        .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
    let mut out = [None, None];
    for m in &infos {
        let at = Some((m.mount_point.clone(), m.root.clone()));
        if m.fs_type == "cgroup" && m.super_options.contains_key("blkio") && out[0].is_none() {
            out[0] = at;
        } else if m.fs_type == "cgroup2" && out[1].is_none() {
            out[1] = at;
        }
    }
    Ok(out)
}

/// The directories from the cgroup `path` (under a hierarchy mounted at `mount` whose own
/// path there is `root`) up to the mount: (directory, cgroup path), the job's first.
fn levels(mount: &Path, root: &str, path: &str) -> Vec<(PathBuf, String)> {
    let rel = path
        .strip_prefix(root.trim_end_matches('/'))
        .unwrap_or(path)
        .trim_start_matches('/');
    let mut out = Vec::new();
    let mut at = PathBuf::from(rel);
    loop {
        let cgroup = format!("{}/{}", root.trim_end_matches('/'), at.display());
        let cgroup = if cgroup.len() > 1 {
            cgroup.trim_end_matches('/').to_string()
        } else {
            cgroup
        };
        out.push((mount.join(&at), cgroup));
        if !at.pop() {
            break;
        }
    }
    out
}

/// The I/O limits that apply to process `pid` (this one when `None`), on this system.
pub fn io_limits_of(pid: Option<u32>) -> IoLimits {
    let proc = pid.map_or("self".to_string(), |p| p.to_string());
    let mut limits = IoLimits::default();
    let cgroup = match std::fs::read_to_string(format!("/proc/{proc}/cgroup")) {
        Ok(t) => t,
        Err(e) => {
            limits.unread.push(format!("/proc/{proc}/cgroup: {e}"));
            return limits;
        }
    };
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("/proc/self/mountinfo: {e}"))
        .and_then(|t| parse_cgroup_mounts(&t));
    let (v1, v2, mounts) = match (parse_proc_cgroup(&cgroup), mounts) {
        (Ok((v1, v2)), Ok(m)) => (v1, v2, m),
        (Err(e), _) | (_, Err(e)) => {
            limits.unread.push(e);
            return limits;
        }
    };
    let [m1, m2] = mounts;
    if let (Some(path), Some((mount, root))) = (&v1, &m1) {
        limits.v1 = Some(path.clone());
        // cgroup v1's blk-throttle is flat: a cgroup's limits hold its own tasks only, not
        // its children's (blk-throttle.c, throtl_pd_init: hierarchical only on the default,
        // v2, hierarchy), so only the job's own level applies.
        for (dir, cg) in levels(mount, root, path).into_iter().take(1) {
            for what in Limited::ALL {
                let file = dir.join(what.v1_file());
                match read(&file) {
                    Ok(None) => {}
                    Ok(Some(text)) => match parse_throttle_v1(&text) {
                        Ok(lines) => {
                            for (major, minor, value) in lines {
                                limits
                                    .limits
                                    .push(limit(major, minor, what, value, &file, &cg));
                            }
                        }
                        Err(e) => limits.unread.push(format!("{}: {e}", file.display())),
                    },
                    Err(e) => limits.unread.push(format!("{}: {e}", file.display())),
                }
            }
        }
    }
    if let (Some(path), Some((mount, root))) = (&v2, &m2) {
        limits.v2 = Some(path.clone());
        for (dir, cg) in levels(mount, root, path) {
            let file = dir.join("io.max");
            match read(&file) {
                Ok(None) => {}
                Ok(Some(text)) => match parse_io_max(&text) {
                    Ok(lines) => {
                        for (major, minor, set) in lines {
                            for (what, value) in set {
                                limits
                                    .limits
                                    .push(limit(major, minor, what, value, &file, &cg));
                            }
                        }
                    }
                    Err(e) => limits.unread.push(format!("{}: {e}", file.display())),
                },
                Err(e) => limits.unread.push(format!("{}: {e}", file.display())),
            }
        }
    }
    limits
}

fn limit(major: u32, minor: u32, what: Limited, value: u64, file: &Path, cgroup: &str) -> IoLimit {
    let devnum = format!("{major}:{minor}");
    let device = std::fs::read_link(format!("/sys/dev/block/{devnum}"))
        .ok()
        .and_then(|l| Some(l.file_name()?.to_string_lossy().into_owned()))
        .unwrap_or_else(|| devnum.clone());
    IoLimit {
        device,
        devnum,
        what,
        value,
        file: file.to_path_buf(),
        cgroup: cgroup.to_string(),
    }
}

/// A file's text; `None` when it does not exist (a root cgroup has no `io.max`).
fn read(path: &Path) -> io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_throttle_files() {
        assert_eq!(
            parse_throttle_v1("7:3 500\n8:16 2097152\n").unwrap(),
            [(7, 3, 500), (8, 16, 2_097_152)]
        );
        // No limit set: an empty file.
        assert_eq!(parse_throttle_v1("").unwrap(), []);
        for bad in ["7:3\n", "7:3 x\n", "7-3 500\n", "7:3 500 1\n", "a:b 5\n"] {
            assert!(parse_throttle_v1(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn v2_io_max() {
        let got = parse_io_max("8:16 rbps=2097152 wbps=max riops=max wiops=120\n7:3 rbps=max wbps=max riops=500 wiops=max\n").unwrap();
        assert_eq!(
            got,
            [
                (
                    8,
                    16,
                    vec![(Limited::ReadBps, 2_097_152), (Limited::WriteIops, 120)]
                ),
                (7, 3, vec![(Limited::ReadIops, 500)]),
            ]
        );
        // A key from a newer kernel is left out; a device with every key at max is no limit.
        assert_eq!(
            parse_io_max("7:3 rbps=max wbps=max riops=max wiops=max future=1\n").unwrap(),
            [(7, 3, vec![])]
        );
        for bad in ["7:3 riops\n", "7:3 riops=lots\n", "sda riops=5\n"] {
            assert!(parse_io_max(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn proc_cgroup_and_mounts() {
        // Captured on this VM (cgroup v1 with an empty unified hierarchy), one path changed.
        let cgroup = "9:name=systemd:/\n8:pids:/\n7:blkio:/iogauge/x\n4:memory:/a\n1:cpu:/\n0::/\n";
        assert_eq!(
            parse_proc_cgroup(cgroup).unwrap(),
            (Some("/iogauge/x".into()), Some("/".into()))
        );
        assert_eq!(
            parse_proc_cgroup("0::/user.slice/u.scope\n").unwrap(),
            (None, Some("/user.slice/u.scope".into()))
        );
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
            32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
            38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n\
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let [v1, v2] = parse_cgroup_mounts(mountinfo).unwrap();
        assert_eq!(v1, Some(("/sys/fs/cgroup/blkio".into(), "/".into())));
        assert_eq!(v2, Some(("/sys/fs/cgroup/unified".into(), "/".into())));
    }

    #[test]
    fn levels_up_to_the_mount() {
        let m = Path::new("/sys/fs/cgroup/blkio");
        assert_eq!(
            levels(m, "/", "/a/b"),
            [
                (m.join("a/b"), "/a/b".to_string()),
                (m.join("a"), "/a".to_string()),
                (m.to_path_buf(), "/".to_string()),
            ]
        );
        assert_eq!(levels(m, "/", "/"), [(m.to_path_buf(), "/".to_string())]);
        // In a cgroup namespace or a bind mount of a subtree, the mount is that subtree.
        assert_eq!(
            levels(m, "/ns", "/ns/c"),
            [
                (m.join("c"), "/ns/c".to_string()),
                (m.to_path_buf(), "/ns".to_string())
            ]
        );
    }

    #[test]
    fn this_process_s_limits_are_read() {
        let l = io_limits_of(None);
        assert!(l.unread.is_empty(), "{l:?}");
        assert!(
            l.v1.is_some() || l.v2.is_some(),
            "no cgroup hierarchy found: {l:?}"
        );
    }
}
