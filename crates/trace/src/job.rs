//! The job's own cgroup in the io controller's hierarchy, so that the tracer can tell the
//! job's block requests from everyone else's: a bio carries the cgroup of the task that made
//! it, and blk-mq merges only bios of one cgroup, so a request's cgroup says whose it is.
//!
//! [`JobCgroup::enter`] makes `iogauge-PID` (an MPI job's ranks: one `iogauge-job-HASH` of
//! the job's name) under the process's current cgroup (cgroup v1:
//! in the `blkio` hierarchy; v2: in the unified one, when the `io` controller is enabled for
//! its children) and moves the process into it; everything it starts afterwards (a private
//! database server, its backends) is born there. Dropping it moves the process back and
//! removes the directory; one left by a killed iogauge is removed by the next (when empty).
//!
//! Attribution is exact only when the cgroup is the job's alone: without the io controller
//! for it (v2 without `io` in the parent's `cgroup.subtree_control`, whose bios would carry
//! an ancestor shared with other processes) `enter` says why and the tracer counts every
//! request as one. Nor does it move out of a v1 cgroup that sets I/O limits on the devices
//! the job uses: v1's blk-throttle is flat, so in a child the job would escape them and
//! measure storage its user does not have.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A cgroup of the job's own, entered; dropped = left and removed.
#[derive(Debug)]
pub struct JobCgroup {
    dir: PathBuf,
    /// The cgroup the process was in.
    parent: PathBuf,
    attribution: Attribution,
}

/// What the tracer needs to attribute requests to the job: the cgroups (kernfs ids, the
/// inode numbers of their directories) whose bios are the job's, and the io controller's
/// index among a task's controllers (its line in /proc/cgroups).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribution {
    pub cgroups: Vec<u64>,
    pub io_subsys: u32,
    /// The job's files, whose page-cache writeback (a flusher thread's, in another cgroup)
    /// is the job's too: [`FileKey::of`] each target.
    pub files: Vec<FileKey>,
}

/// A file as the kernel's inode knows it: `(inode number, its filesystem's device)`, or for
/// a block device `(its device number, 0)` (its page cache's inode); device numbers in the
/// kernel's encoding (`MKDEV`: major << 20 | minor).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileKey {
    pub ino: u64,
    pub dev: u64,
}

// SAFETY: two u64s, no padding; the layout of `struct file_key` in the BPF program.
unsafe impl aya::Pod for FileKey {}

impl FileKey {
    /// The key of the file `m` describes (an open target's `File::metadata`).
    pub fn of(m: &std::fs::Metadata) -> FileKey {
        use std::os::unix::fs::FileTypeExt;
        let kernel = |d: u64| (u64::from(libc::major(d)) << 20) | u64::from(libc::minor(d));
        if m.file_type().is_block_device() {
            FileKey {
                ino: kernel(m.rdev()),
                dev: 0,
            }
        } else {
            FileKey {
                ino: m.ino(),
                dev: kernel(m.dev()),
            }
        }
    }
}

/// The io controller's hierarchy: its mount point and whether it is cgroup v2.
fn io_hierarchy(mountinfo: &str) -> Option<(PathBuf, bool)> {
    let mut v2 = None;
    for line in mountinfo.lines() {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mount = left.split(' ').nth(4)?;
        let mut r = right.split(' ');
        let (fstype, superopts) = (r.next()?, r.nth(1).unwrap_or(""));
        if fstype == "cgroup" && superopts.split(',').any(|o| o == "blkio") {
            return Some((PathBuf::from(unescape(mount)), false));
        }
        if fstype == "cgroup2" && v2.is_none() {
            v2 = Some((PathBuf::from(unescape(mount)), true));
        }
    }
    v2
}

/// A mountinfo field with its octal escapes (`\040` for a blank) undone.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(u8::is_ascii_digit));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The process's cgroup path in the io hierarchy, from /proc/self/cgroup.
fn current_path(cgroup: &str, v2: bool) -> Option<String> {
    cgroup.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (id, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let ours = if v2 {
            id == "0" && controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == "blkio")
        };
        ours.then(|| path.to_string())
    })
}

