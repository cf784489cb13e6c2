//! A `db run` made ready: its server — a private cluster opened (set up on first use,
//! reconfigured, put in a memory cgroup, started) or an existing server by DSN — what
//! iogauge loaded on it, the workload on that data set, and the storage under a private
//! cluster with its preflight; and what follows the sessions' run: the document's context and
//! warnings, a failure explained by the server's own log, and the server's shutdown at the
//! end, which is part of the run.

use super::document::{data_set, db_document};
use super::preflight;
use crate::dsn::{connect, parse_dsn};
use crate::error::{chain_text, error_text, PgError};
use crate::maria::{self, MariaBin, MariaServer, MariaTarget};
use crate::schema;
use crate::server::bin::PgBin;
use crate::server::cgroup::drop_os_cache;
use crate::server::cluster::Cluster;
use crate::server::place::{check_dir, has_cluster, setup_finished, Place};
use crate::workload::driver;
use crate::workload::spec::WorkloadSpec;
use iogauge_model::db::engine::Engine;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::{DataSet, DbContext, DbReport, DbServer, Setting};
use iogauge_model::db::workload::{Grid, Workload};
use iogauge_model::live::SocketAddr;
use iogauge_model::preflight::Preflight;
use iogauge_model::secret::redact_dsn;
use iogauge_model::system::Snapshot;
use iogauge_model::Histograms;
use iogauge_stats::HistError;
use postgres::config::Host;
use postgres::Config;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Why an existing server's devices are not sampled.
const ELSEWHERE: &str =
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

/// The engine's own part of a server ready for a run.
enum Conn {
    Pg {
        cfg: Config,
        /// The private cluster; dropping it stops the server.
        cluster: Option<Box<Cluster>>,
    },
    Maria {
        target: MariaTarget,
        /// The private server; dropping it stops it.
        server: Option<MariaServer>,
        /// Times its redo log's writes and syncs (a private server, as root).
        redo: Option<iogauge_trace::FileProbe>,
    },
}

/// A server ready for a run.
pub struct RunServer {
    pub engine: Engine,
    conn: Conn,
    /// The cluster directory, or the DSN without its password.
    pub location: String,
    /// A private cluster's data directory: where its I/O lands.
    pub data_dir: Option<PathBuf>,
    /// Notes for the result (an existing server's devices are not sampled).
    pub warnings: Vec<String>,
}

impl RunServer {
    /// Opens the server of `p`. A private directory without a cluster gets one from `setup`
    /// (the caller's, with its own progress display); a directory iogauge did not create is
    /// refused.
    pub fn prepare(
        p: &RunPlace<'_>,
        setup: impl FnOnce(&Path) -> Result<Cluster, PgError>,
    ) -> Result<RunServer, PgError> {
        if p.engine == Engine::Mariadb {
            return Self::maria(p);
        }
        match p.place {
            Place::Private(dir) => Self::private(dir, p, setup),
            Place::Dsn(dsn) => {
                if p.pg_bin.is_some() {
                    return Err(PgError::Usage(
                        "--pg-bin picks the PostgreSQL of a private cluster (--dir); a --dsn server runs its own"
                            .into(),
                    ));
                }
                if !p.overrides.is_empty() {
                    return Err(PgError::Usage(
                        "--pg-set configures a private cluster; set it on your own server instead"
                            .into(),
                    ));
                }
                Ok(RunServer {
                    engine: Engine::Postgres,
                    conn: Conn::Pg {
                        cfg: parse_dsn(dsn)?,
                        cluster: None,
                    },
                    location: redact_dsn(dsn),
                    data_dir: None,
                    warnings: vec![ELSEWHERE.into()],
                })
            }
        }
    }

