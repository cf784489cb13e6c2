//! A raw stand-in's figures (`run --like DB_RUN_ID`) under the database's names, so a
//! campaign or `compare` sets them beside the db runs' (raw = 1). What each one is on the raw
//! side:
//! - physical reads and writes/s, average read time: the replay's data reads and writes
//!   (with the log writer's writes), device latency with no page cache in front;
//! - commits/s: the log writer's syncs times the db run's commits per sync (group commit);
//! - log MB/s, write time, sync time: the log writer's writes and fdatasyncs;
//! - operations/s: what the stream that was the load sustains, at the db run's device reads
//!   per operation (data) or commits per operation (log); the other stream is replayed at
//!   the db run's own rate, so its rates (reads and writes/s, or commits/s and WAL MB/s)
//!   are left out, its latencies kept;
//! - read and update latency, means only: a session's operation as the raw device would
//!   serve it: the db run's device reads per operation, one after another, at the replay's
//!   read latency (an update adds one log write and its sync). Percentiles of such a sum are
//!   not known, and buffer accesses (logical reads) have no raw counterpart: those stay
//!   without a ratio.

use iogauge_model::run::RunReport;
use iogauge_model::spec::Like;

/// The stand-in's figures, keys from the catalogue; none for a run that is not one. A leaf:
/// the digest puts what it returns.
pub(super) fn stand_in_metrics(r: &RunReport) -> Vec<(&'static str, f64)> {
    let mut m = Vec::new();
    if let (Some(like), s) = (&r.options.like, &r.summary) {
        if s.elapsed_s > 0.0 {
            figures(&mut m, r, like);
        }
    }
    m
}

