//! What the sessions, the sampler and the collector share, whichever engine runs them: the
//! start gate, the run's common state, the messages to the collector, and a session's loop
//! state ([`Run`], [`Tally`]) that every driver (PostgreSQL's client in `worker` and server
//! in `batch`, MariaDB's in `maria::sessions`) works with.

use crate::common::schema::PAD_LEN;
use crate::common::workload::ops::{Op, OpGen};
use crate::error::DbError;
use iogauge_model::db::aas::Aas;
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::db::workload::{Slot, Workload};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

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
        }
        // Wakes the releasers, and a caller of `wait_others` once all but it are here.
        self.cv.notify_all();
        while s.2.is_none() && !s.1 {
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        if s.1 {
            None
        } else {
            s.2
        }
    }

    /// Waits until every party but the caller has arrived; false when the gate was aborted.
    pub fn wait_others(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while s.0 + 1 < self.parties && !s.1 {
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        !s.1
    }

    pub fn abort(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.2.is_none() {
            s.1 = true;
            self.cv.notify_all();
        }
    }
}

/// What sessions and the sampler share (what is an engine's own lives in its
/// [`Sessions`](crate::common::workload::drive::Sessions)).
pub(crate) struct Shared {
    pub wl: Workload,
    pub slots: Vec<Slot>,
    pub gate: Gate,
    /// Set on the stop flag or the first error: sessions stop after their current operation.
    pub halt: AtomicBool,
    /// Sessions not yet finished.
    pub running: AtomicUsize,
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
        result: Result<(), DbError>,
    },
    Load {
        slot: usize,
        end: Instant,
        /// Boxed: the counters are large beside the other messages.
        load: Box<LoadDelta>,
        aas: Aas,
    },
    /// The counters per relation over the measured window (sent once, before `SamplerDone`).
    Relations(iogauge_model::db::relations::RelationWindow),
    SamplerDone {
        started: bool,
        result: Result<(), DbError>,
    },
}

/// A thread's seat in a run: what the threads share, where its parts go, and whether the
/// gate let it through (`started`, for the collector).
pub(crate) struct Seat<'a> {
    pub sh: &'a Shared,
    pub tx: &'a Sender<Msg>,
    pub started: &'a mut bool,
}

impl<'a> Seat<'a> {
    /// Arrives at the start gate once ready: t0, or `None` when the run was called off.
    pub fn arrive(&mut self) -> Option<Instant> {
        let t0 = self.sh.gate.arrive()?;
        *self.started = true;
        Some(t0)
    }

    /// Session `id`'s run from `t0`: its operations, deadline and tally.
    pub fn run(&self, t0: Instant, id: usize) -> Run<'a> {
        Run::new(self.sh, t0, id, self.tx)
    }
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

impl<'a> Run<'a> {
    /// Session `id`'s loop state once the gate let it go at `t0`: its operations, and its
    /// figures cut on the grid, to the end of the last slot.
    pub fn new(sh: &'a Shared, t0: Instant, id: usize, tx: &'a Sender<Msg>) -> Run<'a> {
        Run {
            sh,
            t0,
            deadline: t0 + sh.slots.last().map_or(Duration::ZERO, |s| s.end),
            ops: OpGen::new(&sh.wl, id as u32),
            tally: Tally::new(id, &sh.slots, tx),
        }
    }

    /// The session's operations to the end or a halt, timed and recorded, each followed by
    /// the think time. `args` makes an operation's parameters (from the operation, its
    /// update padding and the workload) before its clock starts; `exec` runs it on `own`
    /// statements, or `hot`'s for an operation on the hot schema (with the padding), and
    /// says how many rows it touched.
    pub fn each_op<S, P, E>(
        &mut self,
        own: &S,
        hot: Option<&S>,
        mut args: impl FnMut(&Op, &str, &Workload) -> P,
        mut exec: impl FnMut(&S, &Op, P, &str) -> Result<u64, E>,
    ) -> Result<(), E> {
        let sh = self.sh;
        let mut pad = String::with_capacity(PAD_LEN);
        while !self.over() {
            let op = self.ops.next(&mut pad);
            let stmts = match hot {
                Some(h) if op.hot => h,
                _ => own,
            };
            let p = args(&op, &pad, &sh.wl);
            let t = Instant::now();
            let rows = exec(stmts, &op, p, &pad)?;
            let done = Instant::now();
            let ns = (done - t).as_nanos() as u64;
            self.tally.record(done - self.t0, op.update, ns, rows);
            self.think();
        }
        Ok(())
    }

    /// Halted, or past the end of the run.
    pub fn over(&self) -> bool {
        self.sh.halt.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }

    /// The workload's think time (fixed, or drawn from its range), cut short by the end of
    /// the run or a halt.
    pub fn think(&mut self) {
        if let Some(think) = self.ops.pause() {
            let until = (Instant::now() + think).min(self.deadline);
            while !self.sh.halt.load(Ordering::Relaxed) && Instant::now() < until {
                std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
            }
        }
    }
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
