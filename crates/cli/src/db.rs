//! `iogauge db setup | run | reset | drop`: the SLOB method on a real PostgreSQL — a private
//! cluster on the directory under test (started and stopped by iogauge) or an existing
//! server by `--dsn`.
//!
//! Ctrl-C: setup stops and removes what it created (the cluster, or on a `--dsn` server the
//! schemas it loaded), reset stops and leaves the cluster as it was, drop finishes removing
//! (half removed, a cluster would be neither usable nor gone); each then exits 130.

mod args;
mod run;

pub use args::DbArgs;
use args::{pg_set_error, DbCommand, SetupArgs, WhereArgs};

use crate::exit::INTERRUPTED;
use crate::options::UsageError;
use crate::session::stop_flag;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iogauge_model::db::setup::LoadReport;
use iogauge_model::secret::redact_dsn;
use iogauge_pg::{parse_dsn, schema, Cluster, ClusterConfig, PgError, SchemaSpec};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Where the cluster lives when no --dir or --dsn is given.
pub const DEFAULT_DIR: &str = "iogauge-pg";

pub fn db(a: DbArgs) -> anyhow::Result<ExitCode> {
    let result = match a.cmd {
        DbCommand::Setup(s) => setup(s),
        DbCommand::Run(r) => run::run(r),
        DbCommand::Reset(w) => reset(w),
        DbCommand::Drop(w) => drop_all(w),
    };
    match result {
        Err(e) if is_interrupted(&e) => {
            eprintln!("error: {e:#}");
            Ok(ExitCode::from(INTERRUPTED))
        }
        Err(e) => Err(match e.downcast_ref::<PgError>() {
            // A setting the server refused, named as the user gave it.
            Some(p @ PgError::BadSetting { .. }) => pg_set_error(p).into(),
            _ => e,
        }),
        ok => ok,
    }
}

/// Whether Ctrl-C ended the work (anywhere in the error's chain).
fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<PgError>()
            .is_some_and(PgError::is_interrupted)
    })
}

/// The server a command works on.
pub enum Target {
    Private(PathBuf),
    Dsn(String),
}

impl Target {
    pub fn of(w: &WhereArgs) -> Target {
        match &w.dsn {
            Some(d) => Target::Dsn(d.clone()),
            None => Target::Private(w.dir.clone().unwrap_or_else(|| DEFAULT_DIR.into())),
        }
    }
}

/// A private cluster is one iogauge created: its marker file is there.
pub fn has_cluster(dir: &Path) -> bool {
    dir.join(".iogauge-pg").exists()
}

/// `flag`'s path must be a directory or not exist yet, under a directory (a regular file
/// there is the user's mistake, not an I/O failure).
pub fn check_dir(flag: &str, p: &Path) -> Result<(), UsageError> {
    let existing = p
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| std::fs::symlink_metadata(a).is_ok());
    match existing {
        Some(a) if !a.is_dir() => Err(UsageError(format!(
            "{flag} {}: {}not a directory; give a new directory or an empty one",
            p.display(),
            if a == p {
                String::new()
            } else {
                format!("{} is ", a.display())
            }
        ))),
        _ => Ok(()),
    }
}

