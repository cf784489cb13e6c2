//! The server of a `db run`, of either engine: a private PostgreSQL cluster opened (set up on
//! first use, reconfigured, put in a memory cgroup, started) or one by DSN, or a private
//! MariaDB started (with the probe on its redo log) or one by `--dsn mysql://…`; what
//! iogauge loaded on it, its settings, its socket for `watch`, a failure explained by its own
//! log, and its shutdown at the end, which is part of the run. The engine's own part is an
//! [`EngineServer`] (`postgres::engine`, `mariadb::engine`): everything above this module
//! sees one `RunServer`.

use crate::common::place::Place;
use crate::common::workload::drive::{Go, Sync};
use crate::error::DbError;
use crate::PgBin;
use iogauge_model::db::engine::Engine;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::Setting;
use iogauge_model::db::workload::{Grid, Workload};
use iogauge_model::live::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Why an existing server's devices are not sampled.
pub(crate) const ELSEWHERE: &str =
    "an existing server: device figures are not sampled (the server may be elsewhere)";

/// What `db run` asked of the server.
pub struct RunPlace<'a> {
    /// PostgreSQL or MariaDB.
    pub engine: Engine,
    pub place: &'a Place,
    /// `--pg-set` (a private cluster only).
    pub overrides: &'a [(String, String)],
    /// `--cache-limit` (a private cluster only).
    pub cache_limit: Option<u64>,
    /// `--pg-bin` (a private cluster only): the PostgreSQL a new cluster is made with; an
    /// existing cluster must have been made with it.
    pub pg_bin: Option<&'a PgBin>,
    /// `--mysql-bin` (MariaDB, a private server only).
    pub maria_bin: Option<&'a Path>,
}

/// A server ready for a run, of either engine: what everything above the engines sees.
pub struct RunServer {
    pub engine: Engine,
    /// The engine's own part.
    conn: Box<dyn EngineServer>,
    /// The cluster directory, or the DSN without its password.
    pub location: String,
    /// A private server's data directory: where its I/O lands.
    pub data_dir: Option<PathBuf>,
    /// Notes for the result (an existing server's devices are not sampled).
    pub warnings: Vec<String>,
}

impl RunServer {
    pub(crate) fn new(
        engine: Engine,
        conn: Box<dyn EngineServer>,
        location: String,
        data_dir: Option<PathBuf>,
        warnings: Vec<String>,
    ) -> RunServer {
        RunServer {
            engine,
            conn,
            location,
            data_dir,
            warnings,
        }
    }

    /// A private server iogauge started (else an existing server).
    pub fn is_private(&self) -> bool {
        self.conn.is_private()
    }

    /// The schemas iogauge loaded: (schemas, blocks per schema).
    pub fn data_set(&self) -> Result<(u32, u64), DbError> {
        self.conn.data_set()?.ok_or_else(|| {
            DbError::Usage(format!(
                "{}: no iogauge schemas loaded; run `iogauge db setup` first",
                self.location
            ))
        })
    }

    /// Where the data set lives: (directory, bytes) per place, `None` for the data
    /// directory.
    pub fn placement(&self) -> Result<Vec<(Option<PathBuf>, u64)>, DbError> {
        self.conn.placement()
    }

    /// A private server's log on its own directory (`db setup --wal-dir`).
    pub fn wal_dir(&self) -> Option<PathBuf> {
        self.conn.log_dir()
    }

    /// The settings in force.
    pub fn settings(&self) -> Result<Vec<Setting>, DbError> {
        self.conn.settings()
    }

    /// What in the settings keeps the device's reads from being the sessions' pages.
    pub fn read_path_notes(&self, settings: &[Setting]) -> Vec<String> {
        self.conn.read_path_notes(settings)
    }

    /// Where `iogauge watch` can reach a private server: its unix socket, no password.
    pub fn socket(&self) -> Option<SocketAddr> {
        self.conn.socket()
    }

    /// A private server's failure since it started: it died, or crashed and restarted.
    /// `None` for a server by DSN: its log is not iogauge's to read.
    pub fn failure(&mut self) -> Option<String> {
        self.conn.failure()
    }

    /// The sessions' run on this server, by its engine's sessions on the common driver;
    /// `started` gets t0.
    pub fn run<'a>(
        &'a self,
        wl: &'a Workload,
        grid: &'a Grid,
        stop: Arc<AtomicBool>,
        started: impl FnOnce(Instant) + Send + 'a,
        sync: Sync<'_>,
    ) -> Result<DbOutcome, DbError> {
        let go = Go {
            wl,
            grid,
            stop,
            started: Box::new(started),
            sync,
        };
        go.validate()?;
        self.conn.run(go)
    }

    /// Stops a private server: a clean shutdown, part of the run; an immediate one when the
    /// run is `lost` already (the server crashed, a session failed), which does not wait
    /// for a crash recovery nor a checkpoint. A warning if it failed.
    pub fn stop(&mut self, lost: bool) -> Option<String> {
        self.conn
            .stop(lost)?
            .err()
            .map(|e| format!("stopping the server: {e}"))
    }
}

/// A server of one engine ready for a run (see `crate::engine`); [`RunServer`] holds one.
pub(crate) trait EngineServer: Send {
    /// A private server iogauge started (else the user's, by DSN).
    fn is_private(&self) -> bool;

    /// The schemas iogauge loaded: (schemas, blocks per schema), `None` when there are none.
    fn data_set(&self) -> Result<Option<(u32, u64)>, DbError>;

    /// Where the data set lives: (directory, bytes) per place, `None` for the data directory.
    fn placement(&self) -> Result<Vec<(Option<PathBuf>, u64)>, DbError>;

    /// A private server's log on a directory of its own (`--wal-dir`).
    fn log_dir(&self) -> Option<PathBuf> {
        None
    }

    /// The settings in force.
    fn settings(&self) -> Result<Vec<Setting>, DbError>;

    /// What in `settings` keeps the device's reads from being the sessions' pages, one line
    /// each, for the result.
    fn read_path_notes(&self, _settings: &[Setting]) -> Vec<String> {
        Vec::new()
    }

    /// Where `iogauge watch` reaches a private server: its unix socket, no password.
    fn socket(&self) -> Option<SocketAddr>;

    /// A private server's failure since it started (it died, or crashed and restarted).
    fn failure(&mut self) -> Option<String>;

    /// The sessions' run on the common driver (`go` checked already).
    fn run(&self, go: Go<'_, '_>) -> Result<DbOutcome, DbError>;

    /// Stops a private server (`lost`: at once, no checkpoint); `None` when there is none
    /// running.
    fn stop(&mut self, lost: bool) -> Option<Result<(), DbError>>;
}
