//! The seam: what a database engine implements, and the one flow of `db setup`, `reset`,
//! `drop` and a `db run`'s server that every engine goes through.
//!
//! An engine is two implementations:
//! - [`DbEngine`], the engine as the `db` commands use it: refuse the flags of another engine,
//!   set up the data set on a private server it makes in a directory (with the preflight of
//!   where it will live, before any I/O) or on a user's server by DSN, reload it, remove it,
//!   and open a server for a run (a missing private one set up first).
//! - `EngineServer` (beside the [`RunServer`] that holds one), a server of that engine ready
//!   for a run: the data set found on it,
//!   where it lives, its settings, its socket for `watch`, a private server's failure, the
//!   sessions' run (its sessions and load-profile counters given to the common driver and
//!   sampler, `common::workload`), and its shutdown.
//!
//! Everything else is common: the place (`--dir` or `--dsn`), the child process and memory
//! cgroup of a private server, the workload and its sessions' operations, the driver, the
//! sampler's loop on the grid, AAS accumulation, the preflight and the run's document. A new
//! engine is a new folder beside `postgres/` and `mariadb/` with these two implementations,
//! and one line in `engines::engine`.

use crate::common::place::Place;
use crate::common::run::server::{RunPlace, RunServer};
use crate::common::schema::SchemaSpec;
use crate::error::DbError;
use crate::PgBin;
use iogauge_model::db::engine::Engine;
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::db::report::Setting;
use iogauge_model::db::setup::LoadReport;
use iogauge_model::db::workload::Driver;
use iogauge_model::live::SocketAddr;
use iogauge_model::preflight::Preflight;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What a `db run` asked of the engine beyond its place, checked before anything starts.
#[derive(Clone, Copy, Debug)]
pub struct RunRequest {
    /// `--direct-io`.
    pub direct_io: bool,
    /// `--cache-limit`, bytes.
    pub cache_limit: Option<u64>,
    /// `--driver`, if given.
    pub driver: Option<Driver>,
    /// Whether `--mysql-bin` was given.
    pub mysql_bin: bool,
}

/// What a `db setup` asked for, engine-neutral; the flags one engine has no use for are
/// refused by it ([`DbEngine::refuse`]).
#[derive(Clone, Copy)]
pub struct SetupRequest<'a> {
    /// The data set, `blocks_per_schema` in 8 KiB blocks as `--scale` gives them.
    pub spec: &'a SchemaSpec,
    /// `--pg-set` as (name, value): PostgreSQL's settings over iogauge's.
    pub overrides: &'a [(String, String)],
    /// `--wal-dir`: the log on another device (PostgreSQL).
    pub log_dir: Option<&'a Path>,
    /// `--target`: directories to spread the schemas over (PostgreSQL's tablespaces).
    pub targets: &'a [PathBuf],
    /// `--pg-bin`, checked.
    pub pg_bin: Option<&'a PgBin>,
    /// `--mysql-bin`.
    pub mysql_bin: Option<&'a Path>,
    /// `--direct-io` (PostgreSQL's `debug_io_direct`, among `overrides` already).
    pub direct_io: bool,
}

impl SetupRequest<'_> {
    /// Only where and which binaries: what `reset`, `drop` and a run's first setup give.
    pub fn bare<'a>(
        spec: &'a SchemaSpec,
        pg_bin: Option<&'a PgBin>,
        mysql_bin: Option<&'a Path>,
    ) -> SetupRequest<'a> {
        SetupRequest {
            spec,
            overrides: &[],
            log_dir: None,
            targets: &[],
            pg_bin,
            mysql_bin,
            direct_io: false,
        }
    }
}

/// How a setup speaks to its caller (a library never prints): the preflight of where the data
/// set will live, before any I/O; a line worth saying (a half-made server removed, a server
/// set up for a run); the loading's progress in blocks (done, all); and Ctrl-C.
pub struct SetupUi<'a> {
    pub preflight: &'a dyn Fn(&Preflight),
    pub note: &'a dyn Fn(&str),
    pub progress: &'a (dyn Fn(u64, u64) + Sync),
    pub stop: &'a Arc<AtomicBool>,
}

/// A setup's request and how it speaks to its caller, as an engine's steps take them.
#[derive(Clone, Copy)]
pub struct Setup<'a> {
    pub req: SetupRequest<'a>,
    pub ui: &'a SetupUi<'a>,
}

/// A data set loaded: the load's report, the server's settings, and where (a directory, or
/// the DSN without its password).
pub struct SetupDone {
    pub report: LoadReport,
    pub settings: Vec<Setting>,
    pub location: String,
}

