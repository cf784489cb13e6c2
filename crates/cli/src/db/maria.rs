//! `iogauge db setup|reset|drop --engine mariadb`: the SLOB data set on a private MariaDB
//! made on the storage under test, or on the user's server by `--dsn mysql://…`.
//!
//! `reset` reloads the tables (same rows, same places); a file-level copy as PostgreSQL's
//! does not exist for MariaDB yet.

use super::args::{SetupArgs, WhereArgs, DEFAULT_SEED};
use super::setup::progress_bar;
use crate::usage::UsageError;
use iogauge_db::mariadb::{self, schema, MariaBin, MariaServer, MariaTarget};
use iogauge_db::{check_dir, preflight, Place, SchemaSpec};
use iogauge_model::db::engine::Engine;
use iogauge_model::db::setup::LoadReport;
use iogauge_session::stop_flag;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// `--scale` counts 8 KiB blocks; a MariaDB row fills a 16 KiB page, so half as many rows
/// make the same bytes.
fn spec(s: &SetupArgs) -> SchemaSpec {
    let mut spec = s.spec();
    spec.blocks_per_schema = spec.blocks_per_schema.div_ceil(2);
    spec
}

/// What a PostgreSQL-only flag says with --engine mariadb.
fn postgres_only(s: &SetupArgs) -> Result<(), UsageError> {
    let given = [
        ("--pg-set", !s.pg_set.is_empty()),
        ("--direct-io", s.direct_io),
        ("--wal-dir", s.wal_dir.is_some()),
        ("--target", !s.target.is_empty()),
        ("--pg-bin", s.pg_bin.is_some()),
    ];
    match given.iter().find(|(_, on)| *on) {
        Some((flag, _)) => Err(UsageError(format!(
            "{flag} configures a PostgreSQL cluster; with --engine mariadb leave it out (MariaDB reads with O_DIRECT by default)"
        ))),
        None => Ok(()),
    }
}

fn load(
    t: &MariaTarget,
    spec: &SchemaSpec,
    stop: &AtomicBool,
) -> Result<LoadReport, iogauge_db::DbError> {
    let bar = progress_bar(u64::from(spec.schemas) * spec.blocks_per_schema);
    let r = schema::setup(t, spec, stop, &|done, _| bar.set_position(done));
    bar.finish_and_clear();
    r
}

pub fn setup(s: SetupArgs) -> anyhow::Result<ExitCode> {
    s.validate()?;
    postgres_only(&s)?;
    let spec = spec(&s);
    let stop = stop_flag()?;
    let (report, settings, location) = match s.place.place(Engine::Mariadb) {
        Place::Private(dir) => {
            let bytes = spec.blocks_per_schema * Engine::Mariadb.page_bytes();
            let planned = preflight::planned(&[], spec.schemas, bytes);
            let targets = preflight::targets(&planned, &dir.join("data"), None);
            print!(
                "preflight:\n{}",
                iogauge_report::preflight_text(&preflight::preflight(&targets, true))
            );
            let bin = MariaBin::find(s.place.mysql_bin.as_deref())?;
            let (report, settings) = match existing(&dir, &bin)? {
                Some(mut server) if server.finished() => {
                    server.start(None, &stop)?;
                    let r = load(&server.target(), &spec, &stop)?;
                    let settings = mariadb::settings(&server.target())?;
                    server.stop()?;
                    (r, settings)
                }
                unfinished => {
                    replace_or_check(&dir, unfinished)?;
                    let bar = progress_bar(u64::from(spec.schemas) * spec.blocks_per_schema);
                    let made = mariadb::setup_private(&dir, bin, &spec, &stop, &|d, _| {
                        bar.set_position(d)
                    });
                    bar.finish_and_clear();
                    let (_, report, settings) = made?;
                    (report, settings)
                }
            };
            (report, settings, dir.display().to_string())
        }
        Place::Dsn(dsn) => {
            let t = MariaTarget::dsn(&dsn)?;
            let r = load(&t, &spec, &stop)?;
            (r, mariadb::settings(&t)?, t.name)
        }
    };
    let ram = iogauge_probe::ram_bytes()?;
    print!(
        "{}",
        iogauge_report::db_setup_text(&report, &settings, &location, ram)
    );
    Ok(ExitCode::SUCCESS)
}

/// The server iogauge made in `dir`, if any: opened, so checked by the trust rule and
/// locked for this process.
fn existing(dir: &Path, bin: &MariaBin) -> anyhow::Result<Option<MariaServer>> {
    if !mariadb::has_server(dir) {
        return Ok(None);
    }
    Ok(Some(MariaServer::open(dir, bin.clone())?))
}

