//! `db run` over ranks, what goes up the tree at the end: a subtree's intervals merged by
//! index (the sessions' counts and histograms added, each rank's sessions at their place in
//! the job's numbering; the servers' load and wait events added when each rank had its own
//! server, else only rank 0's, whose sampler saw the one server whole, over rank 0's windows)
//! and one row per rank.

use crate::ranks::{join_rows, lost_rows, Bundle, RankRow};
use anyhow::anyhow;
use iogauge_model::db::aas::Aas;
use iogauge_model::db::outcome::{DbInterval, DbOutcome, SessionTotals};
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::db::report::DbSummary;
use iogauge_stats::{HistError, LatHist};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;

/// One interval as it travels (histograms encoded).
#[derive(Serialize, Deserialize)]
struct WireDb {
    index: u32,
    start_ns: u64,
    end_ns: u64,
    ramp: bool,
    read_ops: u64,
    update_ops: u64,
    rows_read: u64,
    rows_updated: u64,
    read_lat: Vec<u8>,
    update_lat: Vec<u8>,
    per_session: Vec<u64>,
    load: LoadDelta,
    aas: Aas,
}

impl WireDb {
    fn of(iv: &DbInterval) -> Result<WireDb, HistError> {
        let s = &iv.sessions;
        Ok(WireDb {
            index: iv.index,
            start_ns: iv.start_ns,
            end_ns: iv.end_ns,
            ramp: iv.ramp,
            read_ops: s.read_ops,
            update_ops: s.update_ops,
            rows_read: s.rows_read,
            rows_updated: s.rows_updated,
            read_lat: s.read_lat.encode_wire()?,
            update_lat: s.update_lat.encode_wire()?,
            per_session: s.per_session.clone(),
            load: iv.load.clone(),
            aas: iv.aas.clone(),
        })
    }

    fn interval(self) -> Result<DbInterval, HistError> {
        Ok(DbInterval {
            index: self.index,
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            ramp: self.ramp,
            sessions: SessionTotals {
                read_ops: self.read_ops,
                update_ops: self.update_ops,
                rows_read: self.rows_read,
                rows_updated: self.rows_updated,
                read_lat: LatHist::decode(&self.read_lat)?,
                update_lat: LatHist::decode(&self.update_lat)?,
                per_session: self.per_session,
            },
            load: self.load,
            aas: self.aas,
        })
    }
}

/// One rank's row.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct DbRow {
    pub rank: u32,
    pub host: String,
    pub location: String,
    pub first_session: u32,
    pub sessions: u32,
    /// Where its sessions sit in the job's numbering: its first session on a server the ranks
    /// share; after the ranks before it, each a whole workload, on servers of their own.
    pub offset: u32,
    /// Its sessions' operations over the run, and their schemas.
    pub per_session: Vec<u64>,
    pub session_schema: Vec<u32>,
    pub interrupted: bool,
    pub error: Option<String>,
    pub summary: Option<DbSummary>,
    /// Bytes it sent on its way to rank 0 (live beats, then its part).
    pub sent: u64,
}

impl RankRow for DbRow {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn sent_mut(&mut self) -> &mut u64 {
        &mut self.sent
    }

    fn lost(rank: u32, why: String) -> DbRow {
        DbRow {
            rank,
            interrupted: true,
            error: Some(why),
            ..DbRow::default()
        }
    }
}

/// A subtree's part.
#[derive(Default, Serialize, Deserialize)]
pub(super) struct DbPart {
    intervals: Vec<WireDb>,
    /// Decoded while this rank folds its children in (encoded by `seal`).
    #[serde(skip)]
    open: Option<BTreeMap<u32, DbInterval>>,
    pub rows: Vec<DbRow>,
    /// Whether its intervals carry a server's load (rank 0's part, or every part when each
    /// rank has a server of its own). A part without stretches no window it is folded into:
    /// the one server's load profile is rank 0's sampler's counters over rank 0's windows,
    /// and a window widened by another rank's clock would understate its rates.
    load_kept: bool,
}

impl DbPart {
    /// One rank's part: its intervals with its sessions moved to `row.offset` of the job's
    /// numbering, and without the server's load and wait events unless `keep_load` (rank 0,
    /// or every rank on a server of its own).
    pub fn own(row: DbRow, intervals: Vec<DbInterval>, keep_load: bool) -> DbPart {
        let open = intervals
            .into_iter()
            .map(|mut iv| {
                let mut at = vec![0; row.offset as usize];
                at.append(&mut iv.sessions.per_session);
                iv.sessions.per_session = at;
                if !keep_load {
                    iv.load = LoadDelta::default();
                    iv.aas = Aas::default();
                }
                (iv.index, iv)
            })
            .collect();
        DbPart {
            intervals: Vec::new(),
            open: Some(open),
            rows: vec![row],
            load_kept: keep_load,
        }
    }

    fn decoded(&mut self) -> anyhow::Result<BTreeMap<u32, DbInterval>> {
        match self.open.take() {
            Some(o) => Ok(o),
            None => std::mem::take(&mut self.intervals)
                .into_iter()
                .map(|w| w.interval().map(|iv| (iv.index, iv)))
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow!("a rank's part: {e}")),
        }
    }

    /// Rank 0, the tree folded: the job's outcome. Rank 0's own outcome gives the server's
    /// version, the start and (one server shared) the relations' counters.
    pub fn outcome(
        &mut self,
        own: Option<&DbOutcome>,
        own_servers: bool,
    ) -> anyhow::Result<DbOutcome> {
        let mut out = DbOutcome {
            server_version: own.map(|o| o.server_version.clone()).unwrap_or_default(),
            started: own.and_then(|o| o.started),
            // Rank 0's sampler saw the one server whole; servers of their own are not merged.
            relations: own
                .filter(|_| !own_servers)
                .and_then(|o| o.relations.clone()),
            ..DbOutcome::default()
        };
        out.intervals = self.decoded()?.into_values().collect();
        for r in &self.rows {
            out.interrupted |= r.interrupted;
            if out.error.is_none() {
                out.error = r.error.clone();
            }
            let end = r.offset as usize + r.per_session.len();
            if out.per_session.len() < end {
                out.per_session.resize(end, 0);
                out.session_schema.resize(end, 0);
            }
            let at = r.offset as usize;
            out.per_session[at..end].copy_from_slice(&r.per_session);
            let schemas = r.session_schema.len().min(end - at);
            out.session_schema[at..at + schemas].copy_from_slice(&r.session_schema[..schemas]);
        }
        Ok(out)
    }
}