/// One database engine, as the `db` commands use it (see the module's doc).
pub trait DbEngine: Sync {
    /// Which engine this is.
    fn kind(&self) -> Engine;

    /// The flags of `r` this engine has no use for: the first one, refused by name with the
    /// way out (exit 2).
    fn refuse(&self, r: &SetupRequest<'_>) -> Result<(), DbError>;

    /// A `db run`'s flags checked, and the driver it runs with (`--driver`, else the
    /// engine's default).
    fn check_run(&self, r: &RunRequest) -> Result<Driver, DbError>;

    /// Makes a private server in `dir` (an unfinished one of iogauge's is replaced; a
    /// directory iogauge did not make is refused) and loads the data set on it, the server
    /// stopped after; or loads it again on a finished one. The preflight goes to `ui` first.
    fn setup_private(&self, dir: &Path, s: Setup<'_>) -> Result<SetupDone, DbError>;

    /// Loads the data set on the user's server at `dsn` (iogauge's schemas replaced).
    fn setup_dsn(&self, dsn: &str, s: Setup<'_>) -> Result<SetupDone, DbError>;

    /// The data set back as loaded; what to say when it is (the place and how).
    fn reset(&self, place: &Place, s: Setup<'_>) -> Result<String, DbError>;

    /// A private server removed with all iogauge made for it, or iogauge's schemas dropped
    /// from a server by DSN; what to say when it is.
    fn drop_all(&self, place: &Place, r: &SetupRequest<'_>) -> Result<String, DbError>;

    /// The server of a `db run` opened and started; a private directory without a server
    /// gets iogauge's default data set first ([`setup_first`]).
    fn open_for_run(&self, p: &RunPlace<'_>, ui: &SetupUi<'_>) -> Result<RunServer, DbError>;

    /// A connection for `iogauge watch` to a private server's socket (`addr`, as the run's
    /// live feed gives it).
    fn watch(&self, addr: &SocketAddr) -> Result<Box<dyn EngineWatch>, DbError>;
}

/// What `iogauge watch` reads of a server at each look, on its own connection: the load
/// profile's counters and the test sessions active now by wait event ("CPU" when not
/// waiting). The rates between looks are `watch::DbWatch`'s.
pub trait EngineWatch: Send {
    fn counters(&mut self) -> Result<LoadDelta, DbError>;
    fn active(&mut self) -> Result<BTreeMap<String, u32>, DbError>;
}

/// `db setup`: the flags checked by the engine, then the data set on `place`.
pub fn setup(
    e: &dyn DbEngine,
    place: &Place,
    r: &SetupRequest<'_>,
    ui: &SetupUi<'_>,
) -> Result<SetupDone, DbError> {
    e.refuse(r)?;
    let s = Setup { req: *r, ui };
    match place {
        Place::Private(dir) => e.setup_private(dir, s),
        Place::Dsn(dsn) => e.setup_dsn(dsn, s),
    }
}

/// The seed of the data set's row placement (and of the sessions, unless `--seed`).
pub const DEFAULT_SEED: u64 = 0x510b;

/// iogauge's default data set (4 schemas of 64 MiB), for `db run` on a directory without
/// a server.
pub fn default_spec() -> SchemaSpec {
    SchemaSpec {
        schemas: 4,
        blocks_per_schema: 64 << 20 >> 13,
        load_parallel: 2,
        seed: DEFAULT_SEED,
        tablespaces: Vec::new(),
    }
}

/// `db run` on a directory without a server: iogauge's default data set set up there with
/// iogauge's settings (a run's `--pg-set` is the run's alone), said in one line first.
pub fn setup_first(
    e: &dyn DbEngine,
    dir: &Path,
    p: &RunPlace<'_>,
    ui: &SetupUi<'_>,
) -> Result<(), DbError> {
    let (server, flag) = match e.kind() {
        Engine::Postgres => ("cluster", ""),
        Engine::Mariadb => ("MariaDB", " --engine mariadb"),
    };
    (ui.note)(&format!(
        "no {server} in {}: setting one up (4 schemas of 64 MiB; `iogauge db setup{flag}` chooses)",
        dir.display(),
    ));
    let spec = default_spec();
    let r = SetupRequest::bare(&spec, p.pg_bin, p.maria_bin);
    let quiet = SetupUi {
        preflight: &|_| {},
        ..*ui
    };
    let s = Setup { req: r, ui: &quiet };
    e.setup_private(dir, s).map(|_| ())
}
