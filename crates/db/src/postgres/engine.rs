//! PostgreSQL behind the seam ([`crate::engine`]): the `db` commands' steps on a private
//! cluster or a server by DSN ([`Postgres`]), and a server ready for a run ([`PgServer`]).

use crate::common::cgroup::drop_os_cache;
use crate::common::claim::ServerDir;
use crate::common::place::{check_dir, Place};
use crate::common::run::preflight;
use crate::common::run::server::{EngineServer, RunPlace, RunServer, ELSEWHERE};
use crate::common::workload::drive::Go;
use crate::engine::{
    setup_first, DbEngine, EngineWatch, RunRequest, Setup, SetupDone, SetupRequest, SetupUi,
};
use crate::error::{error_text, DbError};
use crate::postgres::dsn::{connect, describe, parse_dsn};
use crate::postgres::sample::watch::PgWatch;
use crate::postgres::schema;
use crate::postgres::server::cluster::Cluster;
use crate::postgres::server::place::{has_cluster, no_cluster, setup_finished};
use crate::postgres::server::settings;
use crate::postgres::server::setup::{check_places, load_dsn, setup_private, PrivateSetup};
use crate::postgres::workload::driver;
use iogauge_model::db::engine::Engine;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::Setting;
use iogauge_model::db::workload::Driver;
use iogauge_model::live::SocketAddr;
use iogauge_model::secret::redact_dsn;
use postgres::config::Host;
use postgres::Config;
use std::path::{Path, PathBuf};

/// PostgreSQL, as the `db` commands use it.
pub struct Postgres;

/// `--mysql-bin` given for PostgreSQL.
fn mysql_bin() -> DbError {
    DbError::Usage("--mysql-bin picks MariaDB's binaries: add --engine mariadb".into())
}

impl DbEngine for Postgres {
    fn kind(&self) -> Engine {
        Engine::Postgres
    }

    fn check_run(&self, r: &RunRequest) -> Result<Driver, DbError> {
        if r.mysql_bin {
            return Err(mysql_bin());
        }
        Ok(r.driver.unwrap_or(Driver::Server))
    }

    fn refuse(&self, r: &SetupRequest<'_>) -> Result<(), DbError> {
        match r.mysql_bin {
            Some(_) => Err(mysql_bin()),
            None => Ok(()),
        }
    }

    fn setup_private(&self, dir: &Path, s: Setup<'_>) -> Result<SetupDone, DbError> {
        let (r, ui) = (&s.req, s.ui);
        // Refused places are refused before the preflight speaks of them.
        check_places(dir, r.log_dir, r.targets)?;
        let spec = r.spec;
        let planned = preflight::planned(r.targets, spec.schemas, spec.blocks_per_schema << 13);
        let targets = preflight::targets(&planned, &dir.join("data"), r.log_dir);
        let direct = r
            .overrides
            .iter()
            .any(|(n, v)| preflight::direct_setting(n, v));
        // Before any I/O, as calibrate's: what the data set will sit on.
        (ui.preflight)(&preflight::preflight(&targets, direct));
        // A cluster whose setup was killed before it finished is removed, so setting up again
        // is the way out that `reset` and `run` name.
        if let Some(unfinished) = Cluster::unfinished(dir)? {
            (ui.note)(&format!(
                "{}: removing the cluster of a setup that did not finish (interrupted)",
                dir.display()
            ));
            unfinished.destroy()?;
        }
        let (cluster, report) = setup_private(
            &PrivateSetup {
                dir,
                wal_dir: r.log_dir,
                tablespaces: r.targets,
                overrides: r.overrides,
                spec,
                bin: r.pg_bin,
            },
            ui.stop,
            ui.progress,
        )?;
        Ok(SetupDone {
            report,
            settings: cluster.settings()?,
            location: dir.display().to_string(),
        })
    }

    fn setup_dsn(&self, dsn: &str, s: Setup<'_>) -> Result<SetupDone, DbError> {
        let (r, ui) = (&s.req, s.ui);
        if !r.overrides.is_empty() || r.log_dir.is_some() {
            return Err(DbError::Usage(
                "--pg-set and --wal-dir configure a private cluster; set them on your own server instead".into(),
            ));
        }
        let cfg = parse_dsn(dsn)?;
        let report = load_dsn(
            &cfg,
            &redact_dsn(dsn),
            r.spec,
            ui.stop,
            ui.progress,
            "setup",
        )?;
        let mut client = connect(&cfg)?;
        let settings = settings::settings(&mut client).map_err(|e| DbError::Server {
            server: describe(&cfg),
            why: error_text(&e),
        })?;
        Ok(SetupDone {
            report,
            settings,
            location: redact_dsn(dsn),
        })
    }