    fn private(
        dir: &Path,
        p: &RunPlace<'_>,
        setup: impl FnOnce(&Path) -> Result<Cluster, PgError>,
    ) -> Result<RunServer, PgError> {
        let mut c = if has_cluster(dir) {
            if !setup_finished(dir) {
                return Err(PgError::Usage(format!(
                    "--dir {}: the setup of this cluster did not finish (it was interrupted); run `iogauge db setup --dir {}` again",
                    dir.display(),
                    dir.display()
                )));
            }
            let mut c = Cluster::open(dir)?;
            if let Some(want) = p.pg_bin.filter(|b| b.dir != c.bin().dir) {
                return Err(PgError::Usage(format!(
                    "--pg-bin {}: the cluster in {} was made with PostgreSQL {} at {}; omit --pg-bin, or `iogauge db drop --dir {}` and set it up again",
                    want.dir.display(),
                    dir.display(),
                    c.bin().major,
                    c.bin().dir.display(),
                    dir.display()
                )));
            }
            if !p.overrides.is_empty() {
                c.configure(p.overrides)?;
            }
            c
        } else if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
            return Err(PgError::Usage(format!(
                "--dir {}: not empty and not created by iogauge; refusing to use it (choose an empty or new directory)",
                dir.display()
            )));
        } else {
            check_dir("--dir", dir)?;
            let mut c = setup(dir)?;
            c.stop()?;
            c
        };
        if let Some(limit) = p.cache_limit {
            c.stop()?;
            drop_os_cache()?;
            c.set_cache_limit(Some(limit));
        }
        c.start()?;
        Ok(RunServer {
            engine: Engine::Postgres,
            location: dir.display().to_string(),
            data_dir: Some(c.data_dir()),
            warnings: Vec::new(),
            conn: Conn::Pg {
                cfg: c.config(),
                cluster: Some(Box::new(c)),
            },
        })
    }

    /// A MariaDB: a private server iogauge set up in `--dir` (started, in a memory cgroup
    /// with `--cache-limit`), or the user's by `--dsn`.
    fn maria(p: &RunPlace<'_>) -> Result<RunServer, PgError> {
        if !p.overrides.is_empty() {
            return Err(PgError::Usage(
                "--pg-set configures PostgreSQL; MariaDB runs with iogauge's settings".into(),
            ));
        }
        match p.place {
            Place::Dsn(dsn) => {
                if p.maria_bin.is_some() {
                    return Err(PgError::Usage(
                        "--mysql-bin picks the MariaDB of a private server (--dir); a --dsn server runs its own".into(),
                    ));
                }
                Ok(RunServer {
                    engine: Engine::Mariadb,
                    conn: Conn::Maria {
                        target: MariaTarget::dsn(dsn)?,
                        server: None,
                        redo: None,
                    },
                    location: redact_dsn(dsn),
                    data_dir: None,
                    warnings: vec![ELSEWHERE.into()],
                })
            }
            Place::Private(dir) => {
                if !maria::setup_finished(dir) {
                    return Err(PgError::Usage(format!(
                        "--dir {}: no finished MariaDB setup here; run `iogauge db setup --engine mariadb --dir {}` first",
                        dir.display(),
                        dir.display()
                    )));
                }
                let mut s = MariaServer::open(dir, MariaBin::find(p.maria_bin)?)?;
                if p.cache_limit.is_some() {
                    drop_os_cache()?;
                }
                s.start(p.cache_limit, &AtomicBool::new(false))?;
                let (redo, warnings) = match maria::redo_probe(&s) {
                    Ok(probe) => (Some(probe), Vec::new()),
                    Err(why) => (None, vec![why]),
                };
                Ok(RunServer {
                    engine: Engine::Mariadb,
                    location: dir.display().to_string(),
                    data_dir: Some(s.data_dir()),
                    warnings,
                    conn: Conn::Maria {
                        target: s.target(),
                        server: Some(s),
                        redo,
                    },
                })
            }
        }
    }

    /// A private cluster iogauge started (else an existing server).
    pub fn is_private(&self) -> bool {
        match &self.conn {
            Conn::Pg { cluster, .. } => cluster.is_some(),
            Conn::Maria { server, .. } => server.is_some(),
        }
    }

    /// The private PostgreSQL cluster, if that is what runs.
    fn cluster(&self) -> Option<&Cluster> {
        match &self.conn {
            Conn::Pg { cluster, .. } => cluster.as_deref(),
            Conn::Maria { .. } => None,
        }
    }

    /// The schemas iogauge loaded: (schemas, blocks per schema).
    pub fn data_set(&self) -> Result<(u32, u64), PgError> {
        let found = match &self.conn {
            Conn::Pg { cfg, .. } => schema::discover(cfg)?,
            Conn::Maria { target, .. } => maria::schema::discover(target)?,
        };
        found.ok_or_else(|| {
            PgError::Usage(format!(
                "{}: no iogauge schemas loaded; run `iogauge db setup` first",
                self.location
            ))
        })
    }

    /// Where the data set lives, as [`schema::placement`] says.
    pub fn placement(&self) -> Result<Vec<(Option<PathBuf>, u64)>, PgError> {
        match &self.conn {
            Conn::Pg { cfg, .. } => schema::placement(cfg),
            // One tablespace: the data directory (bytes: weighed by the preflight's sizes).
            Conn::Maria { .. } => Ok(vec![(None, 0)]),
        }
    }

    /// A private cluster's separate WAL directory (`db setup --wal-dir`).
    pub fn wal_dir(&self) -> Option<PathBuf> {
        self.cluster()?.wal_dir().map(Path::to_path_buf)
    }

    /// The settings in force.
    pub fn settings(&self) -> Result<Vec<Setting>, PgError> {
        let cfg = match &self.conn {
            Conn::Maria { target, .. } => return maria::settings(target),
            Conn::Pg { cfg, .. } => cfg,
        };
        match self.cluster() {
            Some(c) => c.settings(),
            None => {
                let mut client = connect(cfg)?;
                crate::server::settings::settings(&mut client).map_err(|e| PgError::Server {
                    server: self.location.clone(),
                    why: error_text(&e),
                })
            }
        }
    }

    /// Where `iogauge watch` can reach a private server: its unix socket, no password.
    pub fn socket(&self) -> Option<SocketAddr> {
        let cfg = match &self.conn {
            Conn::Pg { cfg, cluster } if cluster.is_some() => cfg,
            Conn::Maria {
                server: Some(s), ..
            } => {
                return Some(SocketAddr {
                    engine: Engine::Mariadb,
                    socket_dir: s.socket().parent()?.to_path_buf(),
                    port: 0,
                    user: maria::os_user(),
                    dbname: String::new(),
                })
            }
            _ => return None,
        };
        let dir = cfg.get_hosts().iter().find_map(|h| match h {
            Host::Unix(p) => Some(p.clone()),
            Host::Tcp(_) => None,
        })?;
        Some(SocketAddr {
            engine: Engine::Postgres,
            socket_dir: dir,
            port: cfg.get_ports().first().copied().unwrap_or(5432),
            user: cfg.get_user()?.to_string(),
            dbname: cfg.get_dbname()?.to_string(),
        })
    }

    /// A private server's failure since it started: it died, or crashed and restarted (see
    /// [`Cluster::failure`]). `None` for a server by DSN: its log is not iogauge's to read.
    pub fn failure(&mut self) -> Option<String> {
        match &mut self.conn {
            Conn::Pg { cluster, .. } => cluster.as_deref_mut()?.failure(),
            Conn::Maria { server, .. } => server.as_mut()?.failure(),
        }
    }

    /// Stops a private server: a clean shutdown, part of the run; an immediate one when the
    /// run is `lost` already (the server crashed, a session failed), which does not wait
    /// for a crash recovery nor a checkpoint. A warning if it failed.
    pub fn stop(&mut self, lost: bool) -> Option<String> {
        let stopped = match &mut self.conn {
            Conn::Pg { cluster, .. } => {
                let mut c = cluster.take()?;
                if lost {
                    c.stop_now()
                } else {
                    c.stop()
                }
            }
            Conn::Maria { server, .. } => {
                let mut s = server.take()?;
                if lost {
                    s.stop_now()
                } else {
                    s.stop()
                }
            }
        };
        stopped.err().map(|e| format!("stopping the server: {e}"))
    }
}

