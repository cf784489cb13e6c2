//! The private cluster: a PostgreSQL instance iogauge creates on the directory under test,
//! reachable only through a unix socket in that directory, started and stopped by iogauge.
//!
//! Layout of the cluster directory:
//! ```text
//! DIR/.iogauge-pg      marker: iogauge created this (and what else it created), locked while in use
//! DIR/data/            PGDATA (initdb), with iogauge.conf included from postgresql.conf
//! DIR/run/             unix socket directory, 0700 (no TCP; who may connect: `access`)
//! DIR/server.log       initdb's and the server's output
//! DIR/pristine/        file-level copy of the stopped, loaded cluster (data/, wal/, ts1/, …)
//! ```
//! With `--wal-dir` and `--target`, WAL and tablespaces live in directories outside DIR (in
//! one the user made, in iogauge's own `iogauge-wal` / `iogauge-ts` inside it); the marker
//! lists them and the copies, `reset` and `destroy` cover them.
//! iogauge never writes to or deletes a path it did not create: it refuses a non-empty
//! directory without its marker, and `destroy` removes only what the marker says it made; a
//! failed or interrupted `init` removes what it had made itself. It acts only on paths nobody
//! but root, its user and the server's account could have changed (`trust`), checked at
//! `init` and at every `open`. A `Cluster` stops the server it started when dropped, and the
//! server dies with iogauge if iogauge is killed.
//!
//! Ctrl-C: the stop flag ([`ClusterConfig::stop`], [`Cluster::set_stop`]) interrupts initdb,
//! waiting for a start, and the copies of `snapshot_pristine` and `reset` with
//! [`DbError::Interrupted`]; stopping the server and `destroy` always run to the end.

use crate::common::child::{run_logged, SETUP_TIME};
use crate::common::claim::ServerDir;
use crate::error::DbError;
use crate::postgres::dsn::{connect, server_err, CONNECT_TIMEOUT};
use crate::postgres::server::access;
use crate::postgres::server::bin::PgBin;
use crate::postgres::server::conf;
use crate::postgres::server::files;
use crate::postgres::server::marker::{self, Marker, Outside};
use crate::postgres::server::place::{has_cluster, setup_finished};
use crate::postgres::server::postmaster::{user_name, Owner, Server};
use crate::postgres::server::settings::{merged, settings};
use iogauge_model::db::report::Setting;
use iogauge_trust::{chown_dir, resolve};
use postgres::Config;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

mod running;

/// The database the test schemas live in.
pub const DATABASE: &str = "iogauge";
const PORT: u16 = 5432;
const START_TIMEOUT: Duration = Duration::from_secs(120);
const STOP_GRACE: Duration = Duration::from_secs(120);

/// What `Cluster::init` needs.
#[derive(Clone, Debug, Default)]
pub struct ClusterConfig {
    /// The cluster directory, on the storage under test. Created if missing; an existing one
    /// must be empty.
    pub dir: PathBuf,
    /// WAL elsewhere (`initdb --waldir`); by default WAL shares the data's storage.
    pub wal_dir: Option<PathBuf>,
    /// Directories for tablespaces `iogauge_ts1`, `iogauge_ts2`, … (`db setup --target`),
    /// created once the server is up ([`Cluster::create_tablespaces`]).
    pub tablespaces: Vec<PathBuf>,
    /// `name=value` settings over [`crate::postgres::server::settings::DEFAULTS`].
    pub overrides: Vec<(String, String)>,
    /// The account the server runs as when iogauge runs as root; default "postgres".
    pub run_as: Option<String>,
    /// The PostgreSQL to use; default [`PgBin::find`].
    pub bin: Option<PgBin>,
    /// Raised by Ctrl-C: stops initdb, a start and the copies (see the module doc).
    pub stop: Option<Arc<AtomicBool>>,
}

/// A private cluster on disk, and the server this process started on it, if any.
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    bin: PgBin,
    owner: Owner,
    marker: Marker,
    /// Holds an exclusive flock on the marker: one iogauge per cluster at a time.
    _lock: File,
    server: Option<Server>,
    cache_limit: Option<u64>,
    stop: Arc<AtomicBool>,
}

