//! The server driver: as pgio and SLOB do, the loop of operations runs inside the database.
//! Each schema gets a PL/pgSQL procedure `iogauge_N.slob_batch` (created by the driver's
//! preflight, dropped with the schema); a session draws its operations as the client driver
//! does and hands up to [`MAX_BATCH`] of them to one `CALL`, so there is one round trip per
//! batch instead of one per operation.
//!
//! In the procedure, every operation is the client driver's statement, with the same text
//! ([`read_sql`], [`update_sql`]), as static SQL whose plan PL/pgSQL caches; each update is
//! followed by `COMMIT`, so it is its own transaction and waits for its WAL flush as an
//! autocommit statement does (the `CALL` runs outside a transaction block, which is what lets
//! a procedure commit). Reads are not committed one by one: the reads between two updates
//! share a transaction, so the server counts fewer commits than with the client driver.
//! Each operation's start and end are `clock_timestamp()`, microsecond resolution; its
//! latency is the database's own, without the protocol round trip.
//!
//! A batch stops early once it has run [`BATCH_TIME`] (or reached the end of the run), so a
//! halt is seen soon and the run ends on time; operations drawn but not run go first into
//! the next batch, so the sequence of operations is the client driver's.

use crate::common::schema::{pad_cols, PAD_LEN};
use crate::common::workload::shared::Run;
use crate::postgres::schema::schema_name;
use crate::postgres::workload::sql::{read_sql, update_sql};
use iogauge_model::db::workload::RedoStress;
use postgres::{Client, Statement};
use std::time::{Duration, Instant, SystemTime};

/// Operations per `CALL` at most.
pub(crate) const MAX_BATCH: usize = 32;
/// A batch starts no operation after running this long.
pub(crate) const BATCH_TIME: Duration = Duration::from_millis(20);

pub(crate) fn procedure_name(schema: u32) -> String {
    format!("{}.slob_batch", schema_name(schema))
}

/// Operation `i` of the batch on one schema's table: `n` gets its rows.
fn op_sql(schema: u32) -> String {
    let upd = |redo| update_sql(schema, redo, "l", "h", "pd");
    format!(
        "IF upd[i] THEN
                pd := pad[i];
                IF redo = 0 THEN {};
                ELSIF redo = 1 THEN {};
                ELSE {};
                END IF;
                GET DIAGNOSTICS n = ROW_COUNT;
                COMMIT;
            ELSE
                {} INTO n, s;
            END IF;",
        upd(RedoStress::None),
        upd(RedoStress::Lite),
        upd(RedoStress::Heavy),
        read_sql(schema, "l", "h"),
    )
}

/// The procedure for sessions whose own schema is `schema`. Arguments: the operations'
/// first keys, update or read, on schema 1 (the hot schema) or not, the updates' padding
/// (empty without redo stress), the work unit, the padding columns an update sets (0, 1 or
/// all), and the time budget in µs. Returns per operation run (a prefix of those given, at
/// least one): start and end, and the rows it found.
pub(crate) fn procedure_sql(schema: u32) -> String {
    let body = if schema == 1 {
        op_sql(1)
    } else {
        format!(
            "IF hot[i] THEN\n{}\n  ELSE\n{}\n  END IF;",
            op_sql(1),
            op_sql(schema)
        )
    };
    format!(
        "CREATE OR REPLACE PROCEDURE {}(
    lo int8[], upd bool[], hot bool[], pad text[], wu int8, redo int4, budget_us int8,
    INOUT op_start timestamptz[] DEFAULT NULL, INOUT op_end timestamptz[] DEFAULT NULL,
    INOUT op_rows int8[] DEFAULT NULL)
LANGUAGE plpgsql AS $iogauge$
DECLARE
    deadline timestamptz := clock_timestamp() + budget_us * interval '1 microsecond';
    t timestamptz;
    l int8;
    h int8;
    pd text;
    n int8;
    s numeric;
BEGIN
    op_start := '{{}}';
    op_end := '{{}}';
    op_rows := '{{}}';
    FOR i IN 1 .. coalesce(cardinality(lo), 0) LOOP
        t := clock_timestamp();
        EXIT WHEN i > 1 AND t >= deadline;
        l := lo[i];
        h := l + wu - 1;
        {body}
        op_start[i] := t;
        op_end[i] := clock_timestamp();
        op_rows[i] := n;
    END LOOP;
END
$iogauge$",
        procedure_name(schema)
    )
}