fn figures(m: &mut Vec<(&'static str, f64)>, r: &RunReport, like: &Like) {
    let s = &r.summary;
    let log = r.log.as_ref().filter(|l| l.writes > 0);
    let log_writes_s = log.map_or(0.0, |l| l.writes_s);
    let shape_log = like.shape.log.as_ref();
    // The stream replayed at its own rate (the one that was not the load) gives no rates of
    // its own: they would be the db run's by construction. Its latencies still compare.
    let data_free = !shape_log.is_some_and(|l| l.is_load);
    let log_free = log.is_some() && shape_log.is_some_and(|l| l.is_load);
    if data_free {
        m.push(("db_physical_reads_s", s.read.iops));
        m.push(("db_physical_writes_s", s.write.iops + log_writes_s));
    }
    if let Some(h) = &r.hardware {
        let writes = s.write.iops + log_writes_s;
        if writes > 0.0 {
            m.push(("device_writes_per_db_write", h.write.device_iops / writes));
        }
    }
    // Shapes stored before reads per operation were kept count one.
    let unit = like.shape.reads_per_op.unwrap_or(1.0);
    let read_ms = (s.read.ios > 0).then(|| s.read.lat_us.mean / 1e3);
    if let Some(ms) = read_ms {
        m.push(("db_avg_read_ms", ms));
        m.push(("op_read_lat_mean_ms", unit * ms));
    }
    if data_free && unit > 0.0 && s.read.ios > 0 {
        m.push(("ops_s", s.read.iops / unit));
    }
    let (Some(l), Some(shape)) = (log, shape_log) else {
        return;
    };
    let commits = l.writes_s * shape.commits_per_sync;
    if log_free {
        m.push(("commits_s", commits));
        m.push(("log_mbps", l.mbps));
        if shape.commits_per_op > 0.0 {
            m.push(("ops_s", commits / shape.commits_per_op));
        }
    }
    let (write_ms, sync_ms) = (l.write_lat_us.mean / 1e3, l.sync_lat_us.mean / 1e3);
    m.push(("log_write_ms", write_ms));
    m.push(("log_sync_ms", sync_ms));
    m.push((
        "op_update_lat_mean_ms",
        unit * read_ms.unwrap_or(0.0) + write_ms + sync_ms,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_model::run::LogSummary;
    use iogauge_model::spec::{IoShape, JobSpec, Like, LogShape, RwMode};
    use std::collections::BTreeMap;

    /// A stand-in that read 1000/s at 0.5 ms and wrote 100/s, its log writer 200 writes/s at
    /// 0.25 ms + 1.5 ms, replaying a db run with 3 device reads per operation and 2 commits
    /// per sync.
    fn stand_in(log: bool) -> RunReport {
        let mut r = RunReport::from_series(
            JobSpec::new(RwMode::RandRw),
            Vec::new(),
            std::time::SystemTime::UNIX_EPOCH,
            &[],
            false,
        );
        r.summary.elapsed_s = 10.0;
        (r.summary.read.ios, r.summary.read.iops) = (10_000, 1000.0);
        r.summary.read.lat_us.mean = 500.0;
        r.summary.write.iops = 100.0;
        let mut l = LogSummary {
            writes: 2000,
            elapsed_s: 10.0,
            writes_s: 200.0,
            mbps: 1.6,
            ..LogSummary::default()
        };
        (l.write_lat_us.mean, l.sync_lat_us.mean) = (250.0, 1500.0);
        r.log = log.then_some(l);
        r.options.like = Some(Like {
            run: 1,
            shape: IoShape {
                reads_s: 1000.0,
                writes_s: 100.0,
                read_kib: 8.0,
                write_kib: 8.0,
                depth: 4.0,
                log: log.then_some(LogShape {
                    writes_s: 150.0,
                    write_kib: 8.0,
                    commits_per_sync: 2.0,
                    commits_per_op: 0.5,
                    is_load: true,
                }),
                reads_per_op: Some(3.0),
                doublewrite: None,
            },
            engine: Default::default(),
        });
        r
    }

    fn metrics(r: &RunReport) -> BTreeMap<&'static str, f64> {
        stand_in_metrics(r).into_iter().collect()
    }

    #[test]
    fn a_stand_in_under_the_database_names() {
        let m = metrics(&stand_in(true));
        // The log was the load: the data's rates are the db run's, left out.
        let want = [
            ("db_avg_read_ms", 0.5),
            ("op_read_lat_mean_ms", 1.5),
            ("commits_s", 400.0),
            ("log_mbps", 1.6),
            ("log_write_ms", 0.25),
            ("log_sync_ms", 1.5),
            ("op_update_lat_mean_ms", 3.25),
            // By the log: 400 commits/s at 0.5 commits per operation.
            ("ops_s", 800.0),
        ];
        for (k, v) in want {
            assert!((m[k] - v).abs() < 1e-9, "{k}: {} want {v}", m[k]);
            assert!(crate::metric::metric(k).is_some(), "{k} in the catalogue");
        }
        assert_eq!(m.len(), want.len(), "{m:?}");
        // The data was the load: the log's rates are left out, its times kept.
        let mut data_load = stand_in(true);
        if let Some(l) = data_load
            .options
            .like
            .as_mut()
            .and_then(|l| l.shape.log.as_mut())
        {
            l.is_load = false;
        }
        let m = metrics(&data_load);
        assert!(
            !m.contains_key("commits_s") && !m.contains_key("log_mbps"),
            "{m:?}"
        );
        assert_eq!((m["db_physical_reads_s"], m["log_sync_ms"]), (1000.0, 1.5));
        assert!(
            (m["ops_s"] - 1000.0 / 3.0).abs() < 1e-9,
            "reads at 3 a operation"
        );
        // Read-only: no WAL figures, and nothing at all for a run that is no stand-in.
        let m = metrics(&stand_in(false));
        assert!(!m.contains_key("commits_s") && !m.contains_key("op_update_lat_mean_ms"));
        assert_eq!(m["db_physical_writes_s"], 100.0);
        assert!((m["ops_s"] - 1000.0 / 3.0).abs() < 1e-9);
        let mut plain = stand_in(true);
        plain.options.like = None;
        assert!(metrics(&plain).is_empty());
    }
}