impl Cluster {
    /// initdb on `cfg.dir` with iogauge's settings, checked by the server. The server is not
    /// started. On failure or Ctrl-C, what this call created is removed again.
    pub fn init(cfg: &ClusterConfig) -> Result<Cluster, DbError> {
        let bin = match &cfg.bin {
            Some(b) => b.clone(),
            None => PgBin::find()?,
        };
        if bin.major < 14 {
            return Err(DbError::Usage(format!(
                "PostgreSQL {} at {} is too old: iogauge needs 14 or newer (pg_stat_wal)",
                bin.major,
                bin.dir.display()
            )));
        }
        let owner = Owner::resolve(cfg.run_as.as_deref().unwrap_or("postgres"))?;
        // Where it really is, and that path used from here on (see `trust`).
        let dir = resolve(&cfg.dir).map_err(|e| DbError::io(&cfg.dir, e))?;
        let socket = dir.join("run").join(format!(".s.PGSQL.{PORT}"));
        if socket.as_os_str().len() > 107 {
            return Err(DbError::dir(
                &dir,
                "path too long for the server's unix socket (108 bytes); choose a shorter directory",
            ));
        }
        owner.check_reachable(&dir)?;
        let marker = marker::claim(
            &dir,
            cfg.wal_dir.as_deref(),
            &cfg.tablespaces,
            &bin.dir,
            &owner,
        )?;
        let undo = marker.clone();
        let lock = match marker::lock(&dir) {
            Ok(l) => l,
            Err(e) => {
                let _ = files::remove(&dir, &undo);
                return Err(e);
            }
        };
        let mut cluster = Cluster {
            dir,
            bin,
            owner,
            marker,
            _lock: lock,
            server: None,
            cache_limit: None,
            stop: cfg.stop.clone().unwrap_or_default(),
        };
        match cluster.build(&cfg.overrides) {
            Ok(()) => Ok(cluster),
            Err(e) => {
                // Keep the lock while removing: no other iogauge may take the half-built
                // cluster in between.
                let removed = files::remove(&cluster.dir, &cluster.marker);
                drop(cluster);
                removed?;
                Err(e)
            }
        }
    }

    fn build(&mut self, overrides: &[(String, String)]) -> Result<(), DbError> {
        let (data, run) = (self.data_dir(), self.run_dir());
        for d in [&data, &run] {
            std::fs::create_dir(d).map_err(|e| DbError::io(d, e))?;
            chown_dir(d, self.owner.ids(), None)?;
        }
        for o in self.marker.outside() {
            chown_dir(&o.path, self.owner.ids(), None)?;
        }
        self.initdb()?;
        self.configure(overrides)
    }

    /// The cluster at `dir` when its setup was killed before it finished (its pristine copy,
    /// taken last, missing or partial), opened to be destroyed; its lock keeps a setup still
    /// running elsewhere safe: that one is refused.
    pub fn unfinished(dir: &Path) -> Result<Option<Cluster>, DbError> {
        match has_cluster(dir) && !setup_finished(dir) {
            true => Cluster::open(dir).map(Some),
            false => Ok(None),
        }
    }

    /// An existing cluster iogauge created at `dir`, once nobody but root, this user and the
    /// server's account could have changed what iogauge will act on there (see `trust`):
    /// the directory, the marker, `data/`, `run/`, the WAL and tablespace directories and the
    /// PostgreSQL the marker names.
    pub fn open(dir: &Path) -> Result<Cluster, DbError> {
        let dir = resolve(dir).map_err(|e| DbError::io(dir, e))?;
        let (marker, server) = marker::read_trusted(&dir)?;
        let lock = marker::lock(&dir)?;
        let bin = match PgBin::find_in(std::slice::from_ref(&marker.bin), None) {
            Ok(b) => b,
            // Gone (an upgrade removed it): the newest; one found but refused is an error.
            Err(DbError::NoPostgres { .. }) => PgBin::find()?,
            Err(e) => return Err(e),
        };
        let owner = Owner::resolve(
            &server
                .and_then(user_name)
                .unwrap_or_else(|| "postgres".into()),
        )?;
        // A run killed before it ended left its own settings: they were that run's only.
        conf::clear_run(&dir.join("data"))?;
        Ok(Cluster {
            dir,
            bin,
            owner,
            marker,
            _lock: lock,
            server: None,
            cache_limit: None,
            stop: Arc::default(),
        })
    }

    /// The flag Ctrl-C raises, for the work that may be interrupted (see the module doc).
    pub fn set_stop(&mut self, stop: Arc<AtomicBool>) {
        self.stop = stop;
    }

    fn initdb(&self) -> Result<(), DbError> {
        let mut cmd = self.owner.command(&self.bin.tool("initdb"), &self.dir);
        cmd.arg("-D")
            .arg(self.data_dir())
            .args(["--auth-local=peer", "--auth-host=reject"])
            .args(["--encoding=UTF8", "--locale=C", "-U"])
            .arg(&self.owner.name);
        if let Some(w) = &self.marker.wal_dir {
            cmd.arg(format!("--waldir={}", w.path.display()));
        }
        run_logged(cmd, "initdb", &self.log_path(), &self.stop, SETUP_TIME)
    }

    /// Writes iogauge's settings (defaults with `overrides` applied, then the managed ones of
    /// `access`) to `data/iogauge.conf`, included at the end of postgresql.conf, and checks
    /// them with the server: a value it refuses is a usage error and the previous file stays.
    /// Takes effect at the next start.
    pub fn configure(&mut self, overrides: &[(String, String)]) -> Result<(), DbError> {
        let mut all = merged(overrides);
        all.extend(access::settings(&self.run_dir(), PORT));
        conf::write(
            &self.owner,
            &self.bin.tool("postgres"),
            &self.data_dir(),
            &all,
            overrides,
        )
    }

