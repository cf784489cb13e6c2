//! **The database's own waits** — ADDM's method on PostgreSQL: DB time is the test sessions'
//! average active sessions (AAS, sampled from `pg_stat_activity` as ASH does), split by what
//! they waited on; each class holding ≥ 20% of DB time is a finding whose impact is that
//! share (class AAS ÷ sessions' total AAS). The classes, by event name:
//!
//! - data-file reads (`DataFileRead`, `DataFilePrefetch`, PostgreSQL 18's `AioIoCompletion`):
//!   SLOB's "db file sequential read" — the storage's reads;
//! - locks and lightweight locks (`tuple`, `transactionid`, `BufferContent`, …): the sessions
//!   wait on each other, not on the storage (the lock-bound run of the seed studies);
//! - the WAL (`WALSync`, `WALWrite`, `WALWriteLock`, `WALInsert`): commits waiting for the
//!   log's write and fsync — Oracle's `log file sync`;
//! - data-file writes (`DataFileWrite`, `DataFileFlush`, `DataFileExtend`): backends writing
//!   buffers themselves, PostgreSQL's analogue of `free buffer waits` (evidence: who wrote the
//!   buffers, from the load profile / `pg_stat_io`).
//!
//! Ground truth: `diagnose::db_lock_bound` (writers on a tiny hot spot) and
//! `diagnose::db_wal_bound` (one-row updates with synchronous commit).

use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::db::aas::Aas;
use iogauge_model::db::report::DbReport;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

/// Share of DB time a class needs to be a finding.
pub const SHARE: f64 = 0.2;
/// DB time (AAS) below which nothing is said: the sessions hardly ran.
pub const MIN_AAS: f64 = 0.05;
const SOURCE: &str =
    "ADDM: findings ranked by DB time; ASH-style AAS by wait event (pg_stat_activity)";

/// What a wait event is, for the diagnosis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbClass {
    Cpu,
    Read,
    Locks,
    Wal,
    Write,
    Other,
}

/// The class of a wait event as the AAS sampler names it (`CPU` for no wait).
pub fn class_of(event: &str) -> DbClass {
    const READ: &[&str] = &["DataFileRead", "DataFilePrefetch", "AioIoCompletion"];
    const WAL: &[&str] = &[
        "WALSync",
        "WALWrite",
        "WALWriteLock",
        "WALInsert",
        "WALBufMapping",
        "WalBufMapping",
        "WALInitSync",
        "WALInitWrite",
        "wal_insert",
        "WALWriteLock",
    ];
    const WRITE: &[&str] = &[
        "DataFileWrite",
        "DataFileFlush",
        "DataFileExtend",
        "DataFileSync",
        "DataFileImmediateSync",
    ];
    const LOCKS: &[&str] = &[
        "relation",
        "extend",
        "frozenid",
        "page",
        "tuple",
        "transactionid",
        "virtualxid",
        "spectoken",
        "object",
        "userlock",
        "advisory",
        "BufferContent",
        "buffer_content",
        "BufferMapping",
        "buffer_mapping",
        "LockManager",
        "lock_manager",
        "ProcArray",
        "XactSLRU",
        "SubtransSLRU",
        "MultiXactOffsetSLRU",
        "MultiXactMemberSLRU",
        "XidGen",
        "BufferPin",
    ];
    match event {
        "CPU" => DbClass::Cpu,
        e if READ.contains(&e) => DbClass::Read,
        e if WAL.contains(&e) => DbClass::Wal,
        e if WRITE.contains(&e) => DbClass::Write,
        e if LOCKS.contains(&e) => DbClass::Locks,
        _ => DbClass::Other,
    }
}

/// The share (0–1) of the sessions' DB time in the `classes`.
pub fn io_share(aas: &Aas, classes: &[DbClass]) -> f64 {
    let part: f64 = aas
        .sessions
        .iter()
        .filter(|(e, _)| classes.contains(&class_of(e)))
        .map(|(_, v)| v)
        .sum();
    ratio(part, aas.sessions_total())
}