/// The io controller's index in a task's controllers: its line among /proc/cgroups' (the
/// kernel lists them in that order), `blkio` being the io controller's name there.
fn io_index(cgroups: &str) -> Option<u32> {
    cgroups
        .lines()
        .filter(|l| !l.starts_with('#'))
        .position(|l| l.split_whitespace().next() == Some("blkio"))
        .map(|i| i as u32)
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

impl JobCgroup {
    /// Makes the job's cgroup and moves this process into it; why not, in one line.
    /// `devices`: the block devices the job will use (kernel names, the whole chain under
    /// its targets), whose cgroup v1 limits it must stay under. `group`: what the processes
    /// of one job share (an MPI job's name: its ranks on one host are one job, not each
    /// other's neighbours), which names one cgroup for all of them; `None`: this process's.
    pub fn enter(devices: &[String], group: Option<&str>) -> Result<JobCgroup, String> {
        let (mount, v2) = io_hierarchy(&read("/proc/self/mountinfo")?)
            .ok_or("no cgroup hierarchy with the io (blkio) controller is mounted")?;
        let path = current_path(&read("/proc/self/cgroup")?, v2)
            .ok_or("/proc/self/cgroup names no cgroup in the io hierarchy")?;
        let io_subsys = io_index(&read("/proc/cgroups")?)
            .ok_or("/proc/cgroups lists no blkio (io) controller")?;
        let parent = mount.join(path.trim_start_matches('/'));
        if !v2 {
            // v1's blk-throttle is flat: the limits of the cgroup the process is in would
            // not hold it in a child, so it stays (measured under them) and is not told apart.
            if let Some(file) = throttled_v1(&parent, devices) {
                return Err(format!(
                    "{} sets an I/O limit, which cgroup v1 does not pass on to a child cgroup: iogauge stays in its cgroup, under the limit, and cannot tell the job's requests from others' there",
                    file.display()
                ));
            }
        } else {
            let control = parent.join("cgroup.subtree_control");
            let text = std::fs::read_to_string(&control).unwrap_or_default();
            if !text.split_whitespace().any(|c| c == "io") {
                return Err(format!(
                    "the io controller is not enabled for the children of {} (its cgroup.subtree_control), so the job's requests cannot be told from others'",
                    parent.display()
                ));
            }
        }
        remove_stale(&parent);
        let dir = parent.join(match group {
            Some(g) => format!("iogauge-{GROUP}{:016x}", fnv1a(g)),
            None => format!("iogauge-{}", std::process::id()),
        });
        // A group's last process removes its cgroup on leaving: another may do so between
        // this one's making it and moving in, so that is tried again.
        let mut tries = 0;
        let id = loop {
            tries += 1;
            match std::fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("making {}: {e}", dir.display())),
            }
            let id = std::fs::metadata(&dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .ino();
            match move_to(&dir) {
                Ok(()) => break id,
                Err(_) if group.is_some() && tries < 3 && !dir.exists() => continue,
                Err(e) => {
                    if group.is_none() {
                        let _ = std::fs::remove_dir(&dir);
                    }
                    return Err(e);
                }
            }
        };
        Ok(JobCgroup {
            dir,
            parent,
            attribution: Attribution {
                cgroups: vec![id],
                io_subsys,
                files: Vec::new(),
            },
        })
    }

    /// What the tracer attributes by.
    pub fn attribution(&self) -> &Attribution {
        &self.attribution
    }

    /// The cgroup's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The first of `dir`'s cgroup v1 `blkio.throttle.*_device` files that limits one of
/// `devices` (a limit on a device the job does not use holds it nowhere).
fn throttled_v1(dir: &Path, devices: &[String]) -> Option<PathBuf> {
    let ours: Vec<String> = devices
        .iter()
        .filter_map(|d| std::fs::read_to_string(format!("/sys/class/block/{d}/dev")).ok())
        .map(|t| t.trim().to_string())
        .collect();
    [
        "blkio.throttle.read_iops_device",
        "blkio.throttle.write_iops_device",
        "blkio.throttle.read_bps_device",
        "blkio.throttle.write_bps_device",
    ]
    .iter()
    .map(|f| dir.join(f))
    .find(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines()
                .filter_map(|l| l.split_whitespace().next())
                .any(|n| ours.iter().any(|o| o == n))
        })
    })
}

