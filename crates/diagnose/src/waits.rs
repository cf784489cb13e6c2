//! What a database's wait event is, for the diagnosis: one engine-neutral class per event,
//! for PostgreSQL's `pg_stat_activity` names and for the names iogauge's MariaDB sampler
//! gives `performance_schema`'s waits (`iogauge_db::mariadb::activity`). The stored result keeps
//! the events' own names; every rule that reads DB time by class asks here, so a stored run
//! is classed by today's table when it is diagnosed again.
//!
//! MariaDB's names are an instrument's last part and its operation (`innodb_data_file read`
//! for `wait/io/file/innodb/innodb_data_file`), or what the sampler sees where no instrument
//! waits: `innodb_row_lock wait` (the session's transaction in `LOCK WAIT`), a stage such as
//! `Waiting for table metadata lock`, and `Commit` — a session in the Commit stage, in no
//! instrumented wait, on a server whose commits sync the redo log. MariaDB 10.8 and later
//! have no instrument on the redo log (10.11's private server lists `innodb_data_file` and
//! `innodb_temp_file` only) and InnoDB's group commit waits on no instrumented condition, so
//! the Commit stage is where commits wait for the redo's write and fsync. Measured on 10.11
//! with 4 writers: `innodb_flush_log_at_trx_commit` set from 1 to 2 mid-run took the
//! Commit stage from 35% to 13% of the sessions' samples while commits per second doubled.

use crate::made::ratio;
use iogauge_model::db::aas::Aas;

/// What a wait event is, for the diagnosis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbClass {
    Cpu,
    Read,
    Locks,
    Log,
    Write,
    Other,
}