pub fn check(doc: &Document, _w: &Whole) -> Vec<Finding> {
    let Document::DbRun(r) = doc else {
        return Vec::new();
    };
    let aas = &r.summary.aas;
    let total = aas.sessions_total();
    if total < MIN_AAS {
        return Vec::new();
    }
    [DbClass::Read, DbClass::Locks, DbClass::Wal, DbClass::Write]
        .into_iter()
        .filter_map(|c| {
            let share = io_share(aas, &[c]);
            (share >= SHARE).then(|| one(r, c, share, total))
        })
        .collect()
}

/// The events of `class` with their AAS, largest first, as evidence.
fn events(aas: &Aas, class: DbClass) -> Vec<iogauge_model::finding::Evidence> {
    let mut v: Vec<(&String, &f64)> = aas
        .sessions
        .iter()
        .filter(|(e, _)| class_of(e) == class)
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(a.1));
    v.into_iter()
        .take(3)
        .map(|(e, a)| ev(format!("AAS on {e}"), *a, ""))
        .collect()
}

fn one(r: &DbReport, class: DbClass, share: f64, total: f64) -> Finding {
    let db = &r.summary.db;
    let pct = share * 100.0;
    let mut evidence = vec![
        ev("DB time (sessions' AAS)", total, ""),
        ev("share of DB time", pct, "%"),
    ];
    evidence.extend(events(&r.summary.aas, class));
    let (rule, layer, title, next) = match class {
        DbClass::Read => {
            if let Some(ms) = db.avg_read_ms {
                evidence.push(ev("average read (blk_read_time ÷ blks_read)", ms, "ms"));
            }
            evidence.push(ev("physical reads", db.physical_reads_s, "/s"));
            (
                "db-io-reads",
                Layer::DbIo,
                format!("{pct:.0}% of DB time is spent waiting for data-file reads"),
                "the storage's reads limit the database: see the device, page-cache and read-ahead findings; more memory (shared_buffers) or faster storage",
            )
        }
        DbClass::Locks => (
            "db-locks",
            Layer::DbLocks,
            format!("{pct:.0}% of DB time is spent waiting on locks: the sessions wait on each other, not on the storage"),
            "the workload contends on the same rows or buffers (a hot spot): spread it, shorten transactions; faster storage will not help",
        ),
        DbClass::Wal => {
            if let Some(ms) = db.avg_wal_sync_ms {
                evidence.push(ev("average WAL sync", ms, "ms"));
            }
            evidence.push(ev("WAL syncs", db.wal_syncs_s, "/s"));
            evidence.push(ev("commits", db.commits_s, "/s"));
            (
                "db-wal",
                Layer::DbWal,
                format!("{pct:.0}% of DB time is spent waiting for the WAL: commits wait for the log's write and fsync"),
                "put the WAL on a device with low write-and-flush latency (a write cache with power-loss protection), group commits (commit_delay), or synchronous_commit=off where losing the last commits is acceptable",
            )
        }
        DbClass::Write | DbClass::Cpu | DbClass::Other => {
            let b = &db.buffers_written_s;
            evidence.push(ev("buffers written by backends", b.backend, "/s"));
            evidence.push(ev("buffers written by the checkpointer", b.checkpointer, "/s"));
            evidence.push(ev("buffers written by the background writer", b.bgwriter, "/s"));
            (
                "db-writes",
                Layer::DbWrites,
                format!("{pct:.0}% of DB time is spent writing data files: sessions write buffers themselves (PostgreSQL's free buffer waits)"),
                "let the background writer and checkpointer keep up (bgwriter_lru_maxpages, checkpoint_completion_target, max_wal_size), or give the data files more write bandwidth",
            )
        }
    };
    Made {
        rule,
        layer,
        title,
        impact: share,
        evidence,
        next,
        source: SOURCE,
    }
    .into()
}
