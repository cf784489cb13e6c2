//! The database's load profile, like an AWR load profile: cumulative server counters read at
//! t0 and at each interval boundary, stored as raw per-interval deltas, with rates derived.
//!
//! Sources: `pg_stat_database` (the test database's row), `pg_stat_wal` (PostgreSQL 14+), and
//! buffers written by checkpointer, background writer and backends from `pg_stat_io`
//! (`writes` of object `relation`, PostgreSQL 16+) or `pg_stat_bgwriter` (`buffers_checkpoint`,
//! `buffers_clean`, `buffers_backend`) before 16.
//!
//! Backends publish their counters at most once a second (PostgreSQL 15+'s
//! `PGSTAT_MIN_INTERVAL`) and when they exit, so one interval's figures may lag by up to a
//! second; totals over the run are exact, since sessions flush before the last snapshot.

use iogauge_model::db::profile::LoadDelta;
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
    Some(format!(
        "SELECT d.blks_hit, d.blks_read, d.blk_read_time, d.blk_write_time, d.tup_returned, \
         d.tup_fetched, d.tup_updated, d.xact_commit, d.xact_rollback, w.wal_records, w.wal_fpi, \
         w.wal_bytes::int8, w.wal_write, w.wal_sync, w.wal_write_time, w.wal_sync_time, {writes} \
         FROM pg_stat_database d, pg_stat_wal w{from} WHERE d.datname = current_database()"
    ))
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
        wal_records: u(9),
        wal_fpi: u(10),
        wal_bytes: u(11),
        wal_write: u(12),
        wal_sync: u(13),
        wal_write_time_ms: r.get(14),
        wal_sync_time_ms: r.get(15),
        buffers_checkpointer: u(16),
        buffers_bgwriter: u(17),
        buffers_backend: u(18),
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
    }
}
