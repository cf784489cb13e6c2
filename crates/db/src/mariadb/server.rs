//! A private MariaDB server on the storage under test: `mariadb-install-db` into `DIR/data`,
//! `mariadbd` as iogauge's child with the settings SLOB's method needs, and its removal.
//!
//! Who may connect: no TCP (`skip-networking`); the socket lives in `DIR/run`, 0700, owned
//! by the account running iogauge, which the server runs as too (`--user`); the only accounts
//! are `root@localhost` and that account, both by the `unix_socket` plugin, which asks the
//! kernel who is at the other end of the socket: no password exists to leak.
//!
//! Dying with iogauge: the server is a child in its own process group (a terminal's Ctrl-C
//! does not reach it; iogauge stops it cleanly), with SIGKILL as its parent-death signal, so
//! an iogauge killed outright takes it along (InnoDB recovers from its redo log at the next
//! start). A memory cgroup, as PostgreSQL's, caps its page cache for `--cache-limit`.
//!
//! The directory, and the trust rule it keeps, are `dir`'s: checked at every open, locked while
//! in use, removed exactly by `destroy`.

use super::bin::MariaBin;
use super::conn::{os_user, MariaTarget};
use super::dir::MariaDir;
use crate::common::cgroup::{remove_stale, MemCgroup};
use crate::common::child::{as_server, log_since, run_logged, wait_until, SETUP_TIME};
use crate::common::claim::ServerDir;
use crate::error::DbError;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the server may take to accept connections (InnoDB may recover first).
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a starting server may sit at its memory cgroup's limit before it is called too
/// small (it comes up in about two seconds when it fits).
const STARVED_AFTER: Duration = Duration::from_secs(15);
/// The least `--cache-limit` the server runs in with [`DEFAULTS`] and a few sessions
/// (measured on 10.11 with 4 sessions: at 64 MiB it never came up; at 96 MiB it was
/// OOM-killed in one run and thrashed a 3 s run into 8 minutes in the next).
pub const MIN_CACHE_LIMIT: u64 = 128 << 20;
/// How long a clean shutdown may take before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(60);

/// The settings for physical I/O testing, SLOB's way: a small buffer pool (SLOB's small SGA),
/// reads that reach the device (O_DIRECT, read-ahead off), no buffer pool warmed from a dump,
/// commits that wait for the redo log's fsync.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("innodb_buffer_pool_size", "16M"),
    // The page cleaner keeps this many pages free (default 1536, more than a 16 MiB pool
    // holds): left at it, three quarters of the pool stay empty, the B-tree's inner pages
    // are evicted and every lookup reads two pages. Its minimum keeps the pool full.
    ("innodb_lru_scan_depth", "100"),
    ("innodb_flush_method", "O_DIRECT"),
    ("innodb_read_ahead_threshold", "0"),
    ("innodb_random_read_ahead", "OFF"),
    ("innodb_buffer_pool_load_at_startup", "OFF"),
    ("innodb_buffer_pool_dump_at_shutdown", "OFF"),
    ("innodb_flush_log_at_trx_commit", "1"),
    ("innodb_doublewrite", "ON"),
    // Wait events for the sessions' AAS (see `activity`), file I/O times for the reads'.
    ("performance_schema", "ON"),
    ("performance_schema_consumer_events_waits_current", "ON"),
    ("max_connections", "600"),
    // Left at their defaults, MyISAM's key cache and Aria's page cache (128 MiB each, unused
    // by InnoDB) and performance_schema's statement history and digests (100 MiB at 600
    // connections) made the server 240 MiB before its first query: under a 256 MiB
    // `--cache-limit` its own binary was evicted and read back in 128 KiB faults, reads the
    // device counted and the database did not. These trim it to about 100 MiB.
    ("key_buffer_size", "1M"),
    ("aria_pagecache_buffer_size", "1M"),
    (
        "performance_schema_events_statements_history_long_size",
        "0",
    ),
    ("performance_schema_events_statements_history_size", "0"),
    ("performance_schema_events_stages_history_long_size", "0"),
    ("performance_schema_events_waits_history_long_size", "0"),
    (
        "performance_schema_events_transactions_history_long_size",
        "0",
    ),
    ("performance_schema_digests_size", "0"),
    ("performance_schema_max_digest_length", "0"),
    ("performance_schema_max_sql_text_length", "0"),
    ("performance_schema_max_statement_classes", "0"),
    ("performance_schema_max_memory_classes", "0"),
];