    /// `overrides` for one run only (`db run --pg-set`), checked by the server; they take
    /// effect at the next start and are gone when this `Cluster` is dropped, or at the next
    /// open if this process is killed first.
    pub fn configure_run(&mut self, overrides: &[(String, String)]) -> Result<(), DbError> {
        conf::write_run(
            &self.owner,
            &self.bin.tool("postgres"),
            &self.data_dir(),
            overrides,
            &access::settings(&self.run_dir(), PORT),
        )
    }

    /// Runs the server at the next start inside a memory cgroup limited to `bytes`, or without
    /// one. The limit covers the server's shared memory and processes as well as the page
    /// cache it uses: `start` refuses a limit below shared memory + 32 MiB.
    pub fn set_cache_limit(&mut self, bytes: Option<u64>) {
        self.cache_limit = bytes;
    }

    /// How to connect: the unix socket, the server's superuser, the test database.
    pub fn config(&self) -> Config {
        let mut c = Config::new();
        c.host_path(self.run_dir())
            .port(PORT)
            .user(&self.owner.name)
            .dbname(DATABASE)
            .application_name("iogauge")
            .connect_timeout(CONNECT_TIMEOUT);
        c
    }

    pub fn client(&self) -> Result<postgres::Client, DbError> {
        connect(&self.config())
    }

    /// The settings in force, read back from the running server.
    pub fn settings(&self) -> Result<Vec<Setting>, DbError> {
        let cfg = self.config();
        settings(&mut connect(&cfg)?).map_err(|e| server_err(&cfg, &e))
    }

    /// Creates tablespace `iogauge_tsN` on the N-th tablespace directory of the marker (the
    /// server must be running); returns their names in order.
    pub fn create_tablespaces(&self) -> Result<Vec<String>, DbError> {
        let cfg = self.config();
        let mut c = connect(&cfg)?;
        let mut names = Vec::new();
        for (i, t) in self.marker.tablespaces.iter().enumerate() {
            let (name, path) = (
                crate::postgres::schema::tablespace_name(i as u32 + 1),
                &t.path,
            );
            let loc = path.to_str().ok_or_else(|| {
                DbError::dir(path, "not valid UTF-8; PostgreSQL needs a UTF-8 location")
            })?;
            c.batch_execute(&format!(
                "CREATE TABLESPACE {name} LOCATION '{}'",
                loc.replace('\'', "''")
            ))
            .map_err(|e| server_err(&cfg, &e))?;
            names.push(name);
        }
        Ok(names)
    }

    /// The tablespace directories, in order.
    pub fn tablespace_dirs(&self) -> Vec<PathBuf> {
        self.marker
            .tablespaces
            .iter()
            .map(|t| t.path.clone())
            .collect()
    }

    /// The separate WAL directory, if any.
    pub fn wal_dir(&self) -> Option<&Path> {
        self.marker.wal_dir.as_ref().map(|w| w.path.as_path())
    }

    /// Takes the file-level copy `reset` restores: stops the server, copies data (and the WAL
    /// and tablespace directories), restarts it if it was running.
    pub fn snapshot_pristine(&mut self) -> Result<(), DbError> {
        self.while_stopped(files::snapshot)
    }

    /// Back to the pristine loaded state: stop, replace data (and WAL) with the copy, sync,
    /// restart if it was running. Interrupted while copying, the cluster stays as it was.
    pub fn reset(&mut self) -> Result<(), DbError> {
        self.while_stopped(files::restore)
    }

    /// Runs a file-level step on the cluster's directory (and WAL directory) with the server
    /// stopped, restarting it afterwards if it was running.
    fn while_stopped(
        &mut self,
        step: fn(&Path, &[Outside], &AtomicBool) -> Result<(), DbError>,
    ) -> Result<(), DbError> {
        let was = self.server.is_some();
        self.stop()?;
        step(&self.dir, &self.marker.outside(), &self.stop)?;
        if was {
            self.start()?;
        }
        Ok(())
    }

    /// Stops the server and removes everything iogauge created here, and nothing else.
    /// The server gets an immediate shutdown: its files are about to go, so the shutdown
    /// checkpoint (seconds of writes after a load) would be wasted.
    pub fn destroy(mut self) -> Result<(), DbError> {
        self.stop_within(Duration::ZERO)?;
        files::remove(&self.dir, &self.marker)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn bin(&self) -> &PgBin {
        &self.bin
    }
    pub fn has_pristine(&self) -> bool {
        files::has_pristine(&self.dir)
    }
}

impl Drop for Cluster {
    /// Stops the server this process started (never one it found running).
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            let _ = s.stop(STOP_GRACE);
        }
        // A run's own settings (`configure_run`) end with it.
        let _ = conf::clear_run(&self.data_dir());
    }
}

impl ServerDir for Cluster {
    fn root(&self) -> &Path {
        &self.dir
    }
}
