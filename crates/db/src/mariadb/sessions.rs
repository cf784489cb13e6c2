//! MariaDB's part of a `db run` (see `workload::drive`): its preflight (version, tables,
//! plans), sessions that send each work unit as primary-key lookups on one prepared
//! statement (the client driver: one round trip per operation, autocommit, so every update
//! commits and waits for the redo log), and the sampler that reads `SHOW GLOBAL STATUS` on
//! the grid.

use super::activity;
use super::conn::{one_line, MariaTarget};
use super::schema::{place, table_name};
use super::status::{snapshot, DATA_READ_TIME_SQL, STATUS_SQL};
use crate::common::aas::ActivityRow;
use crate::common::schema::{pad_cols, PAD_COLS};
use crate::common::workload::drive::{drive, Go, Sessions};
use crate::common::workload::ops::Op;
use crate::common::workload::sampler::{sample_on_grid, Counters};
use crate::common::workload::shared::Seat;
use crate::error::DbError;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::db::workload::{Driver, RedoStress, Workload};
use iogauge_model::units::Millis;
use iogauge_trace::FileProbe;
use mysql::prelude::Queryable;
use mysql::{Conn, Statement, Value};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// MariaDB's "Query execution was interrupted" (KILL QUERY): a halt, not a failure.
const ER_QUERY_INTERRUPTED: u16 = 1317;

/// The statements: each row's `scratch` over a work unit's keys (a column outside the key, so
/// the row itself is read; counted by the client, as sysbench's point select reads `c`, with
/// no aggregate for the server to run), and the update of them (a changing value: real redo).
fn read_sql(schema: u32, keys: u32) -> String {
    format!(
        "SELECT scratch FROM {} WHERE k IN ({})",
        table_name(schema),
        marks(keys)
    )
}

fn update_sql(schema: u32, keys: u32, redo: RedoStress) -> String {
    let mut set = String::from("scratch = scratch + 1");
    for i in 1..=pad_cols(redo) {
        set.push_str(&format!(", p{i} = ?"));
    }
    format!(
        "UPDATE {} SET {set} WHERE k IN ({})",
        table_name(schema),
        marks(keys)
    )
}

fn marks(n: u32) -> String {
    vec!["?"; n as usize].join(", ")
}

/// Runs `go` on the server at `t` (see `drive`); errors before t0 are `Err`.
pub fn run(
    t: &MariaTarget,
    redo: Option<&FileProbe>,
    go: Go<'_, '_>,
) -> Result<DbOutcome, DbError> {
    let wl = go.wl;
    if wl.driver == Driver::Server {
        return Err(DbError::Usage(
            "--driver server runs a PL/pgSQL procedure (PostgreSQL); MariaDB runs --driver client"
                .into(),
        ));
    }
    let version = preflight(t, wl)?;
    let m = MariaSessions {
        target: t.clone(),
        redo,
        ids: Mutex::new(vec![None; wl.sessions() as usize]),
    };
    drive(&m, go, version)
}

/// The server's version, once the tables hold the rows asked for and both statements look
/// rows up by the primary key (never a scan).
fn preflight(t: &MariaTarget, wl: &Workload) -> Result<String, DbError> {
    let mut c = t.connect()?;
    let err = |e: mysql::Error| t.err(&e);
    let version: Option<String> = c.query_first("SELECT VERSION()").map_err(err)?;
    for schema in 1..=wl.schemas {
        let max: Option<Option<u64>> = c
            .query_first(format!("SELECT MAX(k) FROM {}", table_name(schema)))
            .map_err(|e| DbError::Usage(format!(
                "no table {} on {}: run `iogauge db setup --engine mariadb` with at least {} schemas first ({})",
                table_name(schema), t.name, wl.schemas, one_line(&e)
            )))?;
        let rows = max.flatten().map_or(0, super::schema::rows_of);
        if rows < wl.blocks_per_schema {
            return Err(DbError::Usage(format!(
                "{} on {} holds {rows} rows, fewer than the {} asked for",
                table_name(schema),
                t.name,
                wl.blocks_per_schema
            )));
        }
    }
    let n = wl.work_unit;
    let keys: Vec<String> = (1..=u64::from(n))
        .map(|w| place(w, wl.blocks_per_schema).to_string())
        .collect();
    for sql in [read_sql(1, n), update_sql(1, n, RedoStress::None)] {
        let mut literal = sql.clone();
        for k in &keys {
            literal = literal.replacen('?', k, 1);
        }
        let plan: Vec<mysql::Row> = c.query(format!("EXPLAIN {literal}")).map_err(err)?;
        let by_key = plan.iter().all(|r| {
            let key: Option<String> = r.get_opt(5).and_then(Result::ok).flatten();
            let kind: Option<String> = r.get_opt(3).and_then(Result::ok).flatten();
            key.as_deref() == Some("PRIMARY")
                && matches!(kind.as_deref(), Some("range" | "const" | "eq_ref"))
        });
        if !by_key || plan.is_empty() {
            return Err(DbError::Layout {
                what: t.name.clone(),
                why: format!("`{sql}` does not look its rows up by the primary key"),
            });
        }
    }
    Ok(version.unwrap_or_default())
}

