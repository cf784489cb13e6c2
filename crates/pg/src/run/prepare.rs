//! The server of a `db run`: a private cluster opened (set up on first use, reconfigured,
//! put in a memory cgroup, started) or an existing server by DSN; what iogauge loaded on it;
//! and its shutdown at the end, which is part of the run.

use crate::dsn::{connect, parse_dsn};
use crate::error::{error_text, PgError};
use crate::schema;
use crate::server::bin::PgBin;
use crate::server::cgroup::drop_os_cache;
use crate::server::cluster::Cluster;
use crate::server::place::{check_dir, has_cluster, setup_finished, Place};
use iogauge_model::db::report::Setting;
use iogauge_model::live::SocketAddr;
use iogauge_model::secret::redact_dsn;
use postgres::config::Host;
use postgres::Config;
use std::path::{Path, PathBuf};

/// What `db run` asked of the server.
pub struct RunPlace<'a> {
    pub place: &'a Place,
    /// `--pg-set` (a private cluster only).
    pub overrides: &'a [(String, String)],
    /// `--cache-limit` (a private cluster only).
    pub cache_limit: Option<u64>,
    /// `--pg-bin` (a private cluster only): the PostgreSQL a new cluster is made with; an
    /// existing cluster must have been made with it.
    pub pg_bin: Option<&'a PgBin>,
}

/// A server ready for a run.
pub struct RunServer {
    pub cfg: Config,
    /// The cluster directory, or the DSN without its password.
    pub location: String,
    /// A private cluster's data directory: where its I/O lands.
    pub data_dir: Option<PathBuf>,
    /// Notes for the result (an existing server's devices are not sampled).
    pub warnings: Vec<String>,
    /// The private cluster; dropping it stops the server.
    cluster: Option<Cluster>,
}

impl RunServer {
    /// Opens the server of `p`. A private directory without a cluster gets one from `setup`
    /// (the caller's, with its own progress display); a directory iogauge did not create is
    /// refused.
    pub fn prepare(
        p: &RunPlace<'_>,
        setup: impl FnOnce(&Path) -> Result<Cluster, PgError>,
    ) -> Result<RunServer, PgError> {
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
                    cfg: parse_dsn(dsn)?,
                    location: redact_dsn(dsn),
                    data_dir: None,
                    warnings: vec![
                        "an existing server: device figures are not sampled (the server may be elsewhere)"
                            .into(),
                    ],
                    cluster: None,
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
            cfg: c.config(),
            location: dir.display().to_string(),
            data_dir: Some(c.data_dir()),
            warnings: Vec::new(),
            cluster: Some(c),
        })
    }

    /// A private cluster iogauge started (else an existing server).
    pub fn is_private(&self) -> bool {
        self.cluster.is_some()
    }

    /// The schemas iogauge loaded: (schemas, blocks per schema).
    pub fn data_set(&self) -> Result<(u32, u64), PgError> {
        schema::discover(&self.cfg)?.ok_or_else(|| {
            PgError::Usage(format!(
                "{}: no iogauge schemas loaded; run `iogauge db setup` first",
                self.location
            ))
        })
    }

    /// Where the data set lives, as [`schema::placement`] says.
    pub fn placement(&self) -> Result<Vec<(Option<PathBuf>, u64)>, PgError> {
        schema::placement(&self.cfg)
    }

    /// A private cluster's separate WAL directory (`db setup --wal-dir`).
    pub fn wal_dir(&self) -> Option<PathBuf> {
        self.cluster.as_ref()?.wal_dir().map(Path::to_path_buf)
    }

    /// The settings in force.
    pub fn settings(&self) -> Result<Vec<Setting>, PgError> {
        match &self.cluster {
            Some(c) => c.settings(),
            None => {
                let mut client = connect(&self.cfg)?;
                crate::server::settings::settings(&mut client).map_err(|e| PgError::Server {
                    server: self.location.clone(),
                    why: error_text(&e),
                })
            }
        }
    }

    /// Where `iogauge watch` can reach a private server: its unix socket, no password.
    pub fn socket(&self) -> Option<SocketAddr> {
        self.cluster.as_ref()?;
        let dir = self.cfg.get_hosts().iter().find_map(|h| match h {
            Host::Unix(p) => Some(p.clone()),
            Host::Tcp(_) => None,
        })?;
        Some(SocketAddr {
            socket_dir: dir,
            port: self.cfg.get_ports().first().copied().unwrap_or(5432),
            user: self.cfg.get_user()?.to_string(),
            dbname: self.cfg.get_dbname()?.to_string(),
        })
    }

    /// A private server's failure since it started: it died, or crashed and restarted (see
    /// [`Cluster::failure`]). `None` for a server by DSN: its log is not iogauge's to read.
    pub fn failure(&mut self) -> Option<String> {
        self.cluster.as_mut()?.failure()
    }

    /// Stops a private server: a clean shutdown, part of the run; an immediate one when the
    /// run is `lost` already (the server crashed, a session failed), which does not wait
    /// for a crash recovery nor a checkpoint. A warning if it failed.
    pub fn stop(&mut self, lost: bool) -> Option<String> {
        let mut c = self.cluster.take()?;
        let stopped = if lost { c.stop_now() } else { c.stop() };
        stopped.err().map(|e| format!("stopping the server: {e}"))
    }
}
