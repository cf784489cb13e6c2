//! MariaDB behind the seam ([`crate::engine`]): the `db` commands' steps on a private server
//! or a server by `--dsn mysql://…` ([`MariaDb`]), and a server ready for a run
//! ([`MariaRunServer`]). `reset` reloads the tables (same rows, same places); a file-level
//! copy as PostgreSQL's does not exist for MariaDB yet.

use super::watch::MariaWatch;
use super::{
    redo_probe, schema, settings, setup_private, MariaBin, MariaServer, MariaTarget,
    MIN_CACHE_LIMIT,
};
use crate::common::cgroup::drop_os_cache;
use crate::common::place::{check_dir, Place};
use crate::common::run::preflight;
use crate::common::run::server::{EngineServer, RunPlace, RunServer, ELSEWHERE};
use crate::common::schema::SchemaSpec;
use crate::common::workload::drive::Go;
use crate::engine::{
    setup_first, DbEngine, EngineWatch, RunRequest, Setup, SetupDone, SetupRequest, SetupUi,
};
use crate::error::DbError;
use iogauge_model::db::engine::Engine;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::Setting;
use iogauge_model::db::setup::LoadReport;
use iogauge_model::db::workload::Driver;
use iogauge_model::live::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// MariaDB (InnoDB; also MySQL by DSN), as the `db` commands use it.
pub struct MariaDb;

/// `--scale` counts 8 KiB blocks; a MariaDB row fills a 16 KiB page, so half as many rows
/// make the same bytes.
fn rows(spec: &SchemaSpec) -> SchemaSpec {
    let mut spec = spec.clone();
    spec.blocks_per_schema = spec.blocks_per_schema.div_ceil(2);
    spec
}

fn load(t: &MariaTarget, spec: &SchemaSpec, ui: &SetupUi<'_>) -> Result<LoadReport, DbError> {
    schema::setup(t, spec, ui)
}

/// The private server iogauge made in `dir`, opened (so checked by the trust rule and locked
/// for this process); `None` when there is none.
fn existing(dir: &Path, bin: &MariaBin) -> Result<Option<MariaServer>, DbError> {
    if !super::has_server(dir) {
        return Ok(None);
    }
    Ok(Some(MariaServer::open(dir, bin.clone())?))
}

/// A directory for a new server: an unfinished one of iogauge's (opened, so checked and
/// locked) removed, else empty or new.
fn replace_or_check(
    dir: &Path,
    unfinished: Option<MariaServer>,
    ui: &SetupUi<'_>,
) -> Result<(), DbError> {
    if let Some(s) = unfinished {
        (ui.note)(&format!(
            "{}: removing the MariaDB of a setup that did not finish (interrupted)",
            dir.display()
        ));
        s.destroy()?;
    } else if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
        return Err(DbError::Usage(format!(
            "--dir {}: not empty and not created by iogauge; refusing to use it (choose an empty or new directory)",
            dir.display()
        )));
    }
    check_dir("--dir", dir)
}

/// The private server in `dir`, which must be iogauge's.
fn open(dir: &Path, r: &SetupRequest<'_>) -> Result<MariaServer, DbError> {
    if !super::has_server(dir) {
        return Err(DbError::Usage(format!(
            "--dir {}: no MariaDB made by iogauge here; run `iogauge db setup --engine mariadb --dir {}` first",
            dir.display(),
            dir.display()
        )));
    }
    MariaServer::open(dir, MariaBin::find(r.mysql_bin)?)
}

impl DbEngine for MariaDb {
    fn kind(&self) -> Engine {
        Engine::Mariadb
    }

    fn check_run(&self, r: &RunRequest) -> Result<Driver, DbError> {
        if r.direct_io {
            return Err(DbError::Usage(
                "--direct-io sets PostgreSQL's debug_io_direct; MariaDB reads with O_DIRECT already (innodb_flush_method)".into(),
            ));
        }
        if let Some(l) = r.cache_limit.filter(|&l| l < MIN_CACHE_LIMIT) {
            return Err(DbError::Usage(format!(
                "--cache-limit {} MiB is too small for MariaDB (its own memory, before any page cache, is about 100 MiB): give {}M or more",
                l >> 20,
                MIN_CACHE_LIMIT >> 20
            )));
        }
        match r.driver {
            Some(Driver::Server) => Err(DbError::Usage(
                "--driver server runs a PL/pgSQL procedure (PostgreSQL); with --engine mariadb use --driver client, the default".into(),
            )),
            d => Ok(d.unwrap_or(Driver::Client)),
        }
    }