/// MariaDB's sessions and sampler: where to connect, the probe on the redo log, and each
/// session's connection id for `KILL QUERY`.
struct MariaSessions<'a> {
    target: MariaTarget,
    redo: Option<&'a FileProbe>,
    ids: Mutex<Vec<Option<u32>>>,
}

impl MariaSessions<'_> {
    fn id(&self, session: usize, id: Option<u32>) {
        self.ids.lock().unwrap_or_else(|p| p.into_inner())[session] = id;
    }

    /// The connection ids of the sessions running now.
    fn live_ids(&self) -> Vec<u32> {
        let ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        ids.iter().flatten().copied().collect()
    }

    fn prepare(&self, c: &mut Conn, schema: u32, wl: &Workload) -> Result<Stmts, DbError> {
        let err = |e: mysql::Error| self.target.err(&e);
        Ok(Stmts {
            read: c.prep(read_sql(schema, wl.work_unit)).map_err(err)?,
            update: c
                .prep(update_sql(schema, wl.work_unit, wl.redo_stress))
                .map_err(err)?,
        })
    }
}

struct Stmts {
    read: Statement,
    update: Statement,
}

impl Sessions for MariaSessions<'_> {
    const PREFIX: &'static str = "maria";

    fn session(&self, id: usize, mut seat: Seat<'_>) -> Result<(), DbError> {
        let sh = seat.sh;
        let wl = &sh.wl;
        let who = format!("session {id}");
        let mut c = self
            .target
            .connect()
            .map_err(|e| gone(&self.target, &who, e))?;
        let own_schema = wl.schema_of(id as u32);
        let own = self.prepare(&mut c, own_schema, wl)?;
        let hot = match wl.hot_schema_every {
            Some(_) if own_schema != 1 => Some(self.prepare(&mut c, 1, wl)?),
            _ => None,
        };
        self.id(id, Some(c.connection_id()));
        let Some(t0) = seat.arrive() else {
            return Ok(());
        };
        let mut r = seat.run(t0, id);
        // One prepared statement, so one round trip, per operation.
        let params = |op: &Op, pad: &str, wl: &Workload| {
            let mut params: Vec<Value> = Vec::with_capacity(wl.work_unit as usize + PAD_COLS);
            if op.update {
                params.extend((0..pad_cols(wl.redo_stress)).map(|_| Value::from(pad)));
            }
            let n = wl.blocks_per_schema;
            params.extend(
                (0..u64::from(wl.work_unit)).map(|i| Value::from(place(op.lo as u64 + i, n))),
            );
            params
        };
        let done = r.each_op(&own, hot.as_ref(), params, |stmts, op, params, _| {
            if op.update {
                c.exec_drop(&stmts.update, params)?;
                Ok(c.affected_rows())
            } else {
                let got: Vec<i64> = c.exec(&stmts.read, params)?;
                Ok(got.len() as u64)
            }
        });
        r.tally.finish();
        self.id(id, None);
        match done {
            Err(mysql::Error::MySqlError(e))
                if sh.halt.load(Ordering::Relaxed) && e.code == ER_QUERY_INTERRUPTED =>
            {
                Ok(())
            }
            Err(e) => Err(DbError::Maria {
                server: self.target.name.clone(),
                why: format!("{who}: {}", one_line(&e)),
            }),
            Ok(()) => Ok(()),
        }
    }

    fn sampler(&self, seat: Seat<'_>) -> Result<(), DbError> {
        let t = &self.target;
        let mut c = t
            .connect()
            .map_err(|e| gone(t, "load-profile sampler", e))?;
        let sight = activity::available(&mut c).map_err(|e| t.err(&e))?;
        let mut m = MariaCounters {
            c,
            sight,
            sessions: self,
        };
        sample_on_grid(&mut m, seat)
    }

    fn cancel_all(&self) {
        if let Ok(mut c) = self.target.connect() {
            for id in self.live_ids() {
                // A session already gone has nothing to kill.
                let _ = c.query_drop(format!("KILL QUERY {id}"));
            }
        }
    }
}

