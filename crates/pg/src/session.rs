//! One database session: a thread with its own connection that picks random keys and reads or
//! updates `work_unit` rows through the key index, and hands its latencies to the collector
//! at each interval boundary. The client driver lives here (one statement per operation);
//! the server driver, batches run by a procedure in the database, in `batch`.

use crate::batch;
use crate::dsn::{connect, describe};
use crate::error::{error_text, PgError};
use crate::ops::OpGen;
use crate::schema::{table_name, PAD_COLS, PAD_LEN};
use iogauge_model::db::aas::Aas;
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::db::workload::{Driver, RedoStress, Slot, Workload};
use postgres::error::SqlState;
use postgres::{CancelToken, Client, Config, Statement};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Session settings that keep every read a single-block index read, also on a server whose
/// configuration iogauge does not control (the planner would otherwise pick a bitmap or a
/// sequential scan for a large work unit).
pub(crate) const SESSION_SETUP: &str = "SET enable_seqscan = off; SET enable_bitmapscan = off; \
     SET effective_io_concurrency = 0";

/// The read: the sum makes the heap visit necessary (no index-only scan).
pub(crate) fn read_sql(schema: u32, lo: &str, hi: &str) -> String {
    format!(
        "SELECT count(*), sum(scratch) FROM {} WHERE key BETWEEN {lo} AND {hi}",
        table_name(schema)
    )
}

/// The update: always changes `scratch` (a same-value update logs no real change), plus
/// padding per `redo`, set to `pad`.
pub(crate) fn update_sql(schema: u32, redo: RedoStress, lo: &str, hi: &str, pad: &str) -> String {
    let cols = pad_cols(redo);
    let mut set = String::from("scratch = scratch + 1");
    for i in 1..=cols {
        set.push_str(&format!(", p{i} = {pad}"));
    }
    format!(
        "UPDATE {} SET {set} WHERE key BETWEEN {lo} AND {hi}",
        table_name(schema)
    )
}

/// Padding columns an update sets.
pub(crate) fn pad_cols(redo: RedoStress) -> usize {
    match redo {
        RedoStress::None => 0,
        RedoStress::Lite => 1,
        RedoStress::Heavy => PAD_COLS,
    }
}

/// A barrier that can be called off: every party arrives; the last one stamps t0 and lets
/// all go. A party that fails before arriving aborts it, and everyone waiting gets `None`.
pub(crate) struct Gate {
    parties: usize,
    state: Mutex<(usize, bool, Option<Instant>)>,
    cv: Condvar,
}

impl Gate {
    pub fn new(parties: usize) -> Gate {
        Gate {
            parties,
            state: Mutex::new((0, false, None)),
            cv: Condvar::new(),
        }
    }

    pub fn arrive(&self) -> Option<Instant> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.0 += 1;
        if s.0 == self.parties && !s.1 {
            s.2 = Some(Instant::now());
            self.cv.notify_all();
        }
        while s.2.is_none() && !s.1 {
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        if s.1 {
            None
        } else {
            s.2
        }
    }

    pub fn abort(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.2.is_none() {
            s.1 = true;
            self.cv.notify_all();
        }
    }
}

/// What sessions and the sampler share.
pub(crate) struct Shared {
    pub cfg: Config,
    pub wl: Workload,
    pub slots: Vec<Slot>,
    pub gate: Gate,
    /// Set on the stop flag or the first error: sessions stop after their current operation.
    pub halt: AtomicBool,
    /// Sessions not yet finished.
    pub running: AtomicUsize,
    pub tokens: Mutex<Vec<Option<CancelToken>>>,
    /// PostgreSQL 15+: sessions flush their statistics before they leave.
    pub flush_stats: bool,
}

/// A session's work in one interval.
pub(crate) struct Part {
    pub session: usize,
    pub slot: usize,
    pub read_lat: Vec<u64>,
    pub update_lat: Vec<u64>,
    pub rows_read: u64,
    pub rows_updated: u64,
}

pub(crate) enum Msg {
    Part(Part),
    SessionDone {
        started: bool,
        result: Result<(), PgError>,
    },
    Load {
        slot: usize,
        end: Instant,
        load: LoadDelta,
        aas: Aas,
    },
    SamplerDone {
        started: bool,
        result: Result<(), PgError>,
    },
}

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
pub(crate) fn run_error(cfg: &Config, who: &str, e: &postgres::Error) -> PgError {
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
    PgError::Server {
        server: describe(cfg),
        why,
    }
}

/// Runs session `id` to its end and reports it; never panics on server trouble.
pub(crate) fn session(id: usize, sh: &Shared, tx: &Sender<Msg>) {
    let mut started = false;
    let result = run(id, sh, tx, &mut started);
    if result.is_err() {
        sh.halt.store(true, Ordering::SeqCst);
        sh.gate.abort();
    }
    sh.running.fetch_sub(1, Ordering::SeqCst);
    let _ = tx.send(Msg::SessionDone { started, result });
}

/// What a session's loop works with, either driver.
pub(crate) struct Run<'a> {
    pub sh: &'a Shared,
    pub t0: Instant,
    /// The end of the last slot: no operation starts after it.
    pub deadline: Instant,
    pub ops: OpGen,
    pub tally: Tally<'a>,
}

impl Run<'_> {
    /// Halted, or past the end of the run.
    pub fn over(&self) -> bool {
        self.sh.halt.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }

    /// The workload's think time, cut short by the end of the run or a halt.
    pub fn think(&self) {
        if let Some(think) = self.sh.wl.think_time {
            let until = (Instant::now() + think).min(self.deadline);
            while !self.sh.halt.load(Ordering::Relaxed) && Instant::now() < until {
                std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
            }
        }
    }
}

