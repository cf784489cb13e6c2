//! Reads per relation over a db run's measured window: PostgreSQL's `pg_statio_user_tables`
//! and `pg_statio_user_indexes`, the analogue of Oracle's per-file I/O statistics
//! (`V$FILESTAT`), read once at the window's start and once at its end (never per interval,
//! so the sampler's cost per interval is unchanged), stored as rates.
//!
//! What PostgreSQL counts per relation, and so what is here: blocks *read* (asked of the OS:
//! a page-cache hit counts too, as for `blks_read`) and blocks *hit* (found in shared
//! buffers), for a table's heap (`heap_blks_*`), each index (`idx_blks_*`) and a table's
//! TOAST heap and index (`toast_blks_*`, `tidx_blks_*`). What it does not count per relation,
//! in any version up to 18: blocks *written*. `pg_stat_io` (16+) splits writes by process
//! type and object class (relation, WAL), not by relation, so no per-relation writes are
//! stored here; the load profile has the buffers written.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a relation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RelKind {
    Table,
    Index,
    /// A table's TOAST data (`toast_blks_*`) and its index (`tidx_blks_*`).
    Toast,
}

/// One relation's cumulative counters at one moment, as the statio views show them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelationCounters {
    pub schema: String,
    /// The table or index name; a TOAST row is named after its table.
    pub relation: String,
    pub kind: RelKind,
    /// The tablespace the relation's files are in (the database's default when it has none
    /// of its own).
    pub tablespace: String,
    /// Heap blocks (tables, TOAST): `None` for an index.
    pub heap_blks_read: Option<u64>,
    pub heap_blks_hit: Option<u64>,
    /// Index blocks (an index's own, a TOAST table's index): `None` for a table's heap.
    pub idx_blks_read: Option<u64>,
    pub idx_blks_hit: Option<u64>,
}

/// One relation over the measured window, per second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelationIo {
    pub schema: String,
    pub relation: String,
    pub kind: RelKind,
    pub tablespace: String,
    /// Heap blocks read from the OS / found in shared buffers per second (tables, TOAST).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_blks_read_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_blks_hit_s: Option<f64>,
    /// Index blocks read / hit per second (indexes, a TOAST table's index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idx_blks_read_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idx_blks_hit_s: Option<f64>,
}

impl RelationIo {
    /// Blocks read from the OS per second, heap and index together.
    pub fn blks_read_s(&self) -> f64 {
        self.heap_blks_read_s.unwrap_or(0.0) + self.idx_blks_read_s.unwrap_or(0.0)
    }

    /// Blocks found in shared buffers per second, heap and index together.
    pub fn blks_hit_s(&self) -> f64 {
        self.heap_blks_hit_s.unwrap_or(0.0) + self.idx_blks_hit_s.unwrap_or(0.0)
    }

    /// `schema.relation`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.schema, self.relation)
    }
}

/// The two snapshots of a run's measured window and the seconds between them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RelationWindow {
    pub start: Vec<RelationCounters>,
    pub end: Vec<RelationCounters>,
    pub secs: f64,
}

impl RelationWindow {
    /// Per relation at the end, its counters' deltas divided by the window's seconds,
    /// busiest (blocks read/s, then hit/s) first. A relation created during the window
    /// counts from 0; a counter that went back (statistics reset) gives 0, never a negative
    /// rate. Empty when the window has no length.
    pub fn rates(&self) -> Vec<RelationIo> {
        if self.secs.is_nan() || self.secs <= 0.0 {
            return Vec::new();
        }
        let before: HashMap<(&str, &str, RelKind), &RelationCounters> = self
            .start
            .iter()
            .map(|c| ((c.schema.as_str(), c.relation.as_str(), c.kind), c))
            .collect();
        let mut out: Vec<RelationIo> = self
            .end
            .iter()
            .map(|e| {
                let s = before.get(&(e.schema.as_str(), e.relation.as_str(), e.kind));
                let rate = |end: Option<u64>, start: fn(&RelationCounters) -> Option<u64>| {
                    let from = s.and_then(|s| start(s)).unwrap_or(0);
                    end.map(|x| x.saturating_sub(from) as f64 / self.secs)
                };
                RelationIo {
                    schema: e.schema.clone(),
                    relation: e.relation.clone(),
                    kind: e.kind,
                    tablespace: e.tablespace.clone(),
                    heap_blks_read_s: rate(e.heap_blks_read, |c| c.heap_blks_read),
                    heap_blks_hit_s: rate(e.heap_blks_hit, |c| c.heap_blks_hit),
                    idx_blks_read_s: rate(e.idx_blks_read, |c| c.idx_blks_read),
                    idx_blks_hit_s: rate(e.idx_blks_hit, |c| c.idx_blks_hit),
                }
            })
            .collect();
        out.sort_by(|a, b| {
            b.blks_read_s()
                .total_cmp(&a.blks_read_s())
                .then(b.blks_hit_s().total_cmp(&a.blks_hit_s()))
                .then_with(|| a.name().cmp(&b.name()))
        });
        out
    }
}