/// The sampler's connection: the counters, and the sessions' waits where
/// `performance_schema` shows them (`sight`).
struct MariaCounters<'a, 'b> {
    c: Conn,
    sight: Option<activity::Sight>,
    sessions: &'a MariaSessions<'b>,
}

impl Counters for MariaCounters<'_, '_> {
    fn counters(&mut self) -> Result<LoadDelta, DbError> {
        let s = self.sessions;
        snap(&s.target, &mut self.c, s.redo)
    }

    fn shows_waits(&self) -> bool {
        self.sight.is_some()
    }

    fn waits(&mut self) -> Result<Vec<ActivityRow>, DbError> {
        let Some(sight) = self.sight else {
            return Ok(Vec::new());
        };
        let t = &self.sessions.target;
        let raw: Vec<activity::WaitRow> = self
            .c
            .query(activity::sample_sql(&self.sessions.live_ids(), sight))
            .map_err(|e| t.err(&e))?;
        Ok(activity::rows(&raw, sight))
    }
}

/// The cumulative counters: `SHOW GLOBAL STATUS`, the time InnoDB's data file reads took
/// from `performance_schema` (not measured where it is off), and the redo log's writes and syncs with
/// their times from the probe, where there is one (else the server's count of log writes).
fn snap(t: &MariaTarget, c: &mut Conn, redo: Option<&FileProbe>) -> Result<LoadDelta, DbError> {
    let rows: Vec<(String, String)> = c.query(STATUS_SQL).map_err(|e| t.err(&e))?;
    let mut d = snapshot(&rows);
    let read_ps: Option<u64> = c.query_first(DATA_READ_TIME_SQL).map_err(|e| t.err(&e))?;
    d.blk_read_time_ms = read_ps.unwrap_or(0) as f64 / 1e9;
    // performance_schema off (a user's server): the reads are counted, their time is not.
    d.reads_untimed = read_ps.is_none();
    match redo.map(FileProbe::read) {
        Some(io) => {
            d.log_writes = io.writes;
            d.log_write_time_ms = Millis(io.write_ns as f64 / 1e6);
            d.log_syncs = io.syncs;
            d.log_sync_time_ms = Millis(io.sync_ns as f64 / 1e6);
        }
        None => d.log_untimed = true,
    }
    Ok(d)
}

/// A connection that failed though the run's first one worked: the server's failure.
fn gone(t: &MariaTarget, who: &str, e: DbError) -> DbError {
    match e {
        DbError::MariaConnect { why, .. } => DbError::Maria {
            server: t.name.clone(),
            why: format!("{who} could not connect: {why}"),
        },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_look_up_a_work_unit_by_key() {
        assert_eq!(
            read_sql(2, 3),
            "SELECT scratch FROM iogauge_2.cf1 WHERE k IN (?, ?, ?)"
        );
        let heavy = update_sql(1, 2, RedoStress::Heavy);
        assert!(
            heavy.contains("p5 = ?") && heavy.ends_with("k IN (?, ?)"),
            "{heavy}"
        );
    }
}