/// Creates (or replaces) the procedure in every schema of the data set, in one transaction
/// holding an advisory lock: several drivers on one server (MPI ranks sharing a `--dsn`)
/// install it one after the other instead of racing on the catalog.
pub(crate) fn install(c: &mut Client, schemas: u32) -> Result<(), postgres::Error> {
    let mut sql = String::from("BEGIN; SELECT pg_advisory_xact_lock(4446396526);\n");
    for schema in 1..=schemas {
        sql.push_str(&procedure_sql(schema));
        sql.push_str(";\n");
    }
    sql.push_str("COMMIT;");
    c.batch_execute(&sql)
}

pub(crate) fn call_sql(schema: u32) -> String {
    format!(
        "CALL {}($1, $2, $3, $4, $5, $6, $7, NULL, NULL, NULL)",
        procedure_name(schema)
    )
}

/// What one `CALL` returned: per operation run, start and end on the server's clock and
/// the rows it found.
pub(crate) struct Done {
    pub start: Vec<SystemTime>,
    pub end: Vec<SystemTime>,
    pub rows: Vec<i64>,
}

/// Runs a batch: `ops` first keys, updates, hot flags and padding (one per operation, or
/// none without redo stress).
#[allow(clippy::too_many_arguments)]
pub(crate) fn call(
    c: &mut Client,
    stmt: &Statement,
    lo: &[i64],
    upd: &[bool],
    hot: &[bool],
    pad: &[String],
    work_unit: u32,
    redo: RedoStress,
    budget: Duration,
) -> Result<Done, postgres::Error> {
    let row = c.query_one(
        stmt,
        &[
            &lo,
            &upd,
            &hot,
            &pad,
            &i64::from(work_unit),
            &(pad_cols(redo) as i32),
            &(budget.as_micros().max(1) as i64),
        ],
    )?;
    Ok(Done {
        start: row.try_get(0)?,
        end: row.try_get(1)?,
        rows: row.try_get(2)?,
    })
}

/// Each operation of a batch on the client's clock: (completion as an offset from t0,
/// latency in ns). The server's times are anchored at `sent`, when the client sent the
/// `CALL`, as if the first operation had started then: the procedure really started a
/// little later (the message's way to the server), so completions come out early by that,
/// well under one round trip, and never later than `back`, when the answer arrived. A server
/// clock that stepped back gives zero.
pub(crate) fn place(
    sent: Duration,
    back: Duration,
    start: &[SystemTime],
    end: &[SystemTime],
) -> Vec<(Duration, u64)> {
    let Some(&first) = start.first() else {
        return Vec::new();
    };
    let since = |a: SystemTime, b: SystemTime| a.duration_since(b).unwrap_or(Duration::ZERO);
    start
        .iter()
        .zip(end)
        .map(|(&s, &e)| {
            let at = (sent + since(e, first)).min(back).max(sent);
            (at, since(e, s).as_nanos() as u64)
        })
        .collect()
}

/// The operations drawn and not yet run, in order.
#[derive(Default)]
struct Pending {
    lo: Vec<i64>,
    upd: Vec<bool>,
    hot: Vec<bool>,
    pad: Vec<String>,
}

impl Pending {
    fn drop_first(&mut self, n: usize) {
        self.lo.drain(..n);
        self.upd.drain(..n);
        self.hot.drain(..n);
        let n = n.min(self.pad.len());
        self.pad.drain(..n);
    }
}

