//! A memory cgroup that caps the private server's page cache, so reads the data set would
//! otherwise get from a large page cache reach the device.
//!
//! The postmaster joins the group between fork and exec (its children inherit it), so no
//! server process ever runs outside it. Page cache is charged to the group of the process that
//! first touches a page: pages cached before the server started (by the load, say) stay
//! charged elsewhere, so drop the OS cache before a cold run ([`drop_os_cache`]).
//!
//! cgroup v2 (`/sys/fs/cgroup/cgroup.controllers` exists): `<root>/<name>/memory.max`.
//! cgroup v1: `/sys/fs/cgroup/memory/<name>/memory.limit_in_bytes`.

use crate::error::DbError;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const ROOT: &str = "/sys/fs/cgroup";

/// A memory cgroup this process created; [`MemCgroup::remove`] deletes it once empty.
#[derive(Debug)]
pub struct MemCgroup {
    dir: PathBuf,
    /// cgroup v2 (else v1): which files hold the usage and the OOM kills.
    v2: bool,
    limit: u64,
    /// `cgroup.procs`, opened before fork so the child only has to write(2) to it.
    procs: File,
}

impl MemCgroup {
    /// Creates `<memory root>/<name>` with a memory limit of `limit` bytes.
    pub fn create(name: &str, limit: u64) -> Result<MemCgroup, DbError> {
        let root = Path::new(ROOT);
        let (dir, limit_file) = if root.join("cgroup.controllers").exists() {
            enable_v2_memory(root)?;
            (root.join(name), "memory.max")
        } else {
            let v1 = root.join("memory");
            if !v1.join("memory.limit_in_bytes").exists() {
                return Err(DbError::Cgroup {
                    path: v1,
                    why: "no memory controller mounted (neither cgroup v2 nor v1 memory); \
                          run without a cache limit"
                        .into(),
                });
            }
            (v1.join(name), "memory.limit_in_bytes")
        };
        let cg_err = |why: String| DbError::Cgroup {
            path: dir.clone(),
            why,
        };
        std::fs::create_dir(&dir).map_err(|e| {
            cg_err(format!(
                "cannot create: {e} (a cache limit needs root and a writable cgroup fs)"
            ))
        })?;
        let opened = write_file(&dir.join(limit_file), &limit.to_string()).and_then(|_| {
            OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))
                .map_err(|e| format!("cgroup.procs: {e}"))
        });
        match opened {
            Ok(procs) => Ok(MemCgroup {
                v2: limit_file == "memory.max",
                dir,
                limit,
                procs,
            }),
            Err(why) => {
                let _ = std::fs::remove_dir(&dir);
                Err(cg_err(why))
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The limit, in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// How many processes the kernel's OOM killer ended in the group (v1:
    /// `memory.oom_control`, v2: `memory.events`); 0 when unreadable.
    pub fn oom_kills(&self) -> u64 {
        self.read("memory.oom_control", "memory.events")
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
            })
            .unwrap_or(0)
    }

    /// Whether the group's usage is within 1/32 of its limit: what it holds is being
    /// reclaimed as fast as it is charged (a server this small thrashes, reading its own
    /// binary back in).
    pub fn full(&self) -> bool {
        self.read("memory.usage_in_bytes", "memory.current")
            .and_then(|s| s.trim().parse::<u64>().ok())
            .is_some_and(|used| used >= self.limit - self.limit / 32)
    }

    /// One of the group's files, by its cgroup v1 or v2 name.
    fn read(&self, v1: &str, v2: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(if self.v2 { v2 } else { v1 })).ok()
    }

    /// A closure for `CommandExt::pre_exec` that moves the child into this group.
    ///
    /// Only async-signal-safe calls run in the child: getpid(2), formatting into a stack
    /// buffer, write(2) to an fd opened before fork.
    pub fn joiner(&self) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
        let fd = self.procs.as_raw_fd();
        move || {
            let mut buf = [0u8; 24];
            // SAFETY: getpid cannot fail and is async-signal-safe.
            let mut pid = unsafe { libc::getpid() } as u64;
            let mut i = buf.len();
            loop {
                i -= 1;
                buf[i] = b'0' + (pid % 10) as u8;
                pid /= 10;
                if pid == 0 {
                    break;
                }
            }
            let digits = &buf[i..];
            // SAFETY: fd is open (the parent holds the File until after spawn) and `digits`
            // is valid for its length.
            let n = unsafe { libc::write(fd, digits.as_ptr().cast(), digits.len()) };
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        }
    }

    /// Removes the group. The server must have exited; the kernel may take a moment to see
    /// the last task leave, so this retries for a few seconds.
    pub fn remove(self) -> Result<(), DbError> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match std::fs::remove_dir(&self.dir) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(DbError::Cgroup {
                        path: self.dir.clone(),
                        why: format!("cannot remove: {e}"),
                    })
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

/// Removes the memory cgroups an iogauge killed outright left behind: `iogauge-*` groups
/// named after a process that no longer runs (SIGKILL gives no chance to remove one, so each
/// such run left one). Only empty ones go: the kernel refuses to remove a group that still
/// has processes or groups in it, and a group of a live process is not touched. Best effort:
/// without the rights to remove them, they stay, as before.
pub fn remove_stale() {
    let root = Path::new(ROOT);
    for parent in [root.to_path_buf(), root.join("memory")] {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            if stale_pid(&name.to_string_lossy())
                .is_some_and(|pid| !Path::new("/proc").join(pid.to_string()).exists())
            {
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
}

/// The pid in the name of one of iogauge's cgroups (`iogauge-pg-1234`).
fn stale_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("iogauge-")?;
    rest.rsplit('-').next()?.parse().ok()
}

fn write_file(p: &Path, s: &str) -> Result<(), String> {
    OpenOptions::new()
        .write(true)
        .open(p)
        .and_then(|mut f| f.write_all(s.as_bytes()))
        .map_err(|e| format!("{}: {e}", p.display()))
}

/// cgroup v2 needs the memory controller enabled for the root's children.
fn enable_v2_memory(root: &Path) -> Result<(), DbError> {
    let ctl = root.join("cgroup.subtree_control");
    let on = std::fs::read_to_string(&ctl).unwrap_or_default();
    if on.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    write_file(&ctl, "+memory").map_err(|why| DbError::Cgroup {
        path: ctl.clone(),
        why: format!("cannot enable the memory controller: {why}"),
    })
}

/// `sync; echo 1 > /proc/sys/vm/drop_caches`: writes back dirty pages, then drops the clean
/// page cache of the whole machine (root only: the error names the file). For cold reads at
/// the start of a run.
pub fn drop_os_cache() -> Result<(), DbError> {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    let p = Path::new("/proc/sys/vm/drop_caches");
    OpenOptions::new()
        .write(true)
        .open(p)
        .and_then(|mut f| f.write_all(b"1"))
        .map_err(|e| DbError::io(p, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_iogauge_groups_named_after_a_pid_are_candidates() {
        assert_eq!(stale_pid("iogauge-pg-1234"), Some(1234));
        assert_eq!(stale_pid("iogauge-7"), Some(7));
        for other in [
            "iogauge-pg-",
            "iogauge-pg-x1",
            "user.slice",
            "pg-1234",
            "iogauge",
        ] {
            assert_eq!(stale_pid(other), None, "{other}");
        }
    }
}