/// Blocks read per second by tablespace (the per-file view of a layout with several), most
/// first: the relations' rates grouped.
pub fn by_tablespace(relations: &[RelationIo]) -> Vec<(String, f64)> {
    let mut sums: Vec<(String, f64)> = Vec::new();
    for r in relations {
        match sums.iter_mut().find(|(t, _)| *t == r.tablespace) {
            Some(e) => e.1 += r.blks_read_s(),
            None => sums.push((r.tablespace.clone(), r.blks_read_s())),
        }
    }
    sums.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rel: &str, kind: RelKind, read: u64, hit: u64) -> RelationCounters {
        let heap = kind != RelKind::Index;
        RelationCounters {
            schema: "iogauge1".into(),
            relation: rel.into(),
            kind,
            tablespace: if rel == "cf1" { "fast" } else { "pg_default" }.into(),
            heap_blks_read: heap.then_some(read),
            heap_blks_hit: heap.then_some(hit),
            idx_blks_read: (!heap).then_some(read),
            idx_blks_hit: (!heap).then_some(hit),
        }
    }

    #[test]
    fn deltas_per_second_busiest_first() {
        let w = RelationWindow {
            start: vec![
                row("cf1", RelKind::Table, 1000, 50),
                row("cf1_pk", RelKind::Index, 10, 5000),
                // Reset during the window: its counter went back.
                row("t2", RelKind::Table, 900, 0),
            ],
            end: vec![
                row("cf1", RelKind::Table, 3000, 250),
                row("cf1_pk", RelKind::Index, 30, 9000),
                row("t2", RelKind::Table, 100, 40),
                // Created during the window: counts from 0.
                row("new", RelKind::Toast, 400, 0),
            ],
            secs: 2.0,
        };
        let r = w.rates();
        let names: Vec<&str> = r.iter().map(|r| r.relation.as_str()).collect();
        assert_eq!(names, ["cf1", "new", "cf1_pk", "t2"]);
        assert_eq!(r[0].heap_blks_read_s, Some(1000.0));
        assert_eq!(r[0].heap_blks_hit_s, Some(100.0));
        assert_eq!(r[0].idx_blks_read_s, None);
        assert_eq!(r[2].idx_blks_read_s, Some(10.0));
        assert_eq!(r[2].idx_blks_hit_s, Some(2000.0));
        assert_eq!(r[2].heap_blks_read_s, None);
        assert_eq!(r[1].heap_blks_read_s, Some(200.0));
        assert_eq!(r[3].heap_blks_read_s, Some(0.0), "reset: 0, not negative");
        assert_eq!(r[3].heap_blks_hit_s, Some(20.0));
        assert_eq!(r[0].name(), "iogauge1.cf1");
        assert_eq!(
            by_tablespace(&r),
            [("fast".to_string(), 1000.0), ("pg_default".into(), 210.0)]
        );
        let json = serde_json::to_string(&r[2]).unwrap();
        assert!(
            json.contains("\"kind\":\"index\"") && !json.contains("heap"),
            "{json}"
        );
        let zero = RelationWindow { secs: 0.0, ..w };
        assert!(zero.rates().is_empty());
    }
}
