//! A database run: preflight (server version, tables, plans), N session threads and one
//! sampler thread that all start on a barrier, and this thread collecting their parts into
//! intervals on the grid while it watches the stop flag.
//!
//! Stopping: the caller's stop flag halts the sessions after their current operation (or
//! batch, with the server driver: at most about 20 ms); one still running 300 ms later is
//! cancelled with its connection's cancel token.
//! A session or sampler error (the server died, …) halts the run the same way; the partial
//! result comes back with `interrupted` and `error` set, never a hang or a panic.

use crate::dsn::{connect, describe, server_err};
use crate::error::PgError;
use crate::sample::aas::SESSION_APP;
use crate::schema::table_name;
use crate::workload::batch;
use crate::workload::sampler::sampler;
use crate::workload::shared::{Gate, Msg, Shared};
use crate::workload::sql::{read_sql, update_sql, SESSION_SETUP};
use crate::workload::worker::session;
use iogauge_model::db::outcome::{DbInterval, DbOutcome, SessionTotals};
use iogauge_model::db::workload::{Driver, Grid, Workload};
use postgres::{Client, Config, NoTls};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// How long a halted session may finish its operation before it is cancelled.
const CANCEL_AFTER: Duration = Duration::from_millis(300);

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
) -> Result<DbOutcome, PgError> {
    let sync = Sync {
        ready: &mut || true,
        tick: &mut || {},
    };
    run_synced(cfg, wl, grid, stop, on_start, sync)
}

/// What a run over several processes (MPI ranks) does between its own steps, on the calling
/// thread: `ready` once every session and the sampler of this process are at the start gate
/// (false: another process cannot start, so this one does not either), `tick` every 50 ms
/// while the sessions run (to hear and pass on a stop).
pub struct Sync<'a> {
    pub ready: &'a mut dyn FnMut() -> bool,
    pub tick: &'a mut dyn FnMut(),
}

/// [`run`], started together with other processes (see [`Sync`]).
pub fn run_synced(
    cfg: &Config,
    wl: &Workload,
    grid: &Grid,
    stop: Arc<AtomicBool>,
    on_start: impl FnOnce(Instant) + Send,
    sync: Sync<'_>,
) -> Result<DbOutcome, PgError> {
    wl.validate().map_err(PgError::Usage)?;
    grid.validate().map_err(PgError::Usage)?;
    let mut admin = connect(cfg)?;
    let (version_num, server_version) = preflight(cfg, &mut admin, wl)?;
    drop(admin);
    let n = wl.sessions() as usize;
    let mut scfg = cfg.clone();
    scfg.application_name(SESSION_APP);
    let sh = Shared {
        cfg: scfg,
        wl: wl.clone(),
        slots: grid.slots(),
        gate: Gate::new(n + 2),
        halt: AtomicBool::new(false),
        running: AtomicUsize::new(n),
        tokens: Mutex::new((0..n).map(|_| None).collect()),
        flush_stats: version_num >= 150000,
    };
    let mut sampler_cfg = cfg.clone();
    sampler_cfg.application_name("iogauge-sampler");
    let (tx, rx) = channel::<Msg>();
    std::thread::scope(|sc| -> Result<DbOutcome, PgError> {
        for id in 0..n {
            let (sh, tx) = (&sh, tx.clone());
            if let Err(e) = std::thread::Builder::new()
                .name(format!("pg-session-{id}"))
                .spawn_scoped(sc, move || session(id, sh, &tx))
            {
                sh.gate.abort();
                sh.halt.store(true, Ordering::SeqCst);
                return Err(PgError::Thread(e));
            }
        }
        {
            let (sh, tx, scfg) = (&sh, tx.clone(), &sampler_cfg);
            if let Err(e) = std::thread::Builder::new()
                .name("pg-sampler".into())
                .spawn_scoped(sc, move || sampler(sh, scfg, version_num, &tx))
            {
                sh.gate.abort();
                sh.halt.store(true, Ordering::SeqCst);
                return Err(PgError::Thread(e));
            }
        }
        drop(tx);
        if sh.gate.wait_others() && !(sync.ready)() {
            sh.gate.abort();
            sh.halt.store(true, Ordering::SeqCst);
        }
        let t0 = sh.gate.arrive();
        let wall = SystemTime::now();
        if let Some(t0) = t0 {
            on_start(t0);
        }
        let mut c = Collector::new(n, grid, wl);
        c.outcome.server_version = server_version;
        c.outcome.started = t0.map(|_| wall);
        let mut stop_seen: Option<Instant> = None;
        let mut cancelled = false;
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(m) => c.take(m),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            (sync.tick)();
            if stop.load(Ordering::Relaxed) && stop_seen.is_none() {
                stop_seen = Some(Instant::now());
                sh.halt.store(true, Ordering::SeqCst);
                c.outcome.interrupted = true;
            }
            if c.outcome.error.is_some() && stop_seen.is_none() {
                stop_seen = Some(Instant::now());
            }
            if !cancelled && stop_seen.is_some_and(|s| s.elapsed() >= CANCEL_AFTER) {
                cancelled = true;
                cancel_all(&sh);
            }
        }
        if let Some(e) = c.setup_error.take() {
            return Err(e);
        }
        Ok(c.finish(t0))
    })
}

