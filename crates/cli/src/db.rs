//! `iogauge db setup | run | reset | drop`: the SLOB method on a real PostgreSQL — a private
//! cluster on the directory under test (started and stopped by iogauge) or an existing
//! server by `--dsn`.

mod args;
mod run;

pub use args::DbArgs;
use args::{DbCommand, SetupArgs, WhereArgs};

use crate::options::UsageError;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iogauge_pg::{parse_dsn, redact_dsn, schema, Cluster, ClusterConfig, LoadReport, SchemaSpec};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where the cluster lives when no --dir or --dsn is given.
pub const DEFAULT_DIR: &str = "iogauge-pg";

pub fn db(a: DbArgs) -> anyhow::Result<ExitCode> {
    match a.cmd {
        DbCommand::Setup(s) => setup(s),
        DbCommand::Run(r) => run::run(r),
        DbCommand::Reset(w) => reset(w),
        DbCommand::Drop(w) => drop_all(w),
    }
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

/// Loads the schemas with a progress bar, verifies one row per block.
fn load(cfg: &postgres::Config, spec: &SchemaSpec) -> anyhow::Result<LoadReport> {
    let bar = progress_bar(u64::from(spec.schemas) * spec.blocks_per_schema);
    let report = schema::setup(cfg, spec, &|done, _total| bar.set_position(done));
    bar.finish_and_clear();
    let report = report?;
    Ok(report)
}

/// Initialises, loads and snapshots a private cluster (`db setup`, and `db run` on a
/// directory without one).
pub fn setup_private(
    dir: &Path,
    s: &SetupArgs,
    overrides: &[(String, String)],
) -> anyhow::Result<(Cluster, LoadReport)> {
    let mut cluster = Cluster::init(&ClusterConfig {
        dir: dir.to_path_buf(),
        wal_dir: s.wal_dir.clone(),
        overrides: overrides.to_vec(),
        ..Default::default()
    })?;
    cluster.start()?;
    let report = load(&cluster.config(), &s.spec())?;
    cluster.snapshot_pristine()?;
    Ok((cluster, report))
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
            let report = load(&cfg, &s.spec())?;
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
    match Target::of(&w) {
        Target::Private(dir) => {
            if !has_cluster(&dir) {
                return Err(no_cluster(&dir).into());
            }
            let mut c = Cluster::open(&dir)?;
            c.reset()?;
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
            load(
                &cfg,
                &SchemaSpec {
                    schemas,
                    blocks_per_schema: blocks,
                    load_parallel: schemas.min(4),
                    seed: args::DEFAULT_SEED,
                },
            )?;
            eprintln!("{}: schemas reloaded", redact_dsn(&dsn));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn drop_all(w: WhereArgs) -> anyhow::Result<ExitCode> {
    match Target::of(&w) {
        Target::Private(dir) => {
            if !has_cluster(&dir) {
                return Err(no_cluster(&dir).into());
            }
            Cluster::open(&dir)?
                .destroy()
                .with_context(|| format!("dropping the cluster in {}", dir.display()))?;
            eprintln!("{}: cluster removed", dir.display());
        }
        Target::Dsn(dsn) => {
            let cfg = parse_dsn(&dsn)?;
            let mut client = iogauge_pg::connect(&cfg)?;
            schema::drop_all(&cfg, &mut client)?;
            eprintln!("{}: iogauge schemas dropped", redact_dsn(&dsn));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn no_cluster(dir: &Path) -> UsageError {
    UsageError(format!(
        "--dir {}: no iogauge cluster there; create one with `iogauge db setup --dir {}`",
        dir.display(),
        dir.display()
    ))
}
