//! `iogauge db setup`, `reset` and `drop`: the data set on a private cluster (made here, on
//! the storage under test) or on an existing server, loaded, restored and removed.

use super::args::{pg_bin, SetupArgs, WhereArgs, DEFAULT_SEED};
use crate::exit_code::INTERRUPTED;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iogauge_db::{
    check_places, has_cluster, load_dsn, no_cluster, parse_dsn, preflight, schema, setup_private,
    Cluster, DbError, PgBin, Place, PrivateSetup, SchemaSpec,
};
use iogauge_model::db::setup::LoadReport;
use iogauge_model::secret::redact_dsn;
use iogauge_session::stop_flag;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

fn place(w: &WhereArgs) -> Place {
    w.place(iogauge_model::db::engine::Engine::Postgres)
}

/// A bar on a terminal while the schemas load.
pub(super) fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(total),
        if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    if let Ok(style) =
        ProgressStyle::with_template("loading {bar:30} {pos}/{len} blocks ({per_sec}, {eta} left)")
    {
        bar.set_style(style);
    }
    bar
}

/// A private cluster set up with the loading bar.
fn private(
    dir: &Path,
    s: &SetupArgs,
    overrides: &[(String, String)],
    bin: Option<&PgBin>,
) -> anyhow::Result<(Cluster, LoadReport)> {
    let spec = s.spec();
    let bar = progress_bar(u64::from(spec.schemas) * spec.blocks_per_schema);
    let built = setup_private(
        &PrivateSetup {
            dir,
            wal_dir: s.wal_dir.as_deref(),
            tablespaces: &s.target,
            overrides,
            spec: &spec,
            bin,
        },
        &stop_flag()?,
        &|done, _| bar.set_position(done),
    );
    bar.finish_and_clear();
    Ok(built?)
}

/// The schemas loaded on a server by DSN, with the loading bar.
fn on_dsn(
    dsn: &str,
    spec: &SchemaSpec,
    stop: &AtomicBool,
    during: &str,
) -> anyhow::Result<LoadReport> {
    let bar = progress_bar(u64::from(spec.schemas) * spec.blocks_per_schema);
    let cfg = parse_dsn(dsn)?;
    let loaded = load_dsn(
        &cfg,
        &redact_dsn(dsn),
        spec,
        stop,
        &|done, _| bar.set_position(done),
        during,
    );
    bar.finish_and_clear();
    Ok(loaded?)
}

/// `db run` on a directory without a cluster: iogauge's default data set, with iogauge's
/// settings (the run's `--pg-set` is the run's alone: the caller applies it for the run).
pub fn setup_first(dir: &Path, pg_bin: Option<&PgBin>) -> Result<Cluster, DbError> {
    eprintln!(
        "no cluster in {}: setting one up (4 schemas of 64 MiB; `iogauge db setup` chooses)",
        dir.display()
    );
    let s = SetupArgs::defaults(
        WhereArgs {
            dir: Some(dir.to_path_buf()),
            dsn: None,
            engine: None,
            mysql_bin: None,
        },
        Vec::new(),
    );
    private(dir, &s, &[], pg_bin)
        .map(|(c, _)| c)
        .map_err(|e| match e.downcast::<DbError>() {
            Ok(p) => p,
            Err(e) => DbError::Usage(format!("{e:#}")),
        })
}

