//! PostgreSQL's load-profile sampler: on its own connection, `pg_stat_database`,
//! `pg_stat_wal` and `pg_stat_io` for the counters ([`snapshot_sql`]), `pg_stat_activity`
//! for the wait events, `pg_statio_*` for the relations; the loop on the grid is the common
//! one ([`sample_on_grid`]).

use crate::common::aas::{ActivityRow, SESSION_APP};
use crate::common::workload::sampler::{sample_on_grid, Counters};
use crate::common::workload::shared::Seat;
use crate::error::DbError;
use crate::postgres::dsn::connect;
use crate::postgres::sample::profile::{snapshot, snapshot_sql};
use crate::postgres::sample::relations::{snapshot_relations, RELATIONS_SQL};
use crate::postgres::workload::worker::{connect_failed, run_error};
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::db::relations::RelationCounters;
use postgres::{Client, Config, Statement};

/// The sampler's run (see `drive::Sessions::sampler`).
pub(crate) fn sampler(cfg: &Config, version_num: i32, seat: Seat<'_>) -> Result<(), DbError> {
    let mut c = connect(cfg).map_err(|e| connect_failed("load-profile sampler", e))?;
    let err = |e: postgres::Error| run_error(cfg, "load-profile sampler", &e);
    let sql = snapshot_sql(version_num)
        .ok_or_else(|| DbError::Usage("PostgreSQL 14 or newer is needed (pg_stat_wal)".into()))?;
    let mut pg = PgCounters {
        snap: c.prepare(&sql).map_err(err)?,
        act: c.prepare(SAMPLE_SQL).map_err(err)?,
        rel: c.prepare(RELATIONS_SQL).map_err(err)?,
        c,
        cfg,
    };
    sample_on_grid(&mut pg, seat)
}

/// The sampler's connection and its prepared statements.
struct PgCounters<'a> {
    c: Client,
    cfg: &'a Config,
    snap: Statement,
    act: Statement,
    rel: Statement,
}

impl PgCounters<'_> {
    fn err(&self, e: &postgres::Error) -> DbError {
        run_error(self.cfg, "load-profile sampler", e)
    }
}

impl Counters for PgCounters<'_> {
    fn counters(&mut self) -> Result<LoadDelta, DbError> {
        snapshot(&mut self.c, &self.snap).map_err(|e| self.err(&e))
    }

    fn shows_waits(&self) -> bool {
        true
    }

    fn waits(&mut self) -> Result<Vec<ActivityRow>, DbError> {
        sample(&mut self.c, &self.act).map_err(|e| self.err(&e))
    }

    fn relations(&mut self) -> Result<Option<Vec<RelationCounters>>, DbError> {
        snapshot_relations(&mut self.c, &self.rel)
            .map(Some)
            .map_err(|e| self.err(&e))
    }
}

const SAMPLE_SQL: &str = "SELECT backend_type, coalesce(application_name, ''), state, \
     wait_event_type, wait_event FROM pg_stat_activity \
     WHERE pid <> pg_backend_pid() AND (application_name = $1 \
     OR backend_type IN ('checkpointer', 'background writer', 'walwriter'))";

/// One sample of `pg_stat_activity`.
fn sample(c: &mut Client, stmt: &Statement) -> Result<Vec<ActivityRow>, postgres::Error> {
    Ok(c.query(stmt, &[&SESSION_APP])?
        .iter()
        .map(|r| ActivityRow {
            backend_type: r.get::<_, Option<String>>(0).unwrap_or_default(),
            application_name: r.get(1),
            state: r.get(2),
            wait_event_type: r.get(3),
            wait_event: r.get(4),
        })
        .collect())
}
