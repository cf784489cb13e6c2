//! The collector of a database run, whichever engine's: it folds the sessions' parts and the
//! sampler's counters into intervals on the grid, and says how the run ended.

use crate::common::workload::shared::Msg;
use crate::error::DbError;
use iogauge_model::db::outcome::{DbInterval, DbOutcome, SessionTotals};
use iogauge_model::db::workload::{Grid, Workload};
use std::time::Instant;

/// Folds the threads' messages into intervals.
pub(crate) struct Collector {
    slots: Vec<iogauge_model::db::workload::Slot>,
    intervals: Vec<Option<DbInterval>>,
    ends: Vec<Option<Instant>>,
    sessions: usize,
    /// Slots below this one are closed (the sampler has read a later slot's counters): their
    /// histograms are kept packed, near their stored size, to the run's end.
    closed: usize,
    /// Threads that reported their end (sessions and the sampler).
    done: usize,
    pub outcome: DbOutcome,
    pub setup_error: Option<DbError>,
}

impl Collector {
    pub fn new(n: usize, grid: &Grid, wl: &Workload) -> Collector {
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

    pub fn take(&mut self, m: Msg) {
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

    pub fn finish(mut self, t0: Option<Instant>) -> DbOutcome {
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
    use crate::common::workload::shared::Part;
    use iogauge_model::db::workload::{Driver, Mode, RedoStress};
    use std::time::Duration;

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
