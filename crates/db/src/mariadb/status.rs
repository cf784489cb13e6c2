//! MariaDB's load profile: `SHOW GLOBAL STATUS` read on the grid, in the terms every engine's
//! profile has (buffer pool misses as physical reads, redo as WAL, the page cleaner's flushes
//! as the background writer's) plus InnoDB's own (data file calls, the doublewrite).

use iogauge_model::db::profile::{InnoDb, LoadDelta};
use iogauge_model::units::Bytes;
use std::collections::HashMap;

/// The status variables read.
pub const STATUS_SQL: &str = "SHOW GLOBAL STATUS WHERE Variable_name IN (\
     'Innodb_buffer_pool_reads', 'Innodb_buffer_pool_read_requests', 'Handler_read_key', \
     'Handler_update', 'Handler_commit', 'Handler_rollback', 'Innodb_os_log_written', \
     'Innodb_log_writes', 'Innodb_buffer_pool_pages_flushed', 'Innodb_data_reads', \
     'Innodb_data_writes', 'Innodb_data_fsyncs', 'Innodb_pages_written', \
     'Innodb_dblwr_pages_written', 'Innodb_dblwr_writes')";

/// The picoseconds InnoDB's data file reads took (`performance_schema`), for the average
/// physical read time; none where it is off.
pub const DATA_READ_TIME_SQL: &str = "SELECT SUM_TIMER_READ FROM \
     performance_schema.file_summary_by_event_name \
     WHERE EVENT_NAME = 'wait/io/file/innodb/innodb_data_file'";

/// The cumulative counters from `SHOW GLOBAL STATUS`'s (name, value) rows.
pub fn snapshot(rows: &[(String, String)]) -> LoadDelta {
    let m: HashMap<&str, u64> = rows
        .iter()
        .filter_map(|(k, v)| Some((k.as_str(), v.parse().ok()?)))
        .collect();
    let g = |k: &str| m.get(k).copied().unwrap_or(0);
    let misses = g("Innodb_buffer_pool_reads");
    LoadDelta {
        blks_read: misses,
        blks_hit: g("Innodb_buffer_pool_read_requests").saturating_sub(misses),
        tup_fetched: g("Handler_read_key"),
        tup_updated: g("Handler_update"),
        xact_commit: g("Handler_commit"),
        xact_rollback: g("Handler_rollback"),
        log_bytes: Bytes(g("Innodb_os_log_written")),
        log_writes: g("Innodb_log_writes"),
        buffers_bgwriter: g("Innodb_buffer_pool_pages_flushed"),
        innodb: InnoDb {
            data_reads: g("Innodb_data_reads"),
            data_writes: g("Innodb_data_writes"),
            data_fsyncs: g("Innodb_data_fsyncs"),
            pages_written: g("Innodb_pages_written"),
            dblwr_pages: g("Innodb_dblwr_pages_written"),
            dblwr_writes: g("Innodb_dblwr_writes"),
        },
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_rows_become_the_profile() {
        let rows: Vec<(String, String)> = [
            ("Innodb_buffer_pool_reads", "170"),
            ("Innodb_buffer_pool_read_requests", "1227"),
            ("Innodb_os_log_written", "356"),
            ("Innodb_dblwr_pages_written", "12"),
            ("Uptime", "x"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let d = snapshot(&rows);
        assert_eq!((d.blks_read, d.blks_hit, d.log_bytes.0), (170, 1057, 356));
        assert_eq!(d.innodb.dblwr_pages, 12);
        let later = LoadDelta {
            blks_read: 200,
            ..d.clone()
        };
        assert_eq!(later.since(&d).blks_read, 30);
    }
}
