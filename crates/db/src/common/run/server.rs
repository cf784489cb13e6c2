//! The server of a `db run`, of either engine: a private PostgreSQL cluster opened (set up on
//! first use, reconfigured, put in a memory cgroup, started) or one by DSN, or a private
//! MariaDB started (with the probe on its redo log) or one by `--dsn mysql://…`; what
//! iogauge loaded on it, its settings, its socket for `watch`, a failure explained by its own
//! log, and its shutdown at the end, which is part of the run. The engine's own part is
//! [`Conn`]: everything above this module sees one `RunServer`.

use crate::common::cgroup::drop_os_cache;
use crate::common::place::{check_dir, has_cluster, setup_finished, Place};
use crate::error::{error_text, DbError};
use crate::mariadb::{self, MariaBin, MariaServer, MariaTarget};
use crate::postgres::dsn::{connect, describe, parse_dsn};
use crate::postgres::schema;
use crate::postgres::server::bin::PgBin;
use crate::postgres::server::cluster::Cluster;
use crate::postgres::workload::driver;
use iogauge_model::db::engine::Engine;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::Setting;
use iogauge_model::db::workload::{Grid, Workload};
use iogauge_model::live::SocketAddr;
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
        setup: impl FnOnce(&Path) -> Result<Cluster, DbError>,
    ) -> Result<RunServer, DbError> {
        if p.engine == Engine::Mariadb {
            return Self::maria(p);
        }
        match p.place {
            Place::Private(dir) => Self::private(dir, p, setup),
            Place::Dsn(dsn) => {
                if p.pg_bin.is_some() {
                    return Err(DbError::Usage(
                        "--pg-bin picks the PostgreSQL of a private cluster (--dir); a --dsn server runs its own"
                            .into(),
                    ));
                }
                if !p.overrides.is_empty() {
                    return Err(DbError::Usage(
                        "--pg-set configures a private cluster; set it on your own server instead"
                            .into(),
                    ));
                }
                // Named by what was parsed, never by the text given (see `describe`).
                let cfg = parse_dsn(dsn)?;
                Ok(RunServer {
                    engine: Engine::Postgres,
                    location: describe(&cfg),
                    conn: Conn::Pg { cfg, cluster: None },
                    data_dir: None,
                    warnings: vec![ELSEWHERE.into()],
                })
            }
        }
    }

    fn private(
        dir: &Path,
        p: &RunPlace<'_>,
        setup: impl FnOnce(&Path) -> Result<Cluster, DbError>,
    ) -> Result<RunServer, DbError> {
        let mut c = if has_cluster(dir) {
            // Opened first: a cluster another user could have changed is refused as that,
            // before anything about it is believed.
            let c = Cluster::open(dir)?;
            if !setup_finished(dir) {
                return Err(DbError::Usage(format!(
                    "--dir {}: the setup of this cluster did not finish (it was interrupted); run `iogauge db setup --dir {}` again",
                    dir.display(),
                    dir.display()
                )));
            }
            // Compared where they really are: another spelling of the same directory (a
            // link, `..`) names the same PostgreSQL.
            let real = |d: &Path| d.canonicalize().unwrap_or_else(|_| d.to_path_buf());
            if let Some(want) = p.pg_bin.filter(|b| real(&b.dir) != real(&c.bin().dir)) {
                return Err(DbError::Usage(format!(
                    "--pg-bin {}: the cluster in {} was made with PostgreSQL {} at {}; omit --pg-bin, or `iogauge db drop --dir {}` and set it up again",
                    want.dir.display(),
                    dir.display(),
                    c.bin().major,
                    c.bin().dir.display(),
                    dir.display()
                )));
            }
            c
        } else if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
            return Err(DbError::Usage(format!(
                "--dir {}: not empty and not created by iogauge; refusing to use it (choose an empty or new directory)",
                dir.display()
            )));
        } else {
            check_dir("--dir", dir)?;
            let mut c = setup(dir)?;
            c.stop()?;
            c
        };
        // This run's only: gone when it ends (`configure_run`).
        if !p.overrides.is_empty() {
            c.configure_run(p.overrides)?;
        }
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
    fn maria(p: &RunPlace<'_>) -> Result<RunServer, DbError> {
        if !p.overrides.is_empty() {
            return Err(DbError::Usage(
                "--pg-set configures PostgreSQL; MariaDB runs with iogauge's settings".into(),
            ));
        }
        match p.place {
            Place::Dsn(dsn) => {
                if p.maria_bin.is_some() {
                    return Err(DbError::Usage(
                        "--mysql-bin picks the MariaDB of a private server (--dir); a --dsn server runs its own".into(),
                    ));
                }
                let target = MariaTarget::dsn(dsn)?;
                Ok(RunServer {
                    engine: Engine::Mariadb,
                    location: target.name.clone(),
                    conn: Conn::Maria {
                        target,
                        server: None,
                        redo: None,
                    },
                    data_dir: None,
                    warnings: vec![ELSEWHERE.into()],
                })
            }
            Place::Private(dir) => {
                let mut s = MariaServer::open(dir, MariaBin::find(p.maria_bin)?)?;
                if !s.finished() {
                    return Err(DbError::Usage(format!(
                        "--dir {}: no finished MariaDB setup here; run `iogauge db setup --engine mariadb --dir {}` first",
                        dir.display(),
                        dir.display()
                    )));
                }
                if p.cache_limit.is_some() {
                    drop_os_cache()?;
                }
                s.start(p.cache_limit, &AtomicBool::new(false))?;
                let (redo, warnings) = match mariadb::redo_probe(&s) {
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
    pub fn data_set(&self) -> Result<(u32, u64), DbError> {
        let found = match &self.conn {
            Conn::Pg { cfg, .. } => schema::discover(cfg)?,
            Conn::Maria { target, .. } => mariadb::schema::discover(target)?,
        };
        found.ok_or_else(|| {
            DbError::Usage(format!(
                "{}: no iogauge schemas loaded; run `iogauge db setup` first",
                self.location
            ))
        })
    }

    /// Where the data set lives, as [`schema::placement`] says.
    pub fn placement(&self) -> Result<Vec<(Option<PathBuf>, u64)>, DbError> {
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
    pub fn settings(&self) -> Result<Vec<Setting>, DbError> {
        let cfg = match &self.conn {
            Conn::Maria { target, .. } => return mariadb::settings(target),
            Conn::Pg { cfg, .. } => cfg,
        };
        match self.cluster() {
            Some(c) => c.settings(),
            None => {
                let mut client = connect(cfg)?;
                crate::postgres::server::settings::settings(&mut client).map_err(|e| {
                    DbError::Server {
                        server: self.location.clone(),
                        why: error_text(&e),
                    }
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
                    user: mariadb::os_user(),
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

    /// The sessions' run on this server, by its engine's driver ([`driver::run_synced`] or
    /// MariaDB's); `started` gets t0.
    pub fn run(
        &self,
        wl: &Workload,
        grid: &Grid,
        stop: Arc<AtomicBool>,
        started: impl FnOnce(Instant) + Send,
        sync: driver::Sync<'_>,
    ) -> Result<DbOutcome, DbError> {
        match &self.conn {
            Conn::Pg { cfg, .. } => driver::run_synced(cfg, wl, grid, stop, started, sync),
            Conn::Maria { target, redo, .. } => {
                mariadb::run(target, redo.as_ref(), wl, grid, stop, started, sync)
            }
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
