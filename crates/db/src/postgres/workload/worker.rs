//! One database session: a thread with its own connection that picks random keys and reads or
//! updates `work_unit` rows through the key index, and hands its latencies to the collector
//! at each interval boundary. The client driver lives here (one statement per operation);
//! the server driver, batches run by a procedure in the database, in `batch`; what both
//! share with the sampler and the collector in `shared`, the statements in `sql`.

use crate::common::workload::ops::Op;
use crate::common::workload::shared::{Run, Seat};
use crate::error::{error_text, DbError};
use crate::postgres::dsn::{connect, describe};
use crate::postgres::workload::batch;
use iogauge_model::db::workload::{Driver, RedoStress, Workload};
use postgres::error::SqlState;
use postgres::{Client, Config, Statement};
use std::sync::atomic::Ordering;

use crate::postgres::workload::sql::{read_sql, update_sql, SESSION_SETUP};
use postgres::CancelToken;

/// A session's prepared statements for the client driver.
struct Stmts {
    read: Statement,
    update: Statement,
}

fn prepare(c: &mut Client, schema: u32, redo: RedoStress) -> Result<Stmts, postgres::Error> {
    Ok(Stmts {
        read: c.prepare(&read_sql(schema, "$1", "$2"))?,
        update: c.prepare(&update_sql(schema, redo, "$1", "$2", "$3"))?,
    })
}

/// A run-time error, saying plainly when the server is gone.
pub(crate) fn run_error(cfg: &Config, who: &str, e: &postgres::Error) -> DbError {
    let gone = e.is_closed()
        || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
        || matches!(e.code(), Some(c) if *c == SqlState::ADMIN_SHUTDOWN || *c == SqlState::CRASH_SHUTDOWN);
    let why = if gone {
        format!(
            "the server went away during the run ({who}): {}",
            error_text(e)
        )
    } else {
        format!("{who}: {}", error_text(e))
    };
    DbError::Server {
        server: describe(cfg),
        why,
    }
}

/// A session's (or the sampler's) connection failed, though the run's first one, with the
/// same settings, worked a moment before: the server's failure (it crashed and restarts, it
/// has no connection left), not a DSN to check (exit 1, not 2).
pub(crate) fn connect_failed(who: &str, e: DbError) -> DbError {
    match e {
        DbError::Connect { server, why } => DbError::Server {
            server,
            why: format!("{who} could not connect: {why}"),
        },
        e => e,
    }
}

enum Prepared {
    Client { own: Stmts, hot: Option<Stmts> },
    Server(Statement),
}

/// Session `id` on the server at `cfg` (see `drive::Sessions::session`): `token` keeps its
/// connection's cancel token while it runs; with `flush_stats` (PostgreSQL 15+) it publishes
/// its statistics before it leaves.
pub(crate) fn run(
    cfg: &Config,
    flush_stats: bool,
    token: &dyn Fn(Option<CancelToken>),
    id: usize,
    mut seat: Seat<'_>,
) -> Result<(), DbError> {
    let sh = seat.sh;
    let wl = &sh.wl;
    let who = format!("session {id}");
    let mut c = connect(cfg).map_err(|e| connect_failed(&who, e))?;
    let err = |e: postgres::Error| run_error(cfg, &who, &e);
    c.batch_execute(SESSION_SETUP).map_err(err)?;
    let own_schema = wl.schema_of(id as u32);
    let prepared = match wl.driver {
        Driver::Client => Prepared::Client {
            own: prepare(&mut c, own_schema, wl.redo_stress).map_err(err)?,
            hot: match wl.hot_schema_every {
                Some(_) if own_schema != 1 => {
                    Some(prepare(&mut c, 1, wl.redo_stress).map_err(err)?)
                }
                _ => None,
            },
        },
        Driver::Server => Prepared::Server(c.prepare(&batch::call_sql(own_schema)).map_err(err)?),
    };
    token(Some(c.cancel_token()));
    let Some(t0) = seat.arrive() else {
        return Ok(());
    };
    let mut r = seat.run(t0, id);
    let outcome = match &prepared {
        Prepared::Client { own, hot } => client_loop(&mut c, own, hot.as_ref(), &mut r),
        Prepared::Server(call) => batch::server_loop(&mut c, call, &mut r),
    };
    r.tally.finish();
    token(None);
    if let Err(e) = outcome {
        // A halt cancels what is in flight: the end of the run, not an error.
        if !(sh.halt.load(Ordering::Relaxed) && e.code() == Some(&SqlState::QUERY_CANCELED)) {
            return Err(err(e));
        }
    }
    if flush_stats {
        // Publish this backend's pending statistics now, so the final snapshot has them.
        c.batch_execute("SELECT pg_stat_force_next_flush()")
            .map_err(err)?;
    }
    Ok(())
}

/// The client driver: one prepared statement, so one round trip, per operation.
fn client_loop(
    c: &mut Client,
    own: &Stmts,
    hot: Option<&Stmts>,
    r: &mut Run,
) -> Result<(), postgres::Error> {
    let hi = |op: &Op, _: &str, wl: &Workload| (op.lo + wl.work_unit as i64 - 1, wl.redo_stress);
    r.each_op(own, hot, hi, |stmts, op, (hi, redo), pad| {
        Ok(if !op.update {
            c.query_one(&stmts.read, &[&op.lo, &hi])?.get::<_, i64>(0) as u64
        } else if redo == RedoStress::None {
            c.execute(&stmts.update, &[&op.lo, &hi])?
        } else {
            c.execute(&stmts.update, &[&op.lo, &hi, &pad])?
        })
    })
}
