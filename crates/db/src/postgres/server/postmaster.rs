//! The postmaster as a child process: who it runs as, spawning it (in its own process group,
//! optionally inside a memory cgroup), waiting until it accepts connections, and stopping it.
//!
//! iogauge runs `postgres -D DATA` itself rather than through `pg_ctl start`, so it holds the
//! postmaster's pid from the fork: it can put the process in a cgroup before exec, see at once
//! when it dies, and stop it from `Drop`. Its own process group keeps a terminal's Ctrl-C
//! (sent to the foreground group) away from the server: iogauge stops it cleanly instead.
//! If iogauge is killed outright (SIGKILL, where no `Drop` runs), the kernel sends the
//! postmaster SIGQUIT (PR_SET_PDEATHSIG, see `child::die_with_parent`): PostgreSQL's
//! immediate shutdown, which ends every server process of the cluster at once.

use crate::common::cgroup::MemCgroup;
use crate::common::child::{as_server, crash_lines, wait_until};
use crate::error::DbError;
use std::ffi::CString;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The OS account the server runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// Whether commands must switch to this account (iogauge runs as root).
    pub switch: bool,
}

impl Owner {
    /// `run_as` when iogauge runs as root (PostgreSQL refuses to run as root), else the
    /// current user.
    pub fn resolve(run_as: &str) -> Result<Owner, DbError> {
        // SAFETY: geteuid cannot fail.
        let euid = unsafe { libc::geteuid() };
        if euid == 0 {
            let (uid, gid) = lookup_user(run_as).ok_or_else(|| {
                DbError::Usage(format!(
                    "PostgreSQL cannot run as root and there is no user {run_as:?} to run it \
                     as; create one (e.g. `useradd --system {run_as}`, which the postgresql \
                     package does)"
                ))
            })?;
            Ok(Owner {
                name: run_as.to_string(),
                uid,
                gid,
                switch: true,
            })
        } else {
            // SAFETY: getegid cannot fail.
            let gid = unsafe { libc::getegid() };
            let name = user_name(euid)
                .or_else(|| std::env::var("USER").ok())
                .unwrap_or_else(|| "postgres".into());
            Ok(Owner {
                name,
                uid: euid,
                gid,
                switch: false,
            })
        }
    }

    /// A command that runs as this account, in `cwd`, with no stdin.
    pub fn command(&self, program: &Path, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        c.current_dir(cwd).stdin(Stdio::null()).env("LC_ALL", "C");
        if self.switch {
            c.uid(self.uid).gid(self.gid);
        }
        c
    }

    /// (uid, gid) to give what iogauge makes for the server to this account: `None` when
    /// iogauge is not root (what it makes is the server's already).
    pub fn ids(&self) -> Option<(u32, u32)> {
        self.switch.then_some((self.uid, self.gid))
    }