    fn refuse(&self, r: &SetupRequest<'_>) -> Result<(), DbError> {
        let given = [
            ("--direct-io", r.direct_io),
            ("--pg-set", !r.overrides.is_empty()),
            ("--wal-dir", r.log_dir.is_some()),
            ("--target", !r.targets.is_empty()),
            ("--pg-bin", r.pg_bin.is_some()),
        ];
        match given.iter().find(|(_, on)| *on) {
            Some((flag, _)) => Err(DbError::Usage(format!(
                "{flag} configures a PostgreSQL cluster; with --engine mariadb leave it out (MariaDB reads with O_DIRECT by default)"
            ))),
            None => Ok(()),
        }
    }

    fn setup_private(&self, dir: &Path, s: Setup<'_>) -> Result<SetupDone, DbError> {
        let (r, ui) = (&s.req, s.ui);
        let spec = rows(r.spec);
        let bytes = spec.blocks_per_schema * Engine::Mariadb.page_bytes();
        let planned = preflight::planned(&[], spec.schemas, bytes);
        let targets = preflight::targets(&planned, &dir.join("data"), None);
        (ui.preflight)(&preflight::preflight(&targets, true));
        let bin = MariaBin::find(r.mysql_bin)?;
        let (report, settings) = match existing(dir, &bin)? {
            Some(mut server) if server.finished() => {
                server.start(None, ui.stop)?;
                let r = load(&server.target(), &spec, ui)?;
                let settings = settings(&server.target())?;
                server.stop()?;
                (r, settings)
            }
            unfinished => {
                replace_or_check(dir, unfinished, ui)?;
                let (_, report, settings) = setup_private(dir, bin, &spec, ui)?;
                (report, settings)
            }
        };
        Ok(SetupDone {
            report,
            settings,
            location: dir.display().to_string(),
        })
    }

    fn setup_dsn(&self, dsn: &str, s: Setup<'_>) -> Result<SetupDone, DbError> {
        let (r, ui) = (&s.req, s.ui);
        let t = MariaTarget::dsn(dsn)?;
        let report = load(&t, &rows(r.spec), ui)?;
        Ok(SetupDone {
            report,
            settings: settings(&t)?,
            location: t.name,
        })
    }

    fn reset(&self, place: &Place, s: Setup<'_>) -> Result<String, DbError> {
        let (r, ui) = (&s.req, s.ui);
        let reload = |t: &MariaTarget| -> Result<(), DbError> {
            let Some((schemas, rows)) = schema::discover(t)? else {
                return Err(DbError::Usage(format!(
                    "{}: no iogauge schemas to reset; run `iogauge db setup --engine mariadb` first",
                    t.name
                )));
            };
            let spec = SchemaSpec {
                schemas,
                blocks_per_schema: rows,
                load_parallel: schemas.min(4),
                seed: r.spec.seed,
                tablespaces: Vec::new(),
            };
            load(t, &spec, ui).map(|_| ())
        };
        let shown = match place {
            Place::Private(dir) => {
                let mut s = open(dir, r)?;
                s.start(None, ui.stop)?;
                reload(&s.target())?;
                s.stop()?;
                dir.display().to_string()
            }
            Place::Dsn(dsn) => {
                let t = MariaTarget::dsn(dsn)?;
                reload(&t)?;
                t.name
            }
        };
        Ok(format!("{shown}: schemas reloaded"))
    }