/// The server driver's loop: batches until the end of the run or a halt. With think time a
/// batch is one operation, and the pause is the client's (a sleep in the procedure would
/// count as an active session).
pub(crate) fn server_loop(
    c: &mut Client,
    stmt: &Statement,
    r: &mut Run,
) -> Result<(), postgres::Error> {
    let wl = &r.sh.wl;
    let max = if wl.think_time.is_some() {
        1
    } else {
        MAX_BATCH
    };
    let padded = wl.redo_stress != RedoStress::None;
    let mut b = Pending::default();
    let mut pad = String::with_capacity(PAD_LEN);
    while !r.over() {
        while b.lo.len() < max {
            let op = r.ops.next(&mut pad);
            b.lo.push(op.lo);
            b.upd.push(op.update);
            b.hot.push(op.hot);
            if padded {
                b.pad.push(if op.update {
                    pad.clone()
                } else {
                    String::new()
                });
            }
        }
        let sent = Instant::now();
        let budget = BATCH_TIME.min(r.deadline.saturating_duration_since(sent));
        let done = call(
            c,
            stmt,
            &b.lo,
            &b.upd,
            &b.hot,
            &b.pad,
            wl.work_unit,
            wl.redo_stress,
            budget,
        )?;
        let back = Instant::now();
        let n = done.end.len().min(b.lo.len());
        let placed = place(sent - r.t0, back - r.t0, &done.start, &done.end);
        for (i, &(at, ns)) in placed.iter().enumerate().take(n) {
            let rows = done.rows.get(i).copied().unwrap_or(0).max(0) as u64;
            r.tally.record(at, b.upd[i], ns, rows);
        }
        b.drop_first(n.max(1));
        r.think();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedure_runs_the_client_statements_and_commits_updates() {
        let p = procedure_sql(2);
        assert!(p.starts_with("CREATE OR REPLACE PROCEDURE iogauge_2.slob_batch("));
        for s in [
            "SELECT count(*), sum(scratch) FROM iogauge_2.cf1 WHERE key BETWEEN l AND h INTO n, s",
            "SELECT count(*), sum(scratch) FROM iogauge_1.cf1 WHERE key BETWEEN l AND h INTO n, s",
            "UPDATE iogauge_2.cf1 SET scratch = scratch + 1 WHERE key BETWEEN l AND h;",
            "UPDATE iogauge_2.cf1 SET scratch = scratch + 1, p1 = pd WHERE",
            "p5 = pd WHERE key BETWEEN l AND h;",
            "IF hot[i] THEN",
        ] {
            assert!(p.contains(s), "{s} in {p}");
        }
        // Every update (own and hot schema) is followed by its commit.
        assert_eq!(p.matches("COMMIT;").count(), 2);
        assert_eq!(p.matches("GET DIAGNOSTICS").count(), 2);
        let one = procedure_sql(1);
        assert!(!one.contains("hot[i]") && !one.contains("iogauge_2"));
        assert_eq!(
            call_sql(3),
            "CALL iogauge_3.slob_batch($1, $2, $3, $4, $5, $6, $7, NULL, NULL, NULL)"
        );
    }

    #[test]
    fn ops_land_on_the_client_clock() {
        let us = |n: u64| SystemTime::UNIX_EPOCH + Duration::from_micros(1_000_000 + n);
        let ms = Duration::from_millis;
        // Three operations: 0..40 µs, 50..90 µs, 100..1100 µs after the procedure began.
        let start = [us(0), us(50), us(100)];
        let end = [us(40), us(90), us(1100)];
        let p = place(ms(10), ms(12), &start, &end);
        assert_eq!(
            p,
            [
                (ms(10) + Duration::from_micros(40), 40_000),
                (ms(10) + Duration::from_micros(90), 90_000 - 50_000),
                (ms(10) + Duration::from_micros(1100), 1_000_000),
            ]
        );
        // Never after the answer came back, never before the call was sent.
        let p = place(ms(10), ms(10) + Duration::from_micros(500), &start, &end);
        assert_eq!(p[2].0, ms(10) + Duration::from_micros(500));
        let stepped = place(ms(10), ms(12), &[us(100)], &[us(50)]);
        assert_eq!(stepped, [(ms(10), 0)]);
        assert!(place(ms(1), ms(2), &[], &[]).is_empty());
    }

    #[test]
    fn pending_keeps_what_was_not_run() {
        let mut b = Pending {
            lo: vec![1, 2, 3],
            upd: vec![true, false, true],
            hot: vec![false; 3],
            pad: vec![],
        };
        b.drop_first(2);
        assert_eq!((b.lo, b.upd), (vec![3], vec![true]));
    }
}
