//! The server of a cluster: started as iogauge's child (stopping a leftover first, its
//! access closed, optionally in a memory cgroup) and waited for, checked while a run goes on,
//! and stopped — cleanly, or at once when a run is lost already.

use super::{Cluster, DATABASE, START_TIMEOUT, STOP_GRACE};
use crate::common::cgroup::MemCgroup;
use crate::common::child::{log_since, wait_until};
use crate::common::claim::ServerDir;
use crate::error::DbError;
use crate::postgres::dsn::{connect, server_err};
use crate::postgres::server::access;
use crate::postgres::server::conf;
use crate::postgres::server::postmaster::{leftover_pid, stop_leftover, Server};
use postgres::Config;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

impl Cluster {
    /// Starts the server and waits until it accepts connections; creates the test database on
    /// first start. A server left running by an earlier iogauge on this cluster is stopped
    /// first (the marker's lock shows no other iogauge is using it).
    pub fn start(&mut self) -> Result<(), DbError> {
        if let Some(s) = self.server.as_mut() {
            if s.exited().is_none() {
                return Ok(());
            }
            // It died since: clean up (reap, remove its cgroup) and start afresh.
            let _ = self
                .server
                .take()
                .expect("checked above")
                .stop(Duration::ZERO);
        }
        let data = self.data_dir();
        if let Some(pid) = leftover_pid(&data) {
            stop_leftover(&data, pid, STOP_GRACE)?;
        }
        access::secure(&self.owner, &data, &self.run_dir())?;
        crate::common::cgroup::remove_stale();
        if let Some(limit) = self.cache_limit {
            conf::check_cache_limit(&self.owner, &self.bin, &self.data_dir(), limit)?;
        }
        let cgroup = match self.cache_limit {
            Some(limit) => Some(MemCgroup::create(
                &format!("iogauge-pg-{}", std::process::id()),
                limit,
            )?),
            None => None,
        };
        let server = Server::spawn(
            &self.owner,
            &self.bin.tool("postgres"),
            &data,
            &self.log_path(),
            cgroup,
        )?;
        self.server = Some(server);
        let mut admin = self.config();
        admin.dbname("postgres");
        let mut last = String::new();
        let mut exited = None;
        let stop = Arc::clone(&self.stop);
        let ready = wait_until(START_TIMEOUT, || {
            if stop.load(Ordering::Relaxed) {
                return true;
            }
            if let Some(st) = self.server.as_mut().and_then(|s| s.exited()) {
                exited = Some(st);
                return true;
            }
            match connect(&admin) {
                Ok(_) => true,
                Err(e) => {
                    last = e.to_string();
                    false
                }
            }
        });
        if let Some(st) = exited {
            let s = self.server.take().expect("server was just set");
            let from = s.log_from();
            let _ = s.stop(Duration::ZERO);
            return Err(DbError::Start {
                dir: self.dir.clone(),
                why: format!(
                    "postgres exited ({st}): {}",
                    log_since(&self.log_path(), from, 5)
                ),
            });
        }
        if stop.load(Ordering::Relaxed) {
            let _ = self.stop();
            return Err(DbError::interrupted("starting the server"));
        }
        if !ready {
            let _ = self.stop();
            return Err(DbError::Start {
                dir: self.dir.clone(),
                why: format!("not accepting connections after {START_TIMEOUT:?}: {last}"),
            });
        }
        self.ensure_database(&admin)
    }

    fn ensure_database(&self, admin: &Config) -> Result<(), DbError> {
        let mut c = connect(admin)?;
        let exists = c
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&DATABASE])
            .map_err(|e| server_err(admin, &e))?
            .is_some();
        if !exists {
            c.batch_execute(&format!("CREATE DATABASE {DATABASE}"))
                .map_err(|e| server_err(admin, &e))?;
        }
        Ok(())
    }

    /// Stops the server (fast shutdown) if it runs: the one this process started, or one left
    /// running by an earlier iogauge. Removes the cgroup.
    pub fn stop(&mut self) -> Result<(), DbError> {
        self.stop_within(STOP_GRACE)
    }

    /// Stops the server with `grace` for a fast shutdown before an immediate one.
    pub(super) fn stop_within(&mut self, grace: Duration) -> Result<(), DbError> {
        match self.server.take() {
            Some(s) => s.stop(grace),
            None => match leftover_pid(&self.data_dir()) {
                Some(pid) => stop_leftover(&self.data_dir(), pid, grace),
                None => Ok(()),
            },
        }
    }

    /// Whether the server this process started is still up; `Err` with the exit status and
    /// the log's last lines if it died. `Ok(false)` when this process started none.
    pub fn check_alive(&mut self) -> Result<bool, DbError> {
        let Some(s) = self.server.as_mut() else {
            return Ok(false);
        };
        match s.exited() {
            None => Ok(true),
            Some(st) => {
                let s = self.server.take().expect("checked above");
                let from = s.log_from();
                let _ = s.stop(Duration::ZERO);
                Err(DbError::Server {
                    server: self.dir.display().to_string(),
                    why: format!(
                        "the server died ({st}): {}",
                        log_since(&self.log_path(), from, 5)
                    ),
                })
            }
        }
    }

    /// What went wrong with the server this process started, from its log's lines since
    /// then: it died, or one of its processes crashed and PostgreSQL ended all the others to
    /// recover (the sessions' work is lost either way). `None` if neither happened.
    pub fn failure(&mut self) -> Option<String> {
        let log = self.log_path();
        self.server.as_mut()?.failure(&log)
    }

    /// Immediate shutdown: for a server whose run is lost already (see [`Cluster::failure`]),
    /// where a fast one would wait for its crash recovery, then its checkpoint.
    pub fn stop_now(&mut self) -> Result<(), DbError> {
        self.stop_within(Duration::ZERO)
    }

    /// The postmaster's pid, if this process started it and it runs.
    pub fn pid(&self) -> Option<u32> {
        self.server.as_ref().map(|s| s.pid())
    }

    /// The memory cgroup the running server is in, if any.
    pub fn cgroup(&self) -> Option<&Path> {
        self.server.as_ref().and_then(|s| s.cgroup())
    }
}
