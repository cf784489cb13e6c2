//! **The database's own waits** — ADDM's method, on PostgreSQL and on MariaDB: DB time is
//! the test sessions' average active sessions (AAS, sampled every 100 ms as ASH does: from
//! `pg_stat_activity` on PostgreSQL, from `performance_schema.events_waits_current` on
//! MariaDB), split by what they waited on; each class holding ≥ 20% of DB time is a finding
//! whose impact is that share (class AAS ÷ sessions' total AAS). The classes, by event name
//! ([`crate::waits`] holds the table for both engines):
//!
//! - data-file reads (PostgreSQL's `DataFileRead`, `DataFilePrefetch`, 18's
//!   `AioIoCompletion`; InnoDB's `innodb_data_file read`): SLOB's "db file sequential read" —
//!   the storage's reads;
//! - locks and latches (`tuple`, `transactionid`, `BufferContent`, …; InnoDB's row lock waits,
//!   metadata and table locks, mutexes and rwlocks where instrumented): the sessions wait on
//!   each other, not on the storage (the lock-bound run of the seed studies);
//! - the log at commit (`WALSync`, `WALWrite`, `WALWriteLock`, `WALInsert`; MariaDB's Commit
//!   stage with commits syncing the redo, see [`crate::waits`]): commits waiting for the
//!   log's write and fsync — Oracle's `log file sync`;
//! - data-file writes (`DataFileWrite`, `DataFileFlush`, `DataFileExtend`; InnoDB's
//!   `innodb_data_file write`/`sync`): sessions writing pages themselves, the analogue of
//!   `free buffer waits` (evidence: who wrote the pages, from the load profile).
//!
//! The findings' words follow the engine the document records (`server.engine`): the WAL or
//! the redo log, `shared_buffers` or `innodb_buffer_pool_size`.
//!
//! Ground truth, on both engines (one test body each, `diagnose::db`): `db_lock_bound`
//! (writers on a hot spot: one row on PostgreSQL, which holds a row's lock until its commit
//! is flushed; 64 rows a statement on InnoDB, which releases row locks at commit before the
//! redo's sync), `db_wal_bound` (one-row updates, every commit syncing the log) and
//! `db_read_bound` (random single-row reads of a table several times the buffer cache,
//! O_DIRECT). The classes with no such run are unit-tested on the AAS of measured runs
//! (`tests::db`).

use crate::made::{ev, Made};
use crate::view::Whole;
use iogauge_model::db::aas::Aas;
use iogauge_model::db::engine::Engine;
use iogauge_model::db::report::DbReport;
use iogauge_model::finding::{Evidence, Finding, Layer};
use iogauge_model::Document;

pub use crate::waits::{class_of, io_share, DbClass};

/// Share of DB time a class needs to be a finding.
pub const SHARE: f64 = 0.2;
/// DB time (AAS) below which nothing is said: the sessions hardly ran.
pub const MIN_AAS: f64 = 0.05;
const SOURCE: &str =
    "ADDM: findings ranked by DB time; ASH-style AAS by wait event (pg_stat_activity)";
const SOURCE_MARIA: &str = "ADDM: findings ranked by DB time; ASH-style AAS by wait event (performance_schema.events_waits_current)";

pub fn check(doc: &Document, _w: &Whole) -> Vec<Finding> {
    let Document::DbRun(r) = doc else {
        return Vec::new();
    };
    let aas = &r.summary.aas;
    let total = aas.sessions_total();
    if total < MIN_AAS {
        return Vec::new();
    }
    [DbClass::Read, DbClass::Locks, DbClass::Log, DbClass::Write]
        .into_iter()
        .filter_map(|c| {
            let share = io_share(aas, &[c]);
            (share >= SHARE).then(|| one(r, c, share, total))
        })
        .collect()
}

/// The events of `class` with their AAS, largest first, as evidence.
fn events(aas: &Aas, class: DbClass) -> Vec<Evidence> {
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
    let pct = share * 100.0;
    let mut evidence = vec![
        ev("DB time (sessions' AAS)", total, ""),
        ev("share of DB time", pct, "%"),
    ];
    evidence.extend(events(&r.summary.aas, class));
    let maria = r.server.engine == Engine::Mariadb;
    let (rule, layer, title, next) = match class {
        DbClass::Read => reads(r, &mut evidence, pct),
        DbClass::Locks => (
            "db-locks",
            Layer::DbLocks,
            format!("{pct:.0}% of DB time is spent waiting on locks: the sessions wait on each other, not on the storage"),
            if maria {
                "the workload contends on the same rows, pages or tables (a hot spot, or a statement holding a metadata lock): spread it, shorten transactions; faster storage will not help"
            } else {
                "the workload contends on the same rows or buffers (a hot spot): spread it, shorten transactions; faster storage will not help"
            },
        ),
        DbClass::Log => log(r, &mut evidence, pct),
        DbClass::Write | DbClass::Cpu | DbClass::Other => writes(r, &mut evidence, pct),
    };
    Made {
        rule,
        layer,
        title,
        impact: share,
        evidence,
        next,
        source: if maria { SOURCE_MARIA } else { SOURCE },
    }
    .into()
}

