//! A PostgreSQL run: its preflight (server version, tables, plans), then PostgreSQL's
//! sessions and sampler (`worker::PgSessions`) driven on the grid by `drive`, which starts
//! them on a barrier and collects their parts.
//!
//! Stopping: the caller's stop flag halts the sessions after their current operation (or
//! batch, with the server driver: at most about 20 ms); one still running 300 ms later is
//! cancelled with its connection's cancel token.

use crate::common::workload::drive::drive;
pub use crate::common::workload::drive::{Go, Sync};
use crate::error::DbError;
use crate::postgres::dsn::{connect, describe, server_err};
use crate::postgres::schema::table_name;
use crate::postgres::workload::batch;
use crate::postgres::workload::sessions::PgSessions;
use crate::postgres::workload::sql::{read_sql, update_sql, SESSION_SETUP};
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::workload::{Driver, Grid, Workload};
use postgres::{Client, Config};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs `wl` against the server at `cfg` on `grid`. `on_start` gets t0 when the barrier
/// releases (start the OS samplers there). Errors before t0 (cannot connect, no tables, a
/// plan that is not an index scan) are `Err`; errors after t0 end the run early and come
/// back in `DbOutcome::error` with the intervals so far.
pub fn run(
    cfg: &Config,
    wl: &Workload,
    grid: &Grid,
    stop: Arc<AtomicBool>,
    on_start: impl FnOnce(Instant) + Send,
) -> Result<DbOutcome, DbError> {
    let go = Go {
        wl,
        grid,
        stop,
        started: Box::new(on_start),
        sync: Sync {
            ready: &mut || true,
            tick: &mut || {},
        },
    };
    go.validate()?;
    run_synced(cfg, go)
}

/// [`run`], started together with other processes (see [`Sync`]); `go` checked already.
pub(crate) fn run_synced(cfg: &Config, go: Go<'_, '_>) -> Result<DbOutcome, DbError> {
    let mut admin = connect(cfg)?;
    let (version_num, server_version) = preflight(cfg, &mut admin, go.wl)?;
    drop(admin);
    let pg = PgSessions::new(cfg, go.wl.sessions() as usize, version_num);
    drive(&pg, go, server_version)
}

/// Checks the server can run the workload: version 14+, the tables exist, and both
/// statements use the key index (no bitmap or sequential scan). For the server driver,
/// creates its procedure in every schema and runs one read through it.
fn preflight(cfg: &Config, c: &mut Client, wl: &Workload) -> Result<(i32, String), DbError> {
    let err = |e: postgres::Error| server_err(cfg, &e);
    let r = c
        .query_one(
            "SELECT current_setting('server_version_num')::int4, current_setting('server_version')",
            &[],
        )
        .map_err(err)?;
    let (num, version): (i32, String) = (r.get(0), r.get(1));
    if num < 140000 {
        return Err(DbError::Usage(format!(
            "PostgreSQL {version} at {} is too old: iogauge needs 14 or newer (pg_stat_wal)",
            describe(cfg)
        )));
    }
    for schema in 1..=wl.schemas {
        let t = table_name(schema);
        let exists: bool = c
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&t])
            .map_err(err)?
            .get(0);
        if !exists {
            return Err(DbError::Usage(format!(
                "no table {t} on {}: run setup with at least {} schemas first",
                describe(cfg),
                wl.schemas
            )));
        }
        let max: Option<i64> = c
            .query_one(&format!("SELECT max(key) FROM {t}"), &[])
            .map_err(err)?
            .get(0);
        if max.unwrap_or(0) < wl.blocks_per_schema as i64 {
            return Err(DbError::Usage(format!(
                "{t} on {} holds keys up to {}, fewer than the {} blocks per schema asked for",
                describe(cfg),
                max.unwrap_or(0),
                wl.blocks_per_schema
            )));
        }
    }
    c.batch_execute(SESSION_SETUP).map_err(err)?;
    let hi = wl.work_unit.to_string();
    for sql in [
        read_sql(1, "1", &hi),
        update_sql(1, wl.redo_stress, "1", &hi, "'x'"),
    ] {
        let plan: Vec<String> = c
            .query(&format!("EXPLAIN {sql}"), &[])
            .map_err(err)?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let plan = plan.join(" | ");
        if !plan.contains("Index Scan using")
            || plan.contains("Bitmap")
            || plan.contains("Seq Scan")
        {
            return Err(DbError::Layout {
                what: describe(cfg),
                why: format!("`{sql}` is not a plain index scan: {plan}"),
            });
        }
    }
    if wl.driver == Driver::Server {
        batch::install(c, wl.schemas).map_err(err)?;
        let stmt = c.prepare(&batch::call_sql(1)).map_err(err)?;
        let done = batch::call(
            c,
            &stmt,
            &[1],
            &[false],
            &[],
            &[],
            wl.work_unit,
            wl.redo_stress,
            Duration::from_secs(1),
        )
        .map_err(err)?;
        if done.rows != [wl.work_unit as i64] {
            return Err(DbError::Layout {
                what: describe(cfg),
                why: format!(
                    "{} read {:?} rows of keys 1..={}, expected {}",
                    batch::procedure_name(1),
                    done.rows,
                    wl.work_unit,
                    wl.work_unit
                ),
            });
        }
    }
    Ok((num, version))
}