/// Cancels every session's running statement (those that already left have no token).
fn cancel_all(sh: &Shared) {
    let tokens: Vec<_> = sh
        .tokens
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .flatten()
        .cloned()
        .collect();
    for t in tokens {
        // A failed cancel means the connection is gone already; the session sees that itself.
        let _ = t.cancel_query(NoTls);
    }
}

/// Checks the server can run the workload: version 14+, the tables exist, and both
/// statements use the key index (no bitmap or sequential scan). For the server driver,
/// creates its procedure in every schema and runs one read through it.
fn preflight(cfg: &Config, c: &mut Client, wl: &Workload) -> Result<(i32, String), PgError> {
    let err = |e: postgres::Error| server_err(cfg, &e);
    let r = c
        .query_one(
            "SELECT current_setting('server_version_num')::int4, current_setting('server_version')",
            &[],
        )
        .map_err(err)?;
    let (num, version): (i32, String) = (r.get(0), r.get(1));
    if num < 140000 {
        return Err(PgError::Usage(format!(
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
            return Err(PgError::Usage(format!(
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
            return Err(PgError::Usage(format!(
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
            return Err(PgError::Layout {
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
            return Err(PgError::Layout {
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

/// Folds the threads' messages into intervals.
struct Collector {
    slots: Vec<iogauge_model::db::workload::Slot>,
    intervals: Vec<Option<DbInterval>>,
    ends: Vec<Option<Instant>>,
    sessions: usize,
    /// Slots below this one are closed (the sampler has read a later slot's counters): their
    /// histograms are kept packed, near their stored size, to the run's end.
    closed: usize,
    /// Threads that reported their end (sessions and the sampler).
    done: usize,
    outcome: DbOutcome,
    setup_error: Option<PgError>,
}

impl Collector {
    fn new(n: usize, grid: &Grid, wl: &Workload) -> Collector {
        let slots = grid.slots();
        Collector {
            intervals: (0..slots.len()).map(|_| None).collect(),
            ends: vec![None; slots.len()],
            slots,
            sessions: n,
            closed: 0,
            done: 0,
            outcome: DbOutcome {
                per_session: vec![0; n],
                session_schema: (0..n as u32).map(|i| wl.schema_of(i)).collect(),
                ..Default::default()
            },
            setup_error: None,
        }
    }

    fn slot(&mut self, i: usize) -> &mut DbInterval {
        let n = self.sessions;
        let s = self.slots[i];
        self.intervals[i].get_or_insert_with(|| DbInterval {
            index: i as u32,
            start_ns: s.start.as_nanos() as u64,
            end_ns: s.end.as_nanos() as u64,
            ramp: s.ramp,
            sessions: SessionTotals {
                per_session: vec![0; n],
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn take(&mut self, m: Msg) {
        match m {
            Msg::Part(p) => {
                let ops = (p.read_lat.len() + p.update_lat.len()) as u64;
                self.outcome.per_session[p.session] += ops;
                let late = p.slot < self.closed;
                let iv = &mut self.slot(p.slot).sessions;
                iv.read_ops += p.read_lat.len() as u64;
                iv.update_ops += p.update_lat.len() as u64;
                iv.rows_read += p.rows_read;
                iv.rows_updated += p.rows_updated;
                iv.per_session[p.session] += ops;
                p.read_lat.iter().for_each(|&ns| iv.read_lat.record(ns));
                p.update_lat.iter().for_each(|&ns| iv.update_lat.record(ns));
                if late {
                    // A late part (an operation that outlasted its slot) unpacked it.
                    iv.pack();
                }
            }
            Msg::Load {
                slot,
                end,
                load,
                aas,
            } => {
                self.ends[slot] = Some(end);
                let iv = self.slot(slot);
                iv.load = *load;
                iv.aas = aas;
                // The slot before this one has had a whole interval for its parts to arrive.
                for i in self.closed..slot {
                    if let Some(iv) = self.intervals[i].as_mut() {
                        iv.sessions.pack();
                    }
                }
                self.closed = self.closed.max(slot);
            }
            Msg::Relations(w) => self.outcome.relations = Some(w),
            Msg::SessionDone { started, result } | Msg::SamplerDone { started, result } => {
                self.done += 1;
                if let Err(e) = result {
                    if !started && self.setup_error.is_none() {
                        self.setup_error = Some(e);
                    } else if self.outcome.error.is_none() {
                        self.outcome.error = Some(e.to_string());
                        self.outcome.interrupted = true;
                    }
                }
            }
        }
    }

    fn finish(mut self, t0: Option<Instant>) -> DbOutcome {
        if self.done < self.sessions + 1 && self.outcome.error.is_none() {
            self.outcome.error = Some("a session or sampler thread ended without reporting".into());
            self.outcome.interrupted = true;
        }
        let last = self.intervals.iter().rposition(|i| i.is_some());
        let planned = self.intervals.len();
        if let (Some(last), Some(t0)) = (last, t0) {
            for i in 0..=last {
                let end = self.ends[i];
                let iv = self.slot(i);
                if let Some(end) = end {
                    iv.end_ns = end.saturating_duration_since(t0).as_nanos() as u64;
                }
            }
            if last + 1 < planned {
                self.outcome.interrupted = true;
            }
            self.outcome.intervals = self
                .intervals
                .into_iter()
                .take(last + 1)
                .flatten()
                .collect();
        }
        self.outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::shared::Part;
    use iogauge_model::db::workload::{Mode, RedoStress};

    fn part(slot: usize, reads: &[u64]) -> Msg {
        Msg::Part(Part {
            session: 0,
            slot,
            read_lat: reads.to_vec(),
            update_lat: vec![9_000],
            rows_read: reads.len() as u64,
            rows_updated: 1,
        })
    }

    fn load(slot: usize) -> Msg {
        Msg::Load {
            slot,
            end: Instant::now(),
            load: Box::default(),
            aas: Default::default(),
        }
    }

    /// #25 row 5: a closed slot's histograms are kept packed (near their stored size), a
    /// late part unpacks one only to record and it is packed again; nothing is lost.
    #[test]
    fn closed_slots_are_kept_packed() {
        let wl = Workload {
            first_session: 0,
            mode: Mode::ReadersWriters {
                readers: 1,
                writers: 0,
            },
            work_unit: 8,
            redo_stress: RedoStress::None,
            hot_schema_every: None,
            think_time: None,
            think_time_max: None,
            hotspot: None,
            schemas: 1,
            blocks_per_schema: 100,
            seed: 1,
            driver: Driver::Server,
        };
        let s = Duration::from_secs;
        let grid = Grid {
            interval: s(1),
            ramp: s(0),
            time: s(4),
        };
        let mut c = Collector::new(1, &grid, &wl);
        for m in [
            part(0, &[1_000, 2_000]),
            load(0),
            part(1, &[3_000]),
            load(1),
        ] {
            c.take(m);
        }
        let lat = |c: &Collector, i: usize| c.intervals[i].as_ref().unwrap().sessions.clone();
        assert!(lat(&c, 0).read_lat.is_packed() && lat(&c, 0).update_lat.is_packed());
        assert!(
            !lat(&c, 1).read_lat.is_packed(),
            "still open for late parts"
        );
        c.take(part(0, &[4_000]));
        let first = lat(&c, 0);
        assert!(first.read_lat.is_packed(), "packed again after a late part");
        assert_eq!((first.read_ops, first.read_lat.count()), (3, 3));
        assert!(first.read_lat.max_ns().abs_diff(4_000) <= 4, "within 0.1%");
    }
}