/// A private MariaDB; dropping it stops the server it started.
#[derive(Debug)]
pub struct MariaServer {
    dir: MariaDir,
    bin: MariaBin,
    child: Option<Child>,
    cgroup: Option<MemCgroup>,
    log_from: u64,
}

impl MariaServer {
    /// Makes a new server in `dir` (empty or missing, and trusted: see `dir`): its files and
    /// `mariadb-install-db`. Not started. A failure, a Ctrl-C or an installer that hangs
    /// (stopped after `SETUP_TIME`) removes what this made.
    pub fn create(dir: &Path, bin: MariaBin, stop: &AtomicBool) -> Result<MariaServer, DbError> {
        let s = MariaServer::at(MariaDir::create(dir, &bin.version)?, bin);
        let installed = s.install(stop);
        match installed {
            Ok(()) => Ok(s),
            Err(e) => {
                let shown = s.dir().display().to_string();
                match s.destroy() {
                    Ok(()) => Err(e.noting(|| format!("setup stopped; {shown} removed again"))),
                    Err(c) => Err(DbError::Cleanup {
                        what: format!("{e}; removing {shown} failed too"),
                        source: Box::new(c),
                    }),
                }
            }
        }
    }

    fn install(&self, stop: &AtomicBool) -> Result<(), DbError> {
        if self.socket().as_os_str().len() > 107 {
            return Err(DbError::dir(
                self.dir(),
                "path too long for the server's unix socket (108 bytes); choose a shorter directory",
            ));
        }
        self.write_cnf()?;
        let mut cmd = Command::new(&self.bin.install);
        cmd.arg(format!("--defaults-file={}", self.dir.cnf().display()))
            .arg(format!("--user={}", os_user()))
            .arg("--auth-root-authentication-method=socket")
            .arg(format!("--auth-root-socket-user={}", os_user()))
            .arg("--skip-test-db")
            .current_dir(self.dir());
        run_logged(
            cmd,
            "mariadb-install-db",
            &self.log_path(),
            stop,
            SETUP_TIME,
        )
    }

    /// The server iogauge made in `dir` (not started), once the directory passes the trust
    /// rule; locked for this process until dropped.
    pub fn open(dir: &Path, bin: MariaBin) -> Result<MariaServer, DbError> {
        let s = MariaServer::at(MariaDir::open(dir)?, bin);
        // Settings follow this iogauge's defaults (and the socket its directory).
        s.write_cnf()?;
        Ok(s)
    }

    fn at(dir: MariaDir, bin: MariaBin) -> MariaServer {
        MariaServer {
            dir,
            bin,
            child: None,
            cgroup: None,
            log_from: 0,
        }
    }