/// Moves this process (all its threads) into the cgroup `dir`.
fn move_to(dir: &Path) -> Result<(), String> {
    let procs = dir.join("cgroup.procs");
    std::fs::write(&procs, std::process::id().to_string())
        .map_err(|e| format!("moving iogauge into {}: {e}", procs.display()))
}

/// The prefix of a group's cgroup name after `iogauge-`.
const GROUP: &str = "job-";

/// FNV-1a, 64 bits: a group's name as a cgroup's (any bytes in, hex out).
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Removes the `iogauge-PID` cgroups under `parent` whose process is gone (a killed iogauge
/// leaves its cgroup; an empty cgroup is all `rmdir` removes), and groups' cgroups an hour
/// old (a group being entered is seconds old; a live one is not empty).
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("iogauge-")) else {
            continue;
        };
        let stale = if rest.starts_with(GROUP) {
            e.metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 3600)
        } else {
            rest.parse::<u32>()
                .is_ok_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        };
        if stale {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

impl Drop for JobCgroup {
    fn drop(&mut self) {
        // Back where it was, then the (now empty, unless a child or another process of the
        // group lives on) cgroup removed.
        if move_to(&self.parent).is_ok() {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "\
25 1 0:23 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755
30 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
33 25 0:30 / /sys/fs/cgroup/blkio rw,nosuid - cgroup cgroup rw,blkio
34 25 0:31 / /sys/fs/cgroup/cpu\\040x rw - cgroup cgroup rw,cpu,cpuacct
";

    #[test]
    fn the_io_hierarchy_is_v1_blkio_before_v2() {
        assert_eq!(
            io_hierarchy(V1),
            Some((PathBuf::from("/sys/fs/cgroup/blkio"), false))
        );
        let v2 = "30 25 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            io_hierarchy(v2),
            Some((PathBuf::from("/sys/fs/cgroup"), true))
        );
        assert_eq!(io_hierarchy("garbage\n"), None);
        assert_eq!(unescape("/a\\040b"), "/a b");
    }

    #[test]
    fn the_path_and_index_are_read_as_the_kernel_writes_them() {
        let cg = "9:name=systemd:/\n7:blkio:/x/y\n4:memory:/m\n0::/u\n";
        assert_eq!(current_path(cg, false).as_deref(), Some("/x/y"));
        assert_eq!(current_path(cg, true).as_deref(), Some("/u"));
        let cgroups = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\t1\ncpu\t1\t1\t1\ncpuacct\t2\t1\t1\nblkio\t7\t1\t1\nmemory\t4\t21\t1\n";
        assert_eq!(io_index(cgroups), Some(3));
        assert_eq!(io_index("#h\ncpu 1 1 1\n"), None);
    }

    /// Two processes of one group share its cgroup: entered by name, left and removed when
    /// the last leaves. Root, cgroups mounted (this machine: v1 blkio).
    #[test]
    fn a_group_s_processes_share_one_cgroup() {
        let name = format!("test-{}", std::process::id());
        let j = JobCgroup::enter(&[], Some(&name)).expect("entered");
        let dir = j.dir().to_path_buf();
        assert!(
            dir.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == format!("iogauge-job-{:016x}", fnv1a(&name))),
            "{}",
            dir.display()
        );
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap();
        assert!(procs.lines().any(|p| p == std::process::id().to_string()));
        drop(j);
        assert!(!dir.exists(), "the last one out removes it");
    }
}
