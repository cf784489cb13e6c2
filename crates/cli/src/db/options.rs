//! `db run`'s flags checked once into plain data: the server, the workload's shape, the grid.

use super::args::{overrides, pg_bin, DbRunArgs};
use crate::usage::{check_interval, check_time, UsageError};
use iogauge_db::{PgBin, Place, RunRequest, WorkloadSpec};
use iogauge_model::db::engine::Engine;
use iogauge_model::db::workload::Grid;
use std::path::PathBuf;

/// A validated `db run`.
pub struct DbRunOptions {
    pub engine: Engine,
    pub place: Place,
    /// `--mysql-bin` (MariaDB).
    pub maria_bin: Option<PathBuf>,
    /// `--pg-set` as (name, value).
    pub overrides: Vec<(String, String)>,
    /// `--pg-bin`, checked.
    pub pg_bin: Option<PgBin>,
    pub cache_limit: Option<u64>,
    /// The sessions' shape, made a workload once the data set is known.
    pub workload: WorkloadSpec,
    pub grid: Grid,
    /// `--disks`: the disks behind the data (`None`: those the run samples).
    pub disks: Option<u32>,
    pub store: Option<PathBuf>,
    /// `--label`, checked.
    pub label: Option<String>,
    pub json: bool,
    /// Trace the block layer beside the sampler (not `--no-trace`).
    pub trace: bool,
    /// `--capture`: the run's block requests into a stored trace.
    pub capture: bool,
}

impl DbRunOptions {
    pub fn from_args(mut a: DbRunArgs) -> anyhow::Result<DbRunOptions> {
        validate(&a)?;
        let engine = a.place.engine()?;
        let driver = iogauge_db::engine(engine).check_run(&RunRequest {
            direct_io: a.direct_io,
            cache_limit: a.cache_limit,
            driver: a.driver,
            mysql_bin: a.place.mysql_bin.is_some(),
        })?;
        if a.direct_io {
            a.pg_set.push(super::args::DIRECT_IO.into());
        }
        Ok(DbRunOptions {
            engine,
            place: a.place.place(engine),
            maria_bin: a.place.mysql_bin.clone(),
            overrides: overrides(&a.pg_set)?,
            pg_bin: pg_bin(a.pg_bin.as_deref())?,
            cache_limit: a.cache_limit,
            workload: WorkloadSpec {
                readers: a.readers,
                writers: a.writers,
                sessions: a.sessions,
                update_pct: a.update_pct,
                work_unit: a.work_unit,
                redo_stress: a.redo_stress,
                hot_schema_every: a.hot_schema_every,
                hotspot: a.hotspot,
                think_time: a.think_time,
                driver,
                seed: a.seed,
            },
            grid: Grid {
                interval: a.interval,
                ramp: a.ramp,
                time: a.time,
            },
            disks: a.disks,
            store: a.result.store.store,
            label: a.result.label.checked()?,
            json: a.result.json,
            trace: !a.result.no_trace,
            capture: a.capture,
        })
    }
}

fn validate(a: &DbRunArgs) -> Result<(), UsageError> {
    check_time(a.time)?;
    check_interval(a.interval)?;
    if let Some(dir) = &a.place.dir {
        // A missing cluster is set up there: never on /proc, /sys or cgroupfs.
        crate::paths::check_not_kernel("--dir", dir)?;
    }
    if matches!(
        (a.readers, a.writers),
        (Some(0), Some(0)) | (Some(0), None) | (None, Some(0))
    ) {
        return Err(UsageError(
            "no sessions: give --readers N and/or --writers N above 0, or --sessions N".into(),
        ));
    }
    if a.cache_limit.is_some() {
        if a.place.dsn.is_some() {
            return Err(UsageError(
                "--cache-limit applies to a private cluster, not a --dsn server".into(),
            ));
        }
        // SAFETY: geteuid(2) has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(UsageError(
                "--cache-limit needs root (it creates a memory cgroup); run as root or drop the flag".into(),
            ));
        }
    }
    Ok(())
}