/// A directory for a new server: an unfinished one of iogauge's (opened, so checked and
/// locked) removed, else empty or new.
fn replace_or_check(dir: &Path, unfinished: Option<MariaServer>) -> anyhow::Result<()> {
    if let Some(s) = unfinished {
        eprintln!(
            "{}: removing the MariaDB of a setup that did not finish (interrupted)",
            dir.display()
        );
        s.destroy()?;
    } else if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
        return Err(UsageError(format!(
            "--dir {}: not empty and not created by iogauge; refusing to use it (choose an empty or new directory)",
            dir.display()
        ))
        .into());
    }
    check_dir("--dir", dir)?;
    Ok(())
}

/// `db run --engine mariadb` on a directory without a server: iogauge's default data set.
pub fn setup_first(dir: &Path, mysql_bin: Option<&Path>) -> anyhow::Result<()> {
    let bin = MariaBin::find(mysql_bin)?;
    let found = existing(dir, &bin)?;
    if found.as_ref().is_some_and(MariaServer::finished) {
        return Ok(());
    }
    replace_or_check(dir, found)?;
    eprintln!(
        "no MariaDB in {}: setting one up (4 schemas of 64 MiB; `iogauge db setup --engine mariadb` chooses)",
        dir.display()
    );
    let s = SetupArgs::defaults(
        WhereArgs {
            dir: Some(dir.to_path_buf()),
            dsn: None,
            engine: Some(Engine::Mariadb),
            mysql_bin: None,
        },
        Vec::new(),
    );
    let spec = spec(&s);
    let bar = progress_bar(u64::from(spec.schemas) * spec.blocks_per_schema);
    let made = mariadb::setup_private(dir, bin, &spec, &*stop_flag()?, &|d, _| bar.set_position(d));
    bar.finish_and_clear();
    made?;
    Ok(())
}

pub fn reset(w: WhereArgs) -> anyhow::Result<ExitCode> {
    let stop = stop_flag()?;
    let reload = |t: &MariaTarget| -> anyhow::Result<()> {
        let Some((schemas, rows)) = schema::discover(t)? else {
            return Err(UsageError(format!(
                "{}: no iogauge schemas to reset; run `iogauge db setup --engine mariadb` first",
                t.name
            ))
            .into());
        };
        let spec = SchemaSpec {
            schemas,
            blocks_per_schema: rows,
            load_parallel: schemas.min(4),
            seed: DEFAULT_SEED,
            tablespaces: Vec::new(),
        };
        load(t, &spec, &stop)?;
        Ok(())
    };
    let shown = match w.place(Engine::Mariadb) {
        Place::Private(dir) => {
            let mut s = open(&dir, &w)?;
            s.start(None, &stop)?;
            reload(&s.target())?;
            s.stop()?;
            dir.display().to_string()
        }
        Place::Dsn(dsn) => {
            let t = MariaTarget::dsn(&dsn)?;
            reload(&t)?;
            t.name
        }
    };
    eprintln!("{shown}: schemas reloaded");
    Ok(ExitCode::SUCCESS)
}

fn open(dir: &Path, w: &WhereArgs) -> anyhow::Result<MariaServer> {
    if !mariadb::has_server(dir) {
        return Err(UsageError(format!(
            "--dir {}: no MariaDB made by iogauge here; run `iogauge db setup --engine mariadb --dir {}` first",
            dir.display(),
            dir.display()
        ))
        .into());
    }
    Ok(MariaServer::open(
        dir,
        MariaBin::find(w.mysql_bin.as_deref())?,
    )?)
}

pub fn drop_all(w: WhereArgs) -> anyhow::Result<ExitCode> {
    // Registered so Ctrl-C cannot kill the process half-way through the removal.
    let stop = stop_flag()?;
    let what = match w.place(Engine::Mariadb) {
        Place::Private(dir) => {
            open(&dir, &w)?.destroy()?;
            format!("{}: MariaDB removed", dir.display())
        }
        Place::Dsn(dsn) => {
            let t = MariaTarget::dsn(&dsn)?;
            schema::drop_all(&t, &mut t.connect()?)?;
            format!("{}: iogauge schemas dropped", t.name)
        }
    };
    if stop.load(Ordering::Relaxed) {
        eprintln!("error: db drop interrupted by Ctrl-C; it finished first: {what}");
        return Ok(ExitCode::from(crate::exit_code::INTERRUPTED));
    }
    eprintln!("{what}");
    Ok(ExitCode::SUCCESS)
}
