//! What a database run returns: per interval, what the sessions did, the database's load
//! profile and its wait events; per session, how many operations it did.

use crate::db::aas::Aas;
use crate::db::profile::{LoadDelta, LoadRates};
use crate::db::relations::RelationWindow;
use iogauge_stats::LatHist;
use std::ops::AddAssign;
use std::time::SystemTime;

/// The sessions' work in one interval (or summed over several).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionTotals {
    pub read_ops: u64,
    pub update_ops: u64,
    pub rows_read: u64,
    pub rows_updated: u64,
    /// Per-operation latency: one read of `work_unit` rows through the index. Server
    /// driver: measured in the database (µs resolution); client driver: by the client, the
    /// round trip included.
    pub read_lat: LatHist,
    /// Per-operation latency: one autocommit update of `work_unit` rows, commit included
    /// (measured as for reads).
    pub update_lat: LatHist,
    /// Operations per session, indexed by session number.
    pub per_session: Vec<u64>,
}

impl SessionTotals {
    pub fn ops(&self) -> u64 {
        self.read_ops + self.update_ops
    }

    /// Puts both latency histograms at rest (`LatHist::pack`): for a closed interval kept to
    /// the end of a run.
    pub fn pack(&mut self) {
        self.read_lat.pack();
        self.update_lat.pack();
    }
}

impl AddAssign<&SessionTotals> for SessionTotals {
    fn add_assign(&mut self, o: &SessionTotals) {
        self.read_ops += o.read_ops;
        self.update_ops += o.update_ops;
        self.rows_read += o.rows_read;
        self.rows_updated += o.rows_updated;
        self.read_lat += &o.read_lat;
        self.update_lat += &o.update_lat;
        if self.per_session.len() < o.per_session.len() {
            self.per_session.resize(o.per_session.len(), 0);
        }
        for (a, b) in self.per_session.iter_mut().zip(&o.per_session) {
            *a += b;
        }
    }
}

/// One interval of the grid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DbInterval {
    /// Position in the run, ramp intervals first.
    pub index: u32,
    /// Offsets from t0 (barrier release). The last interval ends when the sessions have
    /// finished and the final counters were read, so it includes the drain.
    pub start_ns: u64,
    pub end_ns: u64,
    pub ramp: bool,
    pub sessions: SessionTotals,
    /// Raw counter deltas over the interval.
    pub load: LoadDelta,
    pub aas: Aas,
}

impl DbInterval {
    pub fn secs(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    pub fn rates(&self) -> LoadRates {
        self.load.rates(self.secs())
    }
}

/// The measured window (ramp excluded) as one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measured {
    pub secs: f64,
    pub sessions: SessionTotals,
    pub load: LoadDelta,
    pub aas: Aas,
}

impl Measured {
    pub fn rates(&self) -> LoadRates {
        self.load.rates(self.secs)
    }
}

/// A finished (or interrupted) run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DbOutcome {
    pub intervals: Vec<DbInterval>,
    /// Operations per session over the whole run (ramp included), indexed by session.
    pub per_session: Vec<u64>,
    /// Each session's own schema (1-based).
    pub session_schema: Vec<u32>,
    /// Stopped before the planned end: by the stop flag or by an error.
    pub interrupted: bool,
    /// Why the run ended early, when it was not the stop flag (the server died, …).
    pub error: Option<String>,
    /// `SHOW server_version`.
    pub server_version: String,
    /// Wall-clock time of t0.
    pub started: Option<SystemTime>,
    /// The statio counters per relation at the measured window's start and end; `None`
    /// when the run ended before the window began.
    pub relations: Option<RelationWindow>,
}

impl DbOutcome {
    /// Totals over the measured intervals.
    pub fn measured(&self) -> Measured {
        let mut m = Measured::default();
        let ivs: Vec<&DbInterval> = self.intervals.iter().filter(|i| !i.ramp).collect();
        for iv in &ivs {
            m.secs += iv.secs();
            m.sessions += &iv.sessions;
            m.load += &iv.load;
        }
        m.aas = Aas::combine(ivs.iter().map(|i| &i.aas));
        m
    }

    /// Totals over every interval, ramp included.
    pub fn all_sessions(&self) -> SessionTotals {
        let mut t = SessionTotals::default();
        for iv in &self.intervals {
            t += &iv.sessions;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(index: u32, ramp: bool, reads: u64, per: Vec<u64>) -> DbInterval {
        let mut s = SessionTotals {
            read_ops: reads,
            rows_read: reads * 4,
            per_session: per,
            ..Default::default()
        };
        for _ in 0..reads {
            s.read_lat.record(1_000);
        }
        DbInterval {
            index,
            start_ns: index as u64 * 1_000_000_000,
            end_ns: (index as u64 + 1) * 1_000_000_000,
            ramp,
            sessions: s,
            load: LoadDelta {
                blks_read: reads,
                ..Default::default()
            },
            aas: Aas::default(),
        }
    }

    #[test]
    fn measured_skips_ramp_and_adds_per_session_counts() {
        let o = DbOutcome {
            intervals: vec![
                iv(0, true, 5, vec![2, 3]),
                iv(1, false, 4, vec![1, 3]),
                iv(2, false, 6, vec![6]),
            ],
            ..Default::default()
        };
        let m = o.measured();
        assert_eq!(m.secs, 2.0);
        assert_eq!(m.sessions.read_ops, 10);
        assert_eq!(m.sessions.read_lat.count(), 10);
        assert_eq!(m.sessions.per_session, [7, 3]);
        assert_eq!(m.rates().physical_reads_s, 5.0);
        let all = o.all_sessions();
        assert_eq!((all.ops(), all.per_session.iter().sum::<u64>()), (15, 15));
    }
}