/// PostgreSQL's data-file reads (18's `AioIoCompletion`: a read issued by its I/O workers).
const PG_READ: &[&str] = &["DataFileRead", "DataFilePrefetch", "AioIoCompletion"];
const PG_WAL: &[&str] = &[
    "WALSync",
    "WALWrite",
    "WALWriteLock",
    "WALInsert",
    "WALBufMapping",
    "WalBufMapping",
    "WALInitSync",
    "WALInitWrite",
    "wal_insert",
];
const PG_WRITE: &[&str] = &[
    "DataFileWrite",
    "DataFileFlush",
    "DataFileExtend",
    "DataFileSync",
    "DataFileImmediateSync",
];
/// Heavyweight locks (the `Lock` type's events) and the lightweight locks and buffer pins
/// sessions contend on.
const PG_LOCKS: &[&str] = &[
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

/// `performance_schema`'s operations of a table lock (`wait/lock/table/sql/handler`); the
/// same instrument's table I/O (`fetch`, `insert`, `update`, `delete`) is InnoDB at work.
const TABLE_LOCK_OPS: &[&str] = &[
    "read normal",
    "read with shared locks",
    "read high priority",
    "read no insert",
    "write allow write",
    "write concurrent insert",
    "write delayed",
    "write low priority",
    "write normal",
    "read external",
    "write external",
];
/// The operations of mutexes, rwlocks and InnoDB's sx-locks (`wait/synch/…`, off by default:
/// a server that turns them on shows its latch waits, as PostgreSQL's LWLocks).
const LATCH_OPS: &[&str] = &[
    "lock",
    "try_lock",
    "read_lock",
    "write_lock",
    "try_read_lock",
    "try_write_lock",
    "shared_lock",
    "shared_exclusive_lock",
    "exclusive_lock",
    "try_shared_lock",
    "try_shared_exclusive_lock",
    "try_exclusive_lock",
];

/// The class of a wait event as the AAS samplers name it (`CPU` for no wait), PostgreSQL's
/// or MariaDB's.
pub fn class_of(event: &str) -> DbClass {
    match event {
        "CPU" => DbClass::Cpu,
        e if PG_READ.contains(&e) => DbClass::Read,
        e if PG_WAL.contains(&e) => DbClass::Log,
        e if PG_WRITE.contains(&e) => DbClass::Write,
        e if PG_LOCKS.contains(&e) => DbClass::Locks,
        e => innodb(e),
    }
}

/// A MariaDB (InnoDB) event's class; [`DbClass::Other`] for what is none of them — the
/// table I/O wait (`handler fetch`) with nothing inside it is InnoDB's own time, its CPU or
/// a wait it does not instrument (a page latch, a free page), so it is neither.
fn innodb(e: &str) -> DbClass {
    if e == "Commit" {
        return DbClass::Log;
    }
    if e.starts_with("Waiting for ") && e.ends_with(" lock") {
        return DbClass::Locks;
    }
    let Some((name, op)) = e.split_once(' ') else {
        return DbClass::Other;
    };
    match (name, op) {
        ("innodb_data_file" | "innodb_temp_file", "read") => DbClass::Read,
        ("innodb_data_file" | "innodb_temp_file" | "innodb_dblwr_file", "write" | "sync") => {
            DbClass::Write
        }
        // The redo log of MariaDB before 10.8 and of MySQL, and the binary log a commit
        // writes and syncs (sync_binlog) on a server with one.
        ("innodb_log_file" | "binlog", "write" | "sync") => DbClass::Log,
        ("innodb_row_lock", "wait") | ("mdl", "metadata lock") => DbClass::Locks,
        ("MDL_context::COND_wait_status", _) => DbClass::Locks,
        ("handler", op) if TABLE_LOCK_OPS.contains(&op) => DbClass::Locks,
        (_, op) if LATCH_OPS.contains(&op) => DbClass::Locks,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn all(events: &[&str], want: DbClass) {
        for e in events {
            assert_eq!(class_of(e), want, "{e}");
        }
    }

    #[test]
    fn cpu_is_no_wait_in_both_engines() {
        all(&["CPU"], DbClass::Cpu);
    }

    #[test]
    fn data_file_reads() {
        all(
            &[
                "DataFileRead",
                "DataFilePrefetch",
                "AioIoCompletion",
                // wait/io/file/innodb/innodb_data_file, operation read (10.11, sampled).
                "innodb_data_file read",
                "innodb_temp_file read",
            ],
            DbClass::Read,
        );
    }

    #[test]
    fn the_log_at_commit() {
        all(
            &[
                "WALSync",
                "WALWrite",
                "WALWriteLock",
                "WALInsert",
                // A session in stage/sql/Commit in no wait (10.11 instruments no redo).
                "Commit",
                "innodb_log_file write",
                "innodb_log_file sync",
                "binlog sync",
            ],
            DbClass::Log,
        );
    }

    #[test]
    fn data_file_writes() {
        all(
            &[
                "DataFileWrite",
                "DataFileFlush",
                "DataFileExtend",
                "innodb_data_file write",
                "innodb_data_file sync",
                "innodb_dblwr_file write",
            ],
            DbClass::Write,
        );
    }

    #[test]
    fn locks_and_latches() {
        all(
            &[
                "tuple",
                "transactionid",
                "BufferContent",
                "innodb_row_lock wait",
                // wait/lock/metadata/sql/mdl and the condition it waits on (sampled with
                // the instruments on), or its stage when they are off (the default).
                "mdl metadata lock",
                "MDL_context::COND_wait_status timed_wait",
                "Waiting for table metadata lock",
                "Waiting for table level lock",
                "handler read external",
                "handler write normal",
                // wait/synch/rwlock/innodb/fil_space_latch (sampled), a mutex, an sx-lock.
                "fil_space_latch write_lock",
                "buf_pool_mutex lock",
                "index_tree_rw_lock shared_exclusive_lock",
            ],
            DbClass::Locks,
        );
    }

    #[test]
    fn the_rest_is_other_not_cpu() {
        all(
            &[
                // wait/io/table/sql/handler with no file wait inside: InnoDB's own time.
                "handler fetch",
                "handler update",
                "Item_func_sleep::cond timed_wait",
                "innodb_data_file open",
                "Waiting for something",
                "ClientRead",
            ],
            DbClass::Other,
        );
    }
}