pub fn setup(s: SetupArgs) -> anyhow::Result<ExitCode> {
    s.validate()?;
    let s = s.with_direct_io();
    let overrides = s.overrides()?;
    let direct = overrides
        .iter()
        .any(|(n, v)| preflight::direct_setting(n, v));
    let (report, settings, location) = match place(&s.place) {
        Place::Private(dir) => {
            let bin = pg_bin(s.pg_bin.as_deref())?;
            // Refused places are refused before the preflight speaks of them.
            check_places(&dir, s.wal_dir.as_deref(), &s.target)?;
            let spec = s.spec();
            let planned = preflight::planned(&s.target, spec.schemas, spec.blocks_per_schema << 13);
            let targets = preflight::targets(&planned, &dir.join("data"), s.wal_dir.as_deref());
            // Before any I/O, as calibrate's: what the data set will sit on.
            print!(
                "preflight:\n{}",
                iogauge_report::preflight_text(&preflight::preflight(&targets, direct))
            );
            replace_unfinished(&dir)?;
            let (cluster, report) = private(&dir, &s, &overrides, bin.as_ref())?;
            let settings = cluster.settings()?;
            (report, settings, dir.display().to_string())
        }
        Place::Dsn(dsn) => {
            if !overrides.is_empty() || s.wal_dir.is_some() {
                return Err(crate::usage::UsageError(
                    "--pg-set and --wal-dir configure a private cluster; set them on your own server instead".into(),
                )
                .into());
            }
            let report = on_dsn(&dsn, &s.spec(), &*stop_flag()?, "setup")?;
            let mut client = iogauge_db::connect(&parse_dsn(&dsn)?)?;
            let settings = iogauge_db::settings::settings(&mut client)
                .map_err(|e| anyhow::anyhow!(iogauge_db::error_text(&e)))?;
            (report, settings, redact_dsn(&dsn))
        }
    };
    let ram = iogauge_probe::ram_bytes()?;
    let text = iogauge_report::db_setup_text(&report, &settings, &location, ram);
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// A cluster whose setup was killed before it finished is removed, so setting up again is the
/// way out that `reset` and `run` name.
fn replace_unfinished(dir: &Path) -> anyhow::Result<()> {
    if let Some(unfinished) = Cluster::unfinished(dir)? {
        let shown = dir.display();
        eprintln!("{shown}: removing the cluster of a setup that did not finish (interrupted)");
        unfinished.destroy()?;
    }
    Ok(())
}

pub fn reset(w: WhereArgs) -> anyhow::Result<ExitCode> {
    let stop = stop_flag()?;
    match place(&w) {
        Place::Private(dir) => {
            if !has_cluster(&dir) {
                return Err(no_cluster(&dir).into());
            }
            let mut c = Cluster::open(&dir)?;
            c.set_stop(stop.clone());
            c.reset().map_err(|e| {
                e.noting(|| format!("db reset stopped; {} is as it was before", dir.display()))
            })?;
            if stop.load(Ordering::Relaxed) {
                // Ctrl-C after the copy: the swap is not interrupted half-way.
                eprintln!(
                    "error: db reset interrupted by Ctrl-C after its copy; it finished first: {} is back to the data as loaded",
                    dir.display()
                );
                return Ok(ExitCode::from(INTERRUPTED));
            }
            eprintln!("{}: back to the data as loaded", dir.display());
        }
        Place::Dsn(dsn) => {
            let cfg = parse_dsn(&dsn)?;
            // No file-level copy of someone else's server: reload (same seed, same rows).
            let Some(spec) = schema::reload_spec(&cfg, DEFAULT_SEED)? else {
                return Err(crate::usage::UsageError(format!(
                    "{}: no iogauge schemas to reset; run `iogauge db setup --dsn ...` first",
                    redact_dsn(&dsn)
                ))
                .into());
            };
            on_dsn(&dsn, &spec, &stop, "reset")?;
            eprintln!("{}: schemas reloaded", redact_dsn(&dsn));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn drop_all(w: WhereArgs) -> anyhow::Result<ExitCode> {
    // Registered so Ctrl-C cannot kill the process half-way through the removal.
    let stop = stop_flag()?;
    let what = match place(&w) {
        Place::Private(dir) => {
            if !has_cluster(&dir) {
                return Err(no_cluster(&dir).into());
            }
            Cluster::open(&dir)?.destroy().map_err(|e| {
                anyhow::Error::new(e).context(format!("dropping the cluster in {}", dir.display()))
            })?;
            format!("{}: cluster removed", dir.display())
        }
        Place::Dsn(dsn) => {
            let cfg = parse_dsn(&dsn)?;
            schema::drop_all(&cfg, &mut iogauge_db::connect(&cfg)?)?;
            format!("{}: iogauge schemas dropped", redact_dsn(&dsn))
        }
    };
    if stop.load(Ordering::Relaxed) {
        eprintln!(
            "error: db drop interrupted by Ctrl-C; it finished first (half removed, a cluster \
             would be neither usable nor gone): {what}"
        );
        return Ok(ExitCode::from(INTERRUPTED));
    }
    eprintln!("{what}");
    Ok(ExitCode::SUCCESS)
}