    /// Whether its setup finished (one interrupted left a server `db setup` replaces).
    pub fn finished(&self) -> bool {
        self.dir.finished()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
    pub fn data_dir(&self) -> PathBuf {
        self.dir.data_dir()
    }
    fn run_dir(&self) -> PathBuf {
        self.dir.run_dir()
    }
    pub fn socket(&self) -> PathBuf {
        self.run_dir().join("mysqld.sock")
    }
    pub fn log_path(&self) -> PathBuf {
        self.dir.log_path()
    }
    pub fn bin(&self) -> &MariaBin {
        &self.bin
    }

    /// Where to connect.
    pub fn target(&self) -> MariaTarget {
        MariaTarget::socket(&self.socket())
    }

    /// Records that the setup finished.
    pub fn mark_finished(&mut self) -> Result<(), DbError> {
        self.dir.finish()
    }

    fn write_cnf(&self) -> Result<(), DbError> {
        self.dir.write_cnf(&self.cnf_text())
    }

    fn cnf_text(&self) -> String {
        let mut s = String::from(
            "# Written by iogauge: a private server for physical I/O testing.\n[mysqld]\n",
        );
        let own = [
            ("datadir", self.data_dir().display().to_string()),
            ("socket", self.socket().display().to_string()),
            (
                "pid-file",
                self.run_dir().join("mysqld.pid").display().to_string(),
            ),
            ("log-error", self.log_path().display().to_string()),
            // Its own, not /tmp: a starting server deletes every `#sql*` file in its tmpdir
            // (temporary tables left by a crash), which in /tmp would be other servers'
            // (the machine's own MariaDB, another rank's bootstrap next to this one).
            ("tmpdir", self.run_dir().display().to_string()),
            // `SELECT … INTO OUTFILE` and `LOAD_FILE()` only there (the server runs as root
            // when iogauge does: anywhere else, a session could write root's files).
            ("secure_file_priv", self.run_dir().display().to_string()),
            ("user", os_user()),
        ];
        for (k, v) in own {
            s.push_str(&format!("{k}={v}\n"));
        }
        s.push_str("skip-networking\nskip-name-resolve\n");
        for (k, v) in DEFAULTS {
            s.push_str(&format!("{k}={v}\n"));
        }
        s
    }

    /// Starts the server (in a memory cgroup of `cache_limit` bytes) and waits until it
    /// accepts connections.
    pub fn start(&mut self, cache_limit: Option<u64>, stop: &AtomicBool) -> Result<(), DbError> {
        if self.child.is_some() {
            return Ok(());
        }
        remove_stale();
        let cgroup = cache_limit
            .map(|l| MemCgroup::create(&format!("iogauge-maria-{}", std::process::id()), l))
            .transpose()?;
        let log = self.log_path();
        let out = self.dir.open_log()?;
        self.log_from = out.metadata().map_or(0, |m| m.len());
        let mut cmd = Command::new(&self.bin.server);
        cmd.arg(format!("--defaults-file={}", self.dir.cnf().display()))
            .current_dir(self.dir())
            .stdin(std::process::Stdio::null())
            .stdout(out.try_clone().map_err(|e| DbError::io(&log, e))?)
            .stderr(out);
        as_server(&mut cmd, cgroup.as_ref(), libc::SIGKILL);
        let child = cmd
            .spawn()
            .map_err(|e| self.failed(format!("cannot run {}: {e}", self.bin.server.display())))?;
        self.child = Some(child);
        self.cgroup = cgroup;
        let target = self.target();
        let mut last = String::new();
        let mut died = None;
        let mut starved = false;
        let started = Instant::now();
        let up = wait_until(START_TIMEOUT, || {
            if stop.load(Ordering::Relaxed) {
                return true;
            }
            if let Some(st) = self.exited() {
                died = Some(st);
                return true;
            }
            // It comes up in a second or two; still at its cgroup's limit after this long, it
            // is thrashing and would not come up in the whole timeout.
            if started.elapsed() > STARVED_AFTER && self.cgroup.as_ref().is_some_and(|c| c.full()) {
                starved = true;
                return true;
            }
            match target.connect() {
                Ok(_) => true,
                Err(e) => {
                    last = e.to_string();
                    false
                }
            }
        });
        if stop.load(Ordering::Relaxed) {
            let _ = self.stop_now();
            return Err(DbError::interrupted("starting MariaDB"));
        }
        if let Some(st) = died {
            let why = match self.too_small() {
                Some(small) => format!("mariadbd was killed at start ({st}): {small}"),
                None => format!(
                    "mariadbd exited ({st}): {}",
                    log_since(&log, self.log_from, 5)
                ),
            };
            let _ = self.stop_now();
            return Err(self.failed(why));
        }
        if starved {
            let limit = self.cgroup.as_ref().map_or(0, |c| c.limit());
            let _ = self.stop_now();
            return Err(self.failed(format!(
                "its memory cgroup stayed full for {} s: --cache-limit {} MiB is too small \
                 for it; give {}M or more",
                STARVED_AFTER.as_secs(),
                limit >> 20,
                MIN_CACHE_LIMIT >> 20
            )));
        }
        if !up {
            let _ = self.stop_now();
            return Err(self.failed(format!(
                "no connection after {} s: {last}",
                START_TIMEOUT.as_secs()
            )));
        }
        Ok(())
    }

    fn failed(&self, why: String) -> DbError {
        DbError::Maria {
            server: self.dir().display().to_string(),
            why: format!("did not come up: {why}"),
        }
    }

    fn exited(&mut self) -> Option<String> {
        match self.child.as_mut()?.try_wait() {
            Ok(Some(st)) => Some(st.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("cannot wait for it: {e}")),
        }
    }

    /// The running server's process and its descriptor of the redo log (`ib_logfile0`), for
    /// the probe that times the log's writes and syncs.
    pub fn redo_log(&self) -> Option<(u32, u32)> {
        let pid = self.child.as_ref()?.id();
        let log = self.data_dir().join("ib_logfile0");
        let fds = fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
        fds.flatten().find_map(|e| {
            let fd: u32 = e.file_name().to_str()?.parse().ok()?;
            (fs::read_link(e.path()).ok()? == log).then_some((pid, fd))
        })
    }

    /// Whether the server died since it started, with its log's last lines (or, when its
    /// memory cgroup's OOM killer ended it, the cache limit to raise).
    pub fn failure(&mut self) -> Option<String> {
        let st = self.exited()?;
        Some(match self.too_small() {
            Some(small) => format!("the server died ({st}): {small}"),
            None => format!(
                "the server died ({st}): {}",
                log_since(&self.log_path(), self.log_from, 5)
            ),
        })
    }

    /// When the kernel's OOM killer ended a process in the server's memory cgroup: which
    /// `--cache-limit` was too small.
    fn too_small(&self) -> Option<String> {
        let cg = self.cgroup.as_ref().filter(|c| c.oom_kills() > 0)?;
        Some(format!(
            "its memory cgroup's OOM killer ended it: --cache-limit {} MiB is too small for \
             it with these sessions; give {}M or more (more with many sessions)",
            cg.limit() >> 20,
            MIN_CACHE_LIMIT >> 20
        ))
    }

    /// A clean shutdown (SIGTERM: InnoDB flushes and exits); SIGKILL after a minute.
    pub fn stop(&mut self) -> Result<(), DbError> {
        self.signal_and_wait(&[
            (libc::SIGTERM, STOP_GRACE),
            (libc::SIGKILL, Duration::from_secs(5)),
        ])
    }

    /// At once (SIGKILL): the run is lost already; InnoDB recovers at the next start.
    pub fn stop_now(&mut self) -> Result<(), DbError> {
        self.signal_and_wait(&[(libc::SIGKILL, Duration::from_secs(5))])
    }

    fn signal_and_wait(&mut self, steps: &[(libc::c_int, Duration)]) -> Result<(), DbError> {
        let Some(pid) = self.child.as_ref().map(|c| c.id() as libc::pid_t) else {
            return Ok(());
        };
        for &(sig, wait) in steps {
            if self.exited().is_some() {
                break;
            }
            // SAFETY: kill(2) on our own child, not reaped until try_wait says so.
            unsafe { libc::kill(pid, sig) };
            if wait_until(wait, || self.exited().is_some()) {
                break;
            }
        }
        let gone = self.exited().is_some();
        self.child = None;
        if let Some(cg) = self.cgroup.take() {
            cg.remove()?;
        }
        if gone {
            Ok(())
        } else {
            Err(DbError::Maria {
                server: self.dir().display().to_string(),
                why: format!("mariadbd (pid {pid}) did not exit even after SIGKILL"),
            })
        }
    }

    /// Stops the server and removes what iogauge made in its directory, and the directories
    /// iogauge made for it (if nothing else is left in them); still locked meanwhile.
    pub fn destroy(mut self) -> Result<(), DbError> {
        self.stop()?;
        self.dir.destroy()
    }
}

impl Drop for MariaServer {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