    fn drop_all(&self, place: &Place, r: &SetupRequest<'_>) -> Result<String, DbError> {
        match place {
            Place::Private(dir) => {
                open(dir, r)?.destroy()?;
                Ok(format!("{}: MariaDB removed", dir.display()))
            }
            Place::Dsn(dsn) => {
                let t = MariaTarget::dsn(dsn)?;
                schema::drop_all(&t, &mut t.connect()?)?;
                Ok(format!("{}: iogauge schemas dropped", t.name))
            }
        }
    }

    fn watch(&self, addr: &SocketAddr) -> Result<Box<dyn EngineWatch>, DbError> {
        Ok(Box::new(MariaWatch::connect(
            &addr.socket_dir.join("mysqld.sock"),
        )?))
    }

    fn open_for_run(&self, p: &RunPlace<'_>, ui: &SetupUi<'_>) -> Result<RunServer, DbError> {
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
                let location = target.name.clone();
                Ok(RunServer::new(
                    Engine::Mariadb,
                    Box::new(MariaRunServer {
                        target,
                        server: None,
                        redo: None,
                    }),
                    location,
                    None,
                    vec![ELSEWHERE.into()],
                ))
            }
            Place::Private(dir) => private(dir, p, ui),
        }
    }
}

/// A private server opened for a run (a missing or unfinished one set up first), started in
/// a memory cgroup for `--cache-limit`, with the probe on its redo log.
fn private(dir: &Path, p: &RunPlace<'_>, ui: &SetupUi<'_>) -> Result<RunServer, DbError> {
    let bin = MariaBin::find(p.maria_bin)?;
    let found = existing(dir, &bin)?;
    let mut s = match found {
        Some(s) if s.finished() => s,
        found => {
            replace_or_check(dir, found, ui)?;
            setup_first(&MariaDb, dir, p, ui)?;
            MariaServer::open(dir, bin)?
        }
    };
    if p.cache_limit.is_some() {
        drop_os_cache()?;
    }
    s.start(p.cache_limit, &AtomicBool::new(false))?;
    let (redo, warnings) = match redo_probe(&s) {
        Ok(probe) => (Some(probe), Vec::new()),
        Err(why) => (None, vec![why]),
    };
    let data_dir = s.data_dir();
    Ok(RunServer::new(
        Engine::Mariadb,
        Box::new(MariaRunServer {
            target: s.target(),
            server: Some(s),
            redo,
        }),
        dir.display().to_string(),
        Some(data_dir),
        warnings,
    ))
}

/// A MariaDB ready for a run: where to connect, the private server (dropping it stops it),
/// and the probe on its redo log's writes and syncs (a private server, as root).
pub(crate) struct MariaRunServer {
    target: MariaTarget,
    server: Option<MariaServer>,
    redo: Option<iogauge_trace::FileProbe>,
}

impl EngineServer for MariaRunServer {
    fn is_private(&self) -> bool {
        self.server.is_some()
    }

    fn data_set(&self) -> Result<Option<(u32, u64)>, DbError> {
        schema::discover(&self.target)
    }

    fn placement(&self) -> Result<Vec<(Option<PathBuf>, u64)>, DbError> {
        // One tablespace: the data directory (bytes: weighed by the preflight's sizes).
        Ok(vec![(None, 0)])
    }

    fn settings(&self) -> Result<Vec<Setting>, DbError> {
        settings(&self.target)
    }

    fn read_path_notes(&self, settings: &[Setting]) -> Vec<String> {
        super::read_path_notes(settings)
    }

    fn socket(&self) -> Option<SocketAddr> {
        let s = self.server.as_ref()?;
        Some(SocketAddr {
            engine: Engine::Mariadb,
            socket_dir: s.socket().parent()?.to_path_buf(),
            port: 0,
            user: super::os_user(),
            dbname: String::new(),
        })
    }

    fn failure(&mut self) -> Option<String> {
        self.server.as_mut()?.failure()
    }

    fn run(&self, go: Go<'_, '_>) -> Result<DbOutcome, DbError> {
        super::sessions::run(&self.target, self.redo.as_ref(), go)
    }

    fn stop(&mut self, lost: bool) -> Option<Result<(), DbError>> {
        let mut s = self.server.take()?;
        Some(if lost { s.stop_now() } else { s.stop() })
    }
}