/// A server ready to run on: the workload on its data set, its settings, and the storage
/// under a private cluster with its preflight.
pub struct Prepared {
    pub server: RunServer,
    pub workload: Workload,
    pub grid: Grid,
    /// `--cache-limit`, for the document.
    pub cache_limit: Option<u64>,
    pub settings: Vec<Setting>,
    pub data: DataSet,
    pub notes: Vec<String>,
    pub preflight: Option<Preflight>,
    /// The devices to sample: each target's device and the disks under it.
    pub devices: Vec<String>,
    pub disks: Vec<String>,
    /// `db run --disks`: the disks behind the data for the figures per disk (`None`: as
    /// many as `disks`).
    pub num_disks: Option<u32>,
    pub write_disks: Vec<String>,
}

impl Prepared {
    /// The server of `place` opened (see [`RunServer::prepare`]: `setup_first` makes a
    /// missing private cluster), `spec` put on the data set found there, on `grid`.
    pub fn new(
        place: &RunPlace<'_>,
        spec: &WorkloadSpec,
        grid: Grid,
        setup_first: impl FnOnce(&Path) -> Result<Cluster, PgError>,
    ) -> Result<Prepared, PgError> {
        let server = RunServer::prepare(place, setup_first)?;
        let (schemas, blocks) = server.data_set()?;
        let workload = spec.workload(schemas, blocks);
        let settings = server.settings()?;
        let (data, ram_note) = data_set(
            place.engine,
            schemas,
            blocks,
            &settings,
            iogauge_probe::ram_bytes()?,
            place.cache_limit.is_some(),
        );
        // Only a private cluster's storage is known: a server by DSN may be on another host.
        let targets = match &server.data_dir {
            Some(d) => preflight::targets(&server.placement()?, d, server.wal_dir().as_deref()),
            None => Vec::new(),
        };
        let direct = preflight::reads_direct(&settings);
        let preflight = (!targets.is_empty()).then(|| preflight::preflight(&targets, direct));
        let preflight::DbDevices {
            sampled: devices,
            disks,
            write_disks,
        } = preflight
            .as_ref()
            .map(preflight::devices)
            .unwrap_or_default();
        Ok(Prepared {
            server,
            workload,
            grid,
            cache_limit: place.cache_limit,
            settings,
            data,
            notes: ram_note.into_iter().collect(),
            preflight,
            devices,
            disks,
            num_disks: None,
            write_disks,
        })
    }

