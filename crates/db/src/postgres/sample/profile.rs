//! The database's load profile, like an AWR load profile: cumulative server counters read at
//! t0 and at each interval boundary, stored as raw per-interval deltas, with rates derived.
//!
//! Sources: `pg_stat_database` (the test database's row), `pg_stat_wal` (PostgreSQL 14+; from 18
//! its write and sync counts and times are `pg_stat_io`'s rows of object `wal`), and
//! buffers written by checkpointer, background writer and backends from `pg_stat_io`
//! (`writes` of object `relation`, PostgreSQL 16+) or `pg_stat_bgwriter` (`buffers_checkpoint`,
//! `buffers_clean`, `buffers_backend`) before 16.
//!
//! Backends publish their counters at most once a second (PostgreSQL 15+'s
//! `PGSTAT_MIN_INTERVAL`) and when they exit, so one interval's figures may lag by up to a
//! second; totals over the run are exact, since sessions flush before the last snapshot.

use iogauge_model::db::profile::{ByProcess, IoCounts, LoadDelta};
use iogauge_model::units::{Bytes, Millis};
use postgres::{Client, Statement};

/// The snapshot query for a server version (`server_version_num`): one statement, so all
/// counters come from the same moment. `None` before 14 (no `pg_stat_wal`).
pub(crate) fn snapshot_sql(version_num: i32) -> Option<String> {
    if version_num < 140000 {
        return None;
    }
    let (writes, from) = if version_num >= 160000 {
        let io = |who: &str| {
            format!(
                "(SELECT coalesce(sum(writes), 0)::int8 FROM pg_stat_io \
                 WHERE object = 'relation' AND {who})"
            )
        };
        (
            format!(
                "{}, {}, {}",
                io("backend_type = 'checkpointer'"),
                io("backend_type = 'background writer'"),
                io("backend_type NOT IN ('checkpointer', 'background writer')")
            ),
            String::new(),
        )
    } else {
        (
            "b.buffers_checkpoint, b.buffers_clean, b.buffers_backend".to_string(),
            ", pg_stat_bgwriter b".to_string(),
        )
    };
    // PostgreSQL 18 moved the WAL's write and sync counts and times from pg_stat_wal to
    // pg_stat_io (object 'wal', context 'normal': XLogWrite's writes and its fsyncs).
    let wal_io = if version_num >= 180000 {
        let wal = |col: &str| {
            format!(
                "(SELECT coalesce(sum({col}), 0) FROM pg_stat_io \
                 WHERE object = 'wal' AND context = 'normal')"
            )
        };
        format!(
            "{}::int8, {}::int8, {}::float8, {}::float8",
            wal("writes"),
            wal("fsyncs"),
            wal("write_time"),
            wal("fsync_time")
        )
    } else {
        "w.wal_write, w.wal_sync, w.wal_write_time, w.wal_sync_time".to_string()
    };
    Some(format!(
        "SELECT d.blks_hit, d.blks_read, d.blk_read_time, d.blk_write_time, d.tup_returned, \
         d.tup_fetched, d.tup_updated, d.xact_commit, d.xact_rollback, w.wal_records, w.wal_fpi, \
         w.wal_bytes::int8, {wal_io}, {writes}, {by_process}, \
         current_setting('track_io_timing')::bool, current_setting('track_wal_io_timing')::bool \
         FROM pg_stat_database d, pg_stat_wal w{from} WHERE d.datname = current_database()",
        by_process = by_process_sql(version_num)
    ))
}

/// Columns per process type, in [`ByProcess::BACKEND_TYPES`] order.
const IO_COLUMNS: [&str; 4] = ["reads", "read_time", "writes", "write_time"];