fn progress_bar(total: u64) -> ProgressBar {
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

/// Loads the schemas with a progress bar, verifies one row per block. Interrupted or failed,
/// the schemas it created are dropped again.
fn load(
    cfg: &postgres::Config,
    spec: &SchemaSpec,
    stop: &AtomicBool,
) -> anyhow::Result<LoadReport> {
    let bar = progress_bar(u64::from(spec.schemas) * spec.blocks_per_schema);
    let report = schema::setup(cfg, spec, stop, &|done, _total| bar.set_position(done));
    bar.finish_and_clear();
    Ok(report?)
}

/// Initialises, loads and snapshots a private cluster (`db setup`, and `db run` on a
/// directory without one). Failed or stopped by Ctrl-C, it removes what it created — the
/// marker lists it — and nothing else, so a retry starts clean.
pub fn setup_private(
    dir: &Path,
    s: &SetupArgs,
    overrides: &[(String, String)],
) -> anyhow::Result<(Cluster, LoadReport)> {
    check_dir("--dir", dir)?;
    if let Some(w) = &s.wal_dir {
        check_dir("--wal-dir", w)?;
    }
    let stop = stop_flag()?;
    let removed = || {
        format!(
            "db setup stopped; removed what it had created in {}",
            dir.display()
        )
    };
    // init removes its own half-built cluster on failure.
    let mut cluster = Cluster::init(&ClusterConfig {
        dir: dir.to_path_buf(),
        wal_dir: s.wal_dir.clone(),
        overrides: overrides.to_vec(),
        stop: Some(stop.clone()),
        ..Default::default()
    })
    .map_err(|e| interrupted_note(e.into(), removed))?;
    let built = cluster
        .start()
        .map_err(anyhow::Error::from)
        .and_then(|()| load(&cluster.config(), &s.spec(), &stop))
        .and_then(|report| {
            cluster.snapshot_pristine()?;
            Ok(report)
        });
    match built {
        Ok(report) => Ok((cluster, report)),
        Err(e) => {
            let d = dir.display().to_string();
            cluster.destroy().with_context(|| {
                format!("{e:#}; removing the half-built cluster in {d} failed too")
            })?;
            Err(interrupted_note(e, removed))
        }
    }
}

/// Says what was cleaned up when Ctrl-C was the cause; other errors pass unchanged.
fn interrupted_note(e: anyhow::Error, note: impl FnOnce() -> String) -> anyhow::Error {
    if is_interrupted(&e) {
        e.context(note())
    } else {
        e
    }
}

fn setup(s: SetupArgs) -> anyhow::Result<ExitCode> {
    s.validate()?;
    let overrides = s.overrides()?;
    let (report, settings, location) = match Target::of(&s.place) {
        Target::Private(dir) => {
            let (cluster, report) = setup_private(&dir, &s, &overrides)?;
            let settings = cluster.settings()?;
            (report, settings, dir.display().to_string())
        }
        Target::Dsn(dsn) => {
            if !overrides.is_empty() || s.wal_dir.is_some() {
                return Err(UsageError(
                    "--pg-set and --wal-dir configure a private cluster; set them on your own server instead".into(),
                )
                .into());
            }
            let cfg = parse_dsn(&dsn)?;
            let stop = stop_flag()?;
            let report = load(&cfg, &s.spec(), &stop).map_err(|e| {
                interrupted_note(e, || {
                    format!(
                        "db setup stopped; dropped the schemas it had loaded on {}",
                        redact_dsn(&dsn)
                    )
                })
            })?;
            let mut client = iogauge_pg::connect(&cfg)?;
            let settings = iogauge_pg::settings::settings(&mut client)
                .map_err(|e| anyhow::anyhow!(iogauge_pg::error_text(&e)))?;
            (report, settings, redact_dsn(&dsn))
        }
    };
    let text = iogauge_report::db_setup_text(&report, &settings, &location, run::ram_bytes());
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn reset(w: WhereArgs) -> anyhow::Result<ExitCode> {
    let stop = stop_flag()?;
    match Target::of(&w) {
        Target::Private(dir) => {
            if !has_cluster(&dir) {
                return Err(no_cluster(&dir).into());
            }
            let mut c = Cluster::open(&dir)?;
            c.set_stop(stop.clone());
            c.reset().map_err(|e| {
                interrupted_note(e.into(), || {
                    format!("db reset stopped; {} is as it was before", dir.display())
                })
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
        Target::Dsn(dsn) => {
            let cfg = parse_dsn(&dsn)?;
            let Some((schemas, blocks)) = schema::discover(&cfg)? else {
                return Err(UsageError(format!(
                    "{}: no iogauge schemas to reset; run `iogauge db setup --dsn ...` first",
                    redact_dsn(&dsn)
                ))
                .into());
            };
            // No file-level copy of someone else's server: reload (same seed, same rows).
            let spec = SchemaSpec {
                schemas,
                blocks_per_schema: blocks,
                load_parallel: schemas.min(4),
                seed: args::DEFAULT_SEED,
            };
            load(&cfg, &spec, &stop).map_err(|e| {
                interrupted_note(e, || {
                    format!(
                        "db reset stopped; the schemas on {} were dropped, load them again with `iogauge db setup --dsn ...`",
                        redact_dsn(&dsn)
                    )
                })
            })?;
            eprintln!("{}: schemas reloaded", redact_dsn(&dsn));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn drop_all(w: WhereArgs) -> anyhow::Result<ExitCode> {
    // Registered so Ctrl-C cannot kill the process half-way through the removal.
    let stop = stop_flag()?;
    let what = match Target::of(&w) {
        Target::Private(dir) => {
            if !has_cluster(&dir) {
                return Err(no_cluster(&dir).into());
            }
            Cluster::open(&dir)?
                .destroy()
                .with_context(|| format!("dropping the cluster in {}", dir.display()))?;
            format!("{}: cluster removed", dir.display())
        }
        Target::Dsn(dsn) => {
            let cfg = parse_dsn(&dsn)?;
            let mut client = iogauge_pg::connect(&cfg)?;
            schema::drop_all(&cfg, &mut client)?;
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

pub fn no_cluster(dir: &Path) -> UsageError {
    if check_dir("--dir", dir).is_err() || dir.is_file() {
        return UsageError(format!(
            "--dir {}: not a directory, so no iogauge cluster there; give the directory `iogauge db setup --dir` made",
            dir.display()
        ));
    }
    UsageError(format!(
        "--dir {}: no iogauge cluster there; create one with `iogauge db setup --dir {}`",
        dir.display(),
        dir.display()
    ))
}