enum Prepared {
    Client { own: Stmts, hot: Option<Stmts> },
    Server(Statement),
}

fn run(id: usize, sh: &Shared, tx: &Sender<Msg>, started: &mut bool) -> Result<(), PgError> {
    let wl = &sh.wl;
    let who = format!("session {id}");
    let mut c = connect(&sh.cfg)?;
    let err = |e: postgres::Error| run_error(&sh.cfg, &who, &e);
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
    sh.tokens.lock().unwrap_or_else(|p| p.into_inner())[id] = Some(c.cancel_token());
    let Some(t0) = sh.gate.arrive() else {
        return Ok(());
    };
    *started = true;
    let mut r = Run {
        sh,
        t0,
        deadline: t0 + sh.slots.last().map_or(Duration::ZERO, |s| s.end),
        ops: OpGen::new(wl, id as u32),
        tally: Tally::new(id, &sh.slots, tx),
    };
    let outcome = match &prepared {
        Prepared::Client { own, hot } => client_loop(&mut c, own, hot.as_ref(), &mut r),
        Prepared::Server(call) => batch::server_loop(&mut c, call, &mut r),
    };
    r.tally.finish();
    sh.tokens.lock().unwrap_or_else(|p| p.into_inner())[id] = None;
    if let Err(e) = outcome {
        // A halt cancels what is in flight: the end of the run, not an error.
        if !(sh.halt.load(Ordering::Relaxed) && e.code() == Some(&SqlState::QUERY_CANCELED)) {
            return Err(err(e));
        }
    }
    if sh.flush_stats {
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
    let wl = &r.sh.wl;
    let mut pad = String::with_capacity(PAD_LEN);
    while !r.over() {
        let op = r.ops.next(&mut pad);
        let stmts = match hot {
            Some(h) if op.hot => h,
            _ => own,
        };
        let hi = op.lo + wl.work_unit as i64 - 1;
        let t = Instant::now();
        let rows = if !op.update {
            c.query_one(&stmts.read, &[&op.lo, &hi])?.get::<_, i64>(0) as u64
        } else if wl.redo_stress == RedoStress::None {
            c.execute(&stmts.update, &[&op.lo, &hi])?
        } else {
            c.execute(&stmts.update, &[&op.lo, &hi, &pad])?
        };
        let done = Instant::now();
        let ns = (done - t).as_nanos() as u64;
        r.tally.record(done - r.t0, op.update, ns, rows);
        r.think();
    }
    Ok(())
}

/// A session's figures cut on the grid: an operation counts in the slot its completion
/// falls in; a slot's part goes to the collector when the session moves past it.
pub(crate) struct Tally<'a> {
    slots: &'a [Slot],
    tx: &'a Sender<Msg>,
    slot: usize,
    part: Part,
}

impl<'a> Tally<'a> {
    pub fn new(id: usize, slots: &'a [Slot], tx: &'a Sender<Msg>) -> Tally<'a> {
        Tally {
            slots,
            tx,
            slot: 0,
            part: Part::new(id, 0),
        }
    }

    /// One operation that completed `rel` after t0, took `ns` and touched `rows`.
    /// Completions must come in time order.
    pub fn record(&mut self, rel: Duration, update: bool, ns: u64, rows: u64) {
        while self.slot + 1 < self.slots.len() && rel >= self.slots[self.slot].end {
            let next = Part::new(self.part.session, self.slot + 1);
            let _ = self
                .tx
                .send(Msg::Part(std::mem::replace(&mut self.part, next)));
            self.slot += 1;
        }
        let p = &mut self.part;
        if update {
            p.update_lat.push(ns);
            p.rows_updated += rows;
        } else {
            p.read_lat.push(ns);
            p.rows_read += rows;
        }
    }

    /// Sends the last part.
    pub fn finish(&mut self) {
        let last = Part::new(self.part.session, self.slot);
        let _ = self
            .tx
            .send(Msg::Part(std::mem::replace(&mut self.part, last)));
    }
}

impl Part {
    fn new(session: usize, slot: usize) -> Part {
        Part {
            session,
            slot,
            read_lat: Vec::new(),
            update_lat: Vec::new(),
            rows_read: 0,
            rows_updated: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_by_redo_stress() {
        assert_eq!(
            read_sql(2, "$1", "$2"),
            "SELECT count(*), sum(scratch) FROM iogauge_2.cf1 WHERE key BETWEEN $1 AND $2"
        );
        let none = update_sql(1, RedoStress::None, "$1", "$2", "$3");
        assert!(none.contains("SET scratch = scratch + 1 WHERE"), "{none}");
        let lite = update_sql(1, RedoStress::Lite, "$1", "$2", "$3");
        assert!(lite.contains("p1 = $3") && !lite.contains("p2"), "{lite}");
        let heavy = update_sql(1, RedoStress::Heavy, "$1", "$2", "$3");
        assert!(heavy.contains("p5 = $3"), "{heavy}");
    }

    #[test]
    fn gate_releases_all_or_none() {
        let g = std::sync::Arc::new(Gate::new(3));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let g = g.clone();
                std::thread::spawn(move || g.arrive())
            })
            .collect();
        let t0 = g.arrive();
        assert!(t0.is_some());
        for h in hs {
            assert_eq!(h.join().unwrap(), t0);
        }
        let g = std::sync::Arc::new(Gate::new(3));
        let g2 = g.clone();
        let h = std::thread::spawn(move || g2.arrive());
        g.abort();
        assert_eq!(h.join().unwrap(), None);
        assert_eq!(g.arrive(), None);
    }
}