/// A finding's rule, layer, title and next step.
type Said = (&'static str, Layer, String, &'static str);

fn reads(r: &DbReport, evidence: &mut Vec<Evidence>, pct: f64) -> Said {
    let db = &r.summary.db;
    let maria = r.server.engine == Engine::Mariadb;
    if let Some(ms) = db.avg_read_ms {
        let how = if maria {
            "average read (performance_schema's data-file read time ÷ Innodb_buffer_pool_reads)"
        } else {
            "average read (blk_read_time ÷ blks_read)"
        };
        evidence.push(ev(how, ms, "ms"));
    }
    evidence.push(ev("physical reads", db.physical_reads_s, "/s"));
    (
        "db-io-reads",
        Layer::DbIo,
        format!("{pct:.0}% of DB time is spent waiting for data-file reads"),
        if maria {
            "the storage's reads limit the database: see the device, page-cache and read-ahead findings; more memory (innodb_buffer_pool_size) or faster storage"
        } else {
            "the storage's reads limit the database: see the device, page-cache and read-ahead findings; more memory (shared_buffers) or faster storage"
        },
    )
}

fn log(r: &DbReport, evidence: &mut Vec<Evidence>, pct: f64) -> Said {
    let db = &r.summary.db;
    let engine = r.server.engine;
    let name = engine.log();
    if let Some(ms) = db.avg_log_sync_ms {
        evidence.push(ev(format!("average {name} sync"), ms.0, "ms"));
    }
    evidence.push(ev(format!("{name} syncs"), db.log_syncs_s.0, "/s"));
    evidence.push(ev("commits", db.commits_s, "/s"));
    match engine {
        Engine::Postgres => (
            "db-wal",
            Layer::DbWal,
            format!("{pct:.0}% of DB time is spent waiting for the WAL: commits wait for the log's write and fsync"),
            "put the WAL on a device with low write-and-flush latency (a write cache with power-loss protection), group commits (commit_delay), or synchronous_commit=off where losing the last commits is acceptable",
        ),
        Engine::Mariadb => {
            if let Some(v) = setting(r, "innodb_flush_log_at_trx_commit") {
                evidence.push(ev("innodb_flush_log_at_trx_commit", v, ""));
            }
            (
                "db-wal",
                Layer::DbWal,
                format!("{pct:.0}% of DB time is spent committing: commits wait for the redo log's write and fsync"),
                "put the redo log (innodb_log_group_home_dir) on a device with low write-and-flush latency (a write cache with power-loss protection), or innodb_flush_log_at_trx_commit=2 where losing the last second's commits is acceptable",
            )
        }
    }
}

fn writes(r: &DbReport, evidence: &mut Vec<Evidence>, pct: f64) -> Said {
    let db = &r.summary.db;
    let b = &db.buffers_written_s;
    match r.server.engine {
        Engine::Postgres => {
            evidence.push(ev("buffers written by backends", b.backend, "/s"));
            evidence.push(ev(
                "buffers written by the checkpointer",
                b.checkpointer,
                "/s",
            ));
            evidence.push(ev(
                "buffers written by the background writer",
                b.bgwriter,
                "/s",
            ));
            (
                "db-writes",
                Layer::DbWrites,
                format!("{pct:.0}% of DB time is spent writing data files: sessions write buffers themselves (PostgreSQL's free buffer waits)"),
                "let the background writer and checkpointer keep up (bgwriter_lru_maxpages, checkpoint_completion_target, max_wal_size), or give the data files more write bandwidth",
            )
        }
        Engine::Mariadb => {
            evidence.push(ev(
                "pages flushed (Innodb_buffer_pool_pages_flushed)",
                b.bgwriter,
                "/s",
            ));
            if let Some(i) = &db.innodb {
                evidence.push(ev(
                    "doublewrite pages (Innodb_dblwr_pages_written)",
                    i.dblwr_pages_s,
                    "/s",
                ));
            }
            (
                "db-writes",
                Layer::DbWrites,
                format!("{pct:.0}% of DB time is spent writing data files: sessions write pages themselves (free buffer waits)"),
                "let the page cleaner keep up (innodb_io_capacity, innodb_io_capacity_max, innodb_max_dirty_pages_pct), or give the data files more write bandwidth",
            )
        }
    }
}

/// A numeric server setting the run recorded.
fn setting(r: &DbReport, name: &str) -> Option<f64> {
    r.server
        .settings
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| s.setting.parse().ok())
}
