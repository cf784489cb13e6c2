//! `db run`'s flags checked once into plain data: the server, the workload's shape, the grid.

use super::args::{overrides, pg_bin, DbRunArgs};
use crate::usage::{check_interval, check_time, UsageError};
use iogauge_model::db::workload::{Driver, Grid, Hotspot, Mode, RedoStress, Workload};
use iogauge_pg::{PgBin, Place};
use std::path::PathBuf;
use std::time::Duration;

/// A validated `db run`.
pub struct DbRunOptions {
    pub place: Place,
    /// `--pg-set` as (name, value).
    pub overrides: Vec<(String, String)>,
    /// The raw `--pg-set` values, for a first-run setup.
    pub pg_set: Vec<String>,
    /// `--pg-bin`, checked.
    pub pg_bin: Option<PgBin>,
    pub cache_limit: Option<u64>,
    readers: Option<u32>,
    writers: Option<u32>,
    sessions: Option<u32>,
    update_pct: Option<u8>,
    work_unit: u32,
    redo_stress: RedoStress,
    hot_schema_every: Option<u32>,
    hotspot: Option<Hotspot>,
    think_time: Option<(Duration, Option<Duration>)>,
    driver: Driver,
    seed: u64,
    pub grid: Grid,
    pub store: Option<PathBuf>,
    /// `--label`, checked.
    pub label: Option<String>,
    pub json: bool,
}

impl DbRunOptions {
    pub fn from_args(a: DbRunArgs) -> anyhow::Result<DbRunOptions> {
        validate(&a)?;
        Ok(DbRunOptions {
            place: Place::of(a.place.dir.as_deref(), a.place.dsn.as_deref()),
            overrides: overrides(&a.pg_set)?,
            pg_set: a.pg_set,
            pg_bin: pg_bin(a.pg_bin.as_deref())?,
            cache_limit: a.cache_limit,
            readers: a.readers,
            writers: a.writers,
            sessions: a.sessions,
            update_pct: a.update_pct,
            work_unit: a.work_unit,
            redo_stress: a.redo_stress,
            hot_schema_every: a.hot_schema_every,
            hotspot: a.hotspot,
            think_time: a.think_time,
            driver: a.driver,
            seed: a.seed,
            grid: Grid {
                interval: a.interval,
                ramp: a.ramp,
                time: a.time,
            },
            store: a.result.store.store,
            label: a.result.label.checked()?,
            json: a.result.json,
        })
    }

    /// The workload on the data set found on the server.
    pub fn workload(&self, schemas: u32, blocks_per_schema: u64) -> Workload {
        Workload {
            first_session: 0,
            mode: self.mode(schemas),
            work_unit: self.work_unit,
            redo_stress: self.redo_stress,
            hot_schema_every: self.hot_schema_every,
            think_time: self.think_time.map(|t| t.0),
            think_time_max: self.think_time.and_then(|t| t.1),
            hotspot: self.hotspot,
            schemas,
            blocks_per_schema,
            seed: self.seed,
            driver: self.driver,
        }
    }

    /// SLOB's runit: readers and writers; SLOB2: sessions that update some of the time; by
    /// default one reader per schema.
    fn mode(&self, schemas: u32) -> Mode {
        match self.sessions {
            Some(sessions) => Mode::Sessions {
                sessions,
                update_pct: f64::from(self.update_pct.unwrap_or(0)),
            },
            None => match (self.readers, self.writers) {
                (None, None) => Mode::ReadersWriters {
                    readers: schemas,
                    writers: 0,
                },
                (r, w) => Mode::ReadersWriters {
                    readers: r.unwrap_or(0),
                    writers: w.unwrap_or(0),
                },
            },
        }
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