    /// Checks that this account can reach `dir` (search permission on every ancestor), so
    /// initdb does not fail later with a bare "permission denied".
    pub fn check_reachable(&self, dir: &Path) -> Result<(), DbError> {
        use std::os::unix::fs::MetadataExt;
        if !self.switch {
            return Ok(());
        }
        for a in dir.ancestors().skip(1) {
            let Ok(m) = std::fs::metadata(a) else {
                continue;
            };
            let bits = if m.uid() == self.uid {
                0o100
            } else if m.gid() == self.gid {
                0o010
            } else {
                0o001
            };
            if m.mode() & bits == 0 {
                return Err(DbError::dir(
                    dir,
                    format!(
                        "user {} cannot reach it: {} is not searchable for it; \
                         `chmod o+x {}` or choose another directory",
                        self.name,
                        a.display(),
                        a.display()
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let c = CString::new(name).ok()?;
    // SAFETY: an all-zero passwd is a valid value of the plain C struct.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; getpwnam_r writes only into pw and buf.
    let rc =
        unsafe { libc::getpwnam_r(c.as_ptr(), &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
    (rc == 0 && !out.is_null()).then_some((pw.pw_uid, pw.pw_gid))
}

pub(crate) use iogauge_trust::user_name;

/// A postmaster this process started.
#[derive(Debug)]
pub struct Server {
    child: Child,
    cgroup: Option<MemCgroup>,
    /// The log's length when this server started: what it says is after that.
    log_from: u64,
}

impl Server {
    /// Spawns `postgres -D data`, output appended to `log`, in its own process group and, with
    /// a cgroup, inside it from the first instruction.
    pub fn spawn(
        owner: &Owner,
        postgres: &Path,
        data: &Path,
        log: &Path,
        cgroup: Option<MemCgroup>,
    ) -> Result<Server, DbError> {
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| DbError::io(log, e))?;
        let err = out.try_clone().map_err(|e| DbError::io(log, e))?;
        let log_from = out.metadata().map_or(0, |m| m.len());
        let cwd = data.parent().unwrap_or(data);
        let mut cmd = owner.command(postgres, cwd);
        cmd.arg("-D").arg(data).stdout(out).stderr(err);
        as_server(&mut cmd, cgroup.as_ref(), libc::SIGQUIT);
        let child = cmd.spawn().map_err(|e| DbError::Start {
            dir: data.to_path_buf(),
            why: format!("cannot run {}: {e}", postgres.display()),
        })?;
        Ok(Server {
            child,
            cgroup,
            log_from,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Where this server's own lines in the log begin (bytes).
    pub fn log_from(&self) -> u64 {
        self.log_from
    }

    /// Whether it died, or one of its processes crashed and took the others down, from its
    /// own lines in `log` (see `Cluster::failure`).
    pub fn failure(&mut self, log: &Path) -> Option<String> {
        match (self.exited(), crash_lines(log, self.log_from)) {
            (Some(st), Some(c)) => Some(format!("the server died ({st}): {c}")),
            (Some(st), None) => Some(format!("the server died ({st})")),
            (None, Some(c)) => Some(format!(
                "a server process crashed and the server restarted (crash recovery): {c}"
            )),
            (None, None) => None,
        }
    }

    pub fn cgroup(&self) -> Option<&Path> {
        self.cgroup.as_ref().map(|c| c.path())
    }

    /// `Some(status text)` once the postmaster has exited.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(st)) => Some(st.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("cannot wait for it: {e}")),
        }
    }

    /// Fast shutdown (SIGINT: abort transactions, checkpoint, exit); if the server is still
    /// there after `grace`, immediate shutdown (SIGQUIT), then SIGKILL. Then removes the
    /// cgroup. Returns how it ended.
    pub fn stop(mut self, grace: Duration) -> Result<(), DbError> {
        let pid = self.child.id() as libc::pid_t;
        let mut result = Ok(());
        for (sig, wait) in [
            (libc::SIGINT, grace),
            (libc::SIGQUIT, Duration::from_secs(5)),
            (libc::SIGKILL, Duration::from_secs(5)),
        ] {
            if self.exited().is_some() {
                break;
            }
            // SAFETY: kill(2) on our own child's pid; it is not reaped until try_wait says so.
            unsafe { libc::kill(pid, sig) };
            if wait_until(wait, || self.exited().is_some()) {
                break;
            }
        }
        if self.exited().is_none() {
            result = Err(DbError::Start {
                dir: PathBuf::from(format!("pid {pid}")),
                why: "the server did not exit even after SIGKILL".into(),
            });
        }
        if let Some(cg) = self.cgroup.take() {
            cg.remove()?;
        }
        result
    }
}

/// The pid in `DATA/postmaster.pid` if that process is alive and is a postgres server: a
/// server left running by an earlier iogauge that did not get to stop it.
pub fn leftover_pid(data: &Path) -> Option<libc::pid_t> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    let pid: libc::pid_t = text.lines().next()?.trim().parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let argv0 = cmdline.split(|&b| b == 0).next()?;
    let is_pg = Path::new(std::str::from_utf8(argv0).ok()?)
        .file_name()
        .is_some_and(|n| n == "postgres" || n == "postmaster");
    is_pg.then_some(pid)
}

/// Stops a server this process did not start (fast shutdown for `grace`, then immediate): it cannot be
/// waited for, so this polls until the pid is gone.
pub fn stop_leftover(data: &Path, pid: libc::pid_t, grace: Duration) -> Result<(), DbError> {
    // SAFETY: kill(2) with signal 0 only checks existence.
    let alive = || unsafe { libc::kill(pid, 0) } == 0 && leftover_pid(data) == Some(pid);
    for (sig, wait) in [
        (libc::SIGINT, grace),
        (libc::SIGQUIT, Duration::from_secs(10)),
    ] {
        // SAFETY: kill(2) on a pid just checked to be this data dir's postmaster.
        unsafe { libc::kill(pid, sig) };
        if wait_until(wait, || !alive()) {
            return Ok(());
        }
    }
    Err(DbError::Start {
        dir: data.to_path_buf(),
        why: format!("a leftover server (pid {pid}) did not stop"),
    })
}