impl Bundle for DbPart {
    fn absorb(&mut self, mut child: DbPart, bytes: u64) -> anyhow::Result<()> {
        let mut mine = self.decoded()?;
        for (i, iv) in child.decoded()? {
            match mine.get_mut(&i) {
                None => {
                    mine.insert(i, iv);
                }
                Some(acc) => {
                    acc.sessions += &iv.sessions;
                    if child.load_kept {
                        acc.start_ns = acc.start_ns.min(iv.start_ns);
                        acc.end_ns = acc.end_ns.max(iv.end_ns);
                    }
                    acc.load += &iv.load;
                    acc.aas.add_server(&iv.aas);
                }
            }
        }
        self.open = Some(mine);
        join_rows(&mut self.rows, std::mem::take(&mut child.rows), bytes);
        Ok(())
    }

    fn lost(lost: Range<u32>, heard: (u64, [u64; 2])) -> DbPart {
        DbPart {
            rows: lost_rows(lost, heard),
            ..DbPart::default()
        }
    }

    fn seal(&mut self) -> anyhow::Result<()> {
        if let Some(open) = self.open.take() {
            self.intervals = open
                .values()
                .map(WireDb::of)
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow!("this rank's part: {e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranks::{fold, Shape};

    /// Interval `index` of a rank whose clock is `skew_ms` behind rank 0's.
    fn interval(index: u32, sessions: u32, ops: u64, load: u64, skew_ms: u64) -> DbInterval {
        let mut s = SessionTotals {
            read_ops: ops * u64::from(sessions),
            per_session: vec![ops; sessions as usize],
            ..SessionTotals::default()
        };
        for k in 0..ops * u64::from(sessions) {
            s.read_lat.record(50_000 + k * 977 % 400_000);
        }
        DbInterval {
            index,
            start_ns: u64::from(index) * 1_000_000_000 + skew_ms * 1_000_000,
            end_ns: u64::from(index + 1) * 1_000_000_000 + skew_ms * 1_000_000,
            ramp: false,
            sessions: s,
            load: LoadDelta {
                blks_read: load,
                ..LoadDelta::default()
            },
            aas: Aas::default(),
        }
    }

    /// 5 ranks of 3 sessions each: one server shared (rank r's sessions 3r..3r+3, only rank
    /// 0's load kept) and servers of their own (loads added), rank 2 failed without
    /// intervals: every session at its number, the histograms those of all ranks' sessions.
    /// Rank r's windows start r × 10 ms after rank 0's: one server's load is rank 0's counters
    /// over rank 0's windows (CI once saw a shared server's job rate 2.6% under rank 0's when
    /// the windows were widened); servers of their own span every rank's.
    #[test]
    fn sessions_keep_their_numbers_up_the_tree() {
        for own_servers in [false, true] {
            let parts = (0..5u32)
                .map(|r| {
                    let row = DbRow {
                        rank: r,
                        sessions: 3,
                        first_session: if own_servers { 0 } else { 3 * r },
                        offset: 3 * r,
                        per_session: vec![10 + u64::from(r); 3],
                        session_schema: vec![1, 2, 3],
                        error: (r == 2).then(|| "gone".to_string()),
                        ..DbRow::default()
                    };
                    let ivs = match r {
                        2 => Vec::new(),
                        r => (0..4)
                            .map(|i| interval(i, 3, 10 + u64::from(r), 100, 10 * u64::from(r)))
                            .collect(),
                    };
                    DbPart::own(row, ivs, own_servers || r == 0)
                })
                .collect();
            let mut whole = fold(Shape::Binomial, parts);
            let out = whole.outcome(None, own_servers).unwrap();
            assert_eq!(out.intervals.len(), 4);
            let iv = &out.intervals[1];
            assert_eq!(
                iv.sessions.per_session,
                [10, 10, 10, 11, 11, 11, 0, 0, 0, 13, 13, 13, 14, 14, 14]
            );
            let mut flat = LatHist::new();
            for r in [0u64, 1, 3, 4] {
                flat += &interval(1, 3, 10 + r, 0, 0).sessions.read_lat;
            }
            assert_eq!(
                iv.sessions.read_lat.encode().unwrap(),
                flat.encode().unwrap()
            );
            let load = if own_servers { 400 } else { 100 };
            assert_eq!(iv.load.blks_read, load, "own servers: {own_servers}");
            let end_ms = if own_servers { 2_040 } else { 2_000 };
            assert_eq!(
                (iv.start_ns, iv.end_ns),
                (1_000_000_000, end_ms * 1_000_000),
                "own servers: {own_servers}"
            );
            let secs = (end_ms - 1_000) as f64 / 1e3;
            assert_eq!(iv.rates().physical_reads_s, load as f64 / secs);
            assert_eq!(out.per_session.len(), 15);
            assert_eq!(out.error.as_deref(), Some("gone"));
        }
    }
}