    fn reset(&self, place: &Place, s: Setup<'_>) -> Result<String, DbError> {
        let (r, ui) = (&s.req, s.ui);
        match place {
            Place::Private(dir) => {
                if !has_cluster(dir) {
                    return Err(no_cluster(dir));
                }
                let mut c = Cluster::open(dir)?;
                c.set_stop(ui.stop.clone());
                c.reset().map_err(|e| {
                    e.noting(|| format!("db reset stopped; {} is as it was before", dir.display()))
                })?;
                Ok(format!("{}: back to the data as loaded", dir.display()))
            }
            Place::Dsn(dsn) => {
                let cfg = parse_dsn(dsn)?;
                // No file-level copy of someone else's server: reload (same seed, same rows).
                let Some(spec) = schema::reload_spec(&cfg, r.spec.seed)? else {
                    return Err(DbError::Usage(format!(
                        "{}: no iogauge schemas to reset; run `iogauge db setup --dsn ...` first",
                        redact_dsn(dsn)
                    )));
                };
                load_dsn(&cfg, &redact_dsn(dsn), &spec, ui.stop, ui.progress, "reset")?;
                Ok(format!("{}: schemas reloaded", redact_dsn(dsn)))
            }
        }
    }

    fn drop_all(&self, place: &Place, _r: &SetupRequest<'_>) -> Result<String, DbError> {
        match place {
            Place::Private(dir) => {
                if !has_cluster(dir) {
                    return Err(no_cluster(dir));
                }
                Cluster::open(dir)?
                    .destroy()
                    .map_err(|e| DbError::Context {
                        what: format!("dropping the cluster in {}", dir.display()),
                        source: Box::new(e),
                    })?;
                Ok(format!("{}: cluster removed", dir.display()))
            }
            Place::Dsn(dsn) => {
                let cfg = parse_dsn(dsn)?;
                schema::drop_all(&cfg, &mut connect(&cfg)?)?;
                Ok(format!("{}: iogauge schemas dropped", redact_dsn(dsn)))
            }
        }
    }

    fn watch(&self, addr: &SocketAddr) -> Result<Box<dyn EngineWatch>, DbError> {
        Ok(Box::new(PgWatch::connect(addr)?))
    }

    fn open_for_run(&self, p: &RunPlace<'_>, ui: &SetupUi<'_>) -> Result<RunServer, DbError> {
        match p.place {
            Place::Private(dir) => private(dir, p, ui),
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
                let location = describe(&cfg);
                Ok(RunServer::new(
                    Engine::Postgres,
                    Box::new(PgServer {
                        cfg,
                        cluster: None,
                        location: location.clone(),
                    }),
                    location,
                    None,
                    vec![ELSEWHERE.into()],
                ))
            }
        }
    }
}

/// A private cluster opened for a run (set up first where there is none), reconfigured for
/// the run's `--pg-set`, put in a memory cgroup for `--cache-limit`, started.
fn private(dir: &Path, p: &RunPlace<'_>, ui: &SetupUi<'_>) -> Result<RunServer, DbError> {
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
        setup_first(&Postgres, dir, p, ui)?;
        Cluster::open(dir)?
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
    let location = dir.display().to_string();
    let data_dir = c.data_dir();
    Ok(RunServer::new(
        Engine::Postgres,
        Box::new(PgServer {
            cfg: c.config(),
            cluster: Some(Box::new(c)),
            location: location.clone(),
        }),
        location,
        Some(data_dir),
        Vec::new(),
    ))
}

/// A PostgreSQL ready for a run: where to connect, and the private cluster (dropping it
/// stops the server).
struct PgServer {
    cfg: Config,
    cluster: Option<Box<Cluster>>,
    location: String,
}

impl EngineServer for PgServer {
    fn is_private(&self) -> bool {
        self.cluster.is_some()
    }

    fn data_set(&self) -> Result<Option<(u32, u64)>, DbError> {
        schema::discover(&self.cfg)
    }

    fn placement(&self) -> Result<Vec<(Option<PathBuf>, u64)>, DbError> {
        schema::placement(&self.cfg)
    }

    fn log_dir(&self) -> Option<PathBuf> {
        self.cluster.as_ref()?.wal_dir().map(Path::to_path_buf)
    }

    fn settings(&self) -> Result<Vec<Setting>, DbError> {
        match &self.cluster {
            Some(c) => c.settings(),
            None => {
                let mut client = connect(&self.cfg)?;
                settings::settings(&mut client).map_err(|e| DbError::Server {
                    server: self.location.clone(),
                    why: error_text(&e),
                })
            }
        }
    }

    fn socket(&self) -> Option<SocketAddr> {
        self.cluster.as_ref()?;
        let cfg = &self.cfg;
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

    fn failure(&mut self) -> Option<String> {
        self.cluster.as_deref_mut()?.failure()
    }

    fn run(&self, go: Go<'_, '_>) -> Result<DbOutcome, DbError> {
        driver::run_synced(&self.cfg, go)
    }

    fn stop(&mut self, lost: bool) -> Option<Result<(), DbError>> {
        let mut c = self.cluster.take()?;
        Some(if lost { c.stop_now() } else { c.stop() })
    }
}