    /// What the live line and `watch` say the run is.
    pub fn what(&self) -> String {
        format!("{:?} on {}", self.workload.mode, self.server.location)
    }

    /// The sessions' run ([`driver::run_synced`]); `started` gets t0, where the caller's
    /// samplers start.
    pub fn run(
        &self,
        stop: Arc<AtomicBool>,
        started: impl FnOnce(Instant) + Send,
        sync: driver::Sync<'_>,
    ) -> Result<DbOutcome, PgError> {
        match &self.server.conn {
            Conn::Pg { cfg, .. } => {
                driver::run_synced(cfg, &self.workload, &self.grid, stop, started, sync)
            }
            Conn::Maria { target, redo, .. } => maria::run(
                target,
                redo.as_ref(),
                &self.workload,
                &self.grid,
                stop,
                started,
                sync,
            ),
        }
    }

    /// The run's document and histograms (the server still up: see `stop_server`).
    pub fn document(
        &mut self,
        outcome: &DbOutcome,
        samples: Vec<Snapshot>,
        sample_error: Option<String>,
    ) -> Result<(DbReport, Histograms), HistError> {
        let mut warnings = std::mem::take(&mut self.server.warnings);
        warnings.extend(
            self.preflight
                .iter()
                .flat_map(|p| p.warnings.iter().cloned()),
        );
        warnings.extend(self.notes.iter().cloned().chain(sample_error));
        db_document(outcome, self.context(samples), warnings)
    }

    /// Stops a private server (a clean shutdown is part of the run; an immediate one when
    /// the run is `lost`): what went wrong, if anything, as warnings for the document.
    pub fn stop_server(&mut self, lost: bool) -> Vec<String> {
        self.server.stop(lost).into_iter().collect()
    }

    /// The sessions never started (`e`): when a private server failed meanwhile, that
    /// failure is the error — the server's, with its log's lines since it started, exit 1 —
    /// rather than what a session saw of it (a refused connection reads as a wrong DSN), and
    /// the server is stopped at once.
    pub fn not_started(&mut self, e: PgError) -> PgError {
        let Some(why) = self.server.failure() else {
            return e;
        };
        let _ = self.server.stop(true);
        PgError::Server {
            server: self.server.location.clone(),
            why: format!("{why} (before the sessions started: {})", chain_text(&e)),
        }
    }

    /// A run a failure ended: the private server's own account of it, when it failed, goes
    /// with the error the document keeps (a session only sees its connection close).
    pub fn explain(&mut self, outcome: &mut DbOutcome) {
        if let Some(e) = outcome.error.as_mut() {
            if let Some(why) = self.server.failure() {
                e.push_str(&format!("; {why}"));
            }
        }
    }

    /// What the document is built on besides the outcome.
    pub fn context(&self, samples: Vec<Snapshot>) -> DbContext {
        DbContext {
            server: DbServer {
                engine: self.server.engine,
                private: self.server.is_private(),
                version: String::new(),
                location: self.server.location.clone(),
                cache_limit: self.cache_limit,
                settings: self.settings.clone(),
            },
            workload: self.workload.clone(),
            grid: self.grid,
            data_set: self.data.clone(),
            disks: self.disks.clone(),
            num_disks: self.num_disks,
            write_disks: self.write_disks.clone(),
            samples,
            preflight: self.preflight.clone(),
        }
    }
}
