//! A database run, whichever engine's: N session threads and one sampler thread that all
//! start on a barrier, and the calling thread collecting their parts into intervals on the
//! grid while it watches the stop flag. What an engine does in a session and in its sampler
//! is its [`Sessions`]; PostgreSQL's is in `worker` and `sampler`, MariaDB's in
//! `maria::sessions`.
//!
//! Stopping: the caller's stop flag halts the sessions after their current operation (or
//! batch); one still running 300 ms later is cancelled through the engine
//! ([`Sessions::cancel_all`]). A session or sampler error (the server died, …) halts the run
//! the same way; the partial result comes back with `interrupted` and `error` set, never a
//! hang or a panic.

use crate::common::workload::collect::Collector;
use crate::common::workload::shared::{Gate, Msg, Seat, Shared};
use crate::error::DbError;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::workload::{Grid, Workload};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::Scope;
use std::time::{Duration, Instant, SystemTime};

/// What a run over several processes (MPI ranks) does between its own steps, on the calling
/// thread: `ready` once every session and the sampler of this process are at the start gate
/// (false: another process cannot start, so this one does not either), `tick` every 50 ms
/// while the sessions run (to hear and pass on a stop).
pub struct Sync<'a> {
    pub ready: &'a mut dyn FnMut() -> bool,
    pub tick: &'a mut dyn FnMut(),
}

/// How long a halted session may finish its operation before it is cancelled.
const CANCEL_AFTER: Duration = Duration::from_millis(300);

/// What one engine does in a run; the threads, the gate, the grid and the stop are
/// [`drive`]'s. Each method runs on its own thread, arrives at `sh.gate` once it is ready
/// (setting `started` when the gate let it through) and returns when the run is over for it.
pub(crate) trait Sessions: std::marker::Sync {
    /// Thread names: `{prefix}-session-N`, `{prefix}-sampler`.
    const PREFIX: &'static str;

    /// Session `id`: connect, prepare, arrive, run its operations to the end or a halt.
    fn session(&self, id: usize, seat: Seat<'_>) -> Result<(), DbError>;

    /// The database's counters on the grid and its wait events between (see `Msg::Load`;
    /// the loop is `sampler::sample_on_grid`).
    fn sampler(&self, seat: Seat<'_>) -> Result<(), DbError>;

    /// Cancels every session's running statement, after a halt they did not heed in time.
    fn cancel_all(&self);
}

/// What a run is given, whichever engine runs it: the workload on its grid, the stop flag,
/// what gets t0 when the barrier releases (start the OS samplers there), and the ranks' sync.
pub struct Go<'a, 's> {
    pub wl: &'a Workload,
    pub grid: &'a Grid,
    pub stop: Arc<AtomicBool>,
    pub started: Box<dyn FnOnce(Instant) + Send + 'a>,
    pub sync: Sync<'s>,
}

impl Go<'_, '_> {
    /// The workload and the grid checked before anything connects.
    pub fn validate(&self) -> Result<(), DbError> {
        self.wl.validate().map_err(DbError::Usage)?;
        self.grid.validate().map_err(DbError::Usage)
    }
}

/// Runs `go` with engine `e`'s sessions; `server_version` goes in the outcome.
pub(crate) fn drive<E: Sessions>(
    e: &E,
    go: Go<'_, '_>,
    server_version: String,
) -> Result<DbOutcome, DbError> {
    let Go {
        wl,
        grid,
        stop,
        started: on_start,
        sync,
    } = go;
    let n = wl.sessions() as usize;
    let sh = Shared {
        wl: wl.clone(),
        slots: grid.slots(),
        gate: Gate::new(n + 2),
        halt: AtomicBool::new(false),
        running: AtomicUsize::new(n),
    };
    let (tx, rx) = channel::<Msg>();
    std::thread::scope(|sc| -> Result<DbOutcome, DbError> {
        for id in 0..n {
            let name = format!("{}-session-{id}", E::PREFIX);
            spawn_seated(
                sc,
                name,
                &sh,
                tx.clone(),
                move |seat| e.session(id, seat),
                |started, result| {
                    sh.running.fetch_sub(1, Ordering::SeqCst);
                    Msg::SessionDone { started, result }
                },
            )?;
        }
        let name = format!("{}-sampler", E::PREFIX);
        spawn_seated(
            sc,
            name,
            &sh,
            tx.clone(),
            |seat| e.sampler(seat),
            |started, result| Msg::SamplerDone { started, result },
        )?;
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
                e.cancel_all();
            }
        }
        if let Some(e) = c.setup_error.take() {
            return Err(e);
        }
        Ok(c.finish(t0))
    })
}

/// Starts one of the run's threads, `name`, in `sc`: `work` runs in its seat; an error it
/// returns halts the run; `done` makes the collector's message of whether the gate let it
/// through and how it ended. A thread that cannot start lets the others go, halted.
fn spawn_seated<'scope>(
    sc: &'scope Scope<'scope, '_>,
    name: String,
    sh: &'scope Shared,
    tx: Sender<Msg>,
    work: impl FnOnce(Seat<'_>) -> Result<(), DbError> + Send + 'scope,
    done: impl FnOnce(bool, Result<(), DbError>) -> Msg + Send + 'scope,
) -> Result<(), DbError> {
    let spawned = std::thread::Builder::new()
        .name(name)
        .spawn_scoped(sc, move || {
            let mut started = false;
            let result = work(Seat {
                sh,
                tx: &tx,
                started: &mut started,
            });
            halt_on_error(sh, &result);
            let _ = tx.send(done(started, result));
        });
    spawned.map(|_| ()).map_err(|err| abort(sh, err))
}

/// A thread's error halts the run and calls the gate off for those still waiting at it.
fn halt_on_error(sh: &Shared, result: &Result<(), DbError>) {
    if result.is_err() {
        sh.halt.store(true, Ordering::SeqCst);
        sh.gate.abort();
    }
}

/// A thread that could not start: the others are let go and halted.
fn abort(sh: &Shared, e: std::io::Error) -> DbError {
    sh.gate.abort();
    sh.halt.store(true, Ordering::SeqCst);
    DbError::Thread(e)
}