/// One `float8[]`: for each process type of [`ByProcess::BACKEND_TYPES`], its reads, read
/// time, writes and write time from `pg_stat_io` (relation I/O; the WAL writer's WAL writes
/// from 18, where pg_stat_io has them). Empty before 16 (no pg_stat_io).
fn by_process_sql(version_num: i32) -> String {
    if version_num < 160000 {
        return "ARRAY[]::float8[]".into();
    }
    let mut cells = Vec::new();
    for who in ByProcess::<()>::BACKEND_TYPES {
        let object = if who == "walwriter" && version_num >= 180000 {
            "wal"
        } else {
            "relation"
        };
        for col in IO_COLUMNS {
            cells.push(format!(
                "coalesce(sum({col}) FILTER (WHERE backend_type = '{who}' AND object = '{object}'), 0)"
            ));
        }
    }
    format!(
        "(SELECT ARRAY[{}]::float8[] FROM pg_stat_io)",
        cells.join(", ")
    )
}

/// The [`by_process_sql`] array as counts (all zero when the server has no pg_stat_io).
fn by_process(cells: &[f64]) -> ByProcess<IoCounts> {
    let at = |who: usize| {
        let c = |i: usize| {
            cells
                .get(who * IO_COLUMNS.len() + i)
                .copied()
                .unwrap_or(0.0)
                .max(0.0)
        };
        IoCounts {
            reads: c(0) as u64,
            read_time_ms: c(1),
            writes: c(2) as u64,
            write_time_ms: c(3),
        }
    };
    ByProcess {
        client_backends: at(0),
        checkpointer: at(1),
        bgwriter: at(2),
        log_writer: at(3),
    }
}

/// Reads the cumulative counters with the statement prepared from [`snapshot_sql`].
pub(crate) fn snapshot(c: &mut Client, stmt: &Statement) -> Result<LoadDelta, postgres::Error> {
    let r = c.query_one(stmt, &[])?;
    let u = |i: usize| r.get::<_, i64>(i).max(0) as u64;
    Ok(LoadDelta {
        blks_hit: u(0),
        blks_read: u(1),
        blk_read_time_ms: r.get(2),
        blk_write_time_ms: r.get(3),
        tup_returned: u(4),
        tup_fetched: u(5),
        tup_updated: u(6),
        xact_commit: u(7),
        xact_rollback: u(8),
        log_records: u(9),
        log_fpi: u(10),
        log_bytes: Bytes(u(11)),
        log_writes: u(12),
        log_syncs: u(13),
        log_write_time_ms: Millis(r.get(14)),
        log_sync_time_ms: Millis(r.get(15)),
        // A user's server may time neither: its averages are then unknown, not 0.
        reads_untimed: !r.get::<_, bool>(20),
        log_untimed: !r.get::<_, bool>(21),
        buffers_checkpointer: u(16),
        buffers_bgwriter: u(17),
        buffers_backend: u(18),
        by_process: by_process(&r.get::<_, Vec<f64>>(19)),
        innodb: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_query_follows_the_server_version() {
        assert!(snapshot_sql(130000).is_none());
        assert!(snapshot_sql(150000).unwrap().contains("pg_stat_bgwriter"));
        assert!(snapshot_sql(170000).unwrap().contains("pg_stat_io"));
        assert!(snapshot_sql(170000).unwrap().contains("w.wal_write_time"));
        let v18 = snapshot_sql(180000).unwrap();
        assert!(v18.contains("object = 'wal'") && !v18.contains("w.wal_write"));
        assert!(!snapshot_sql(150000).unwrap().contains("FILTER"));
        assert!(snapshot_sql(160000)
            .unwrap()
            .contains("backend_type = 'client backend'"));
    }

    #[test]
    fn process_cells_in_field_order() {
        let cells: Vec<f64> = (0..16).map(f64::from).collect();
        let p = by_process(&cells);
        assert_eq!(
            (p.client_backends.reads, p.client_backends.write_time_ms),
            (0, 3.0)
        );
        assert_eq!((p.log_writer.reads, p.log_writer.writes), (12, 14));
        assert_eq!(by_process(&[]), ByProcess::default());
    }
}
