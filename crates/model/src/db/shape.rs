//! The I/O a database run drove at its data disks, as a synthetic job can replay it: `iogauge
//! run --like DB_RUN_ID --target DEV` puts the same read:write mix, request sizes and
//! concurrency on a raw device or file, the stand-in for the filesystem study's RAW = 1
//! (PostgreSQL cannot run on a raw device). Derived from the run's stored device samples over
//! its measured window, so any db run stored with its samples can be replayed.

use super::report::DbReport;
use crate::spec::{Doublewrite, IoShape, LogShape, RwMode};
use iogauge_stats::Phase;

/// A direction below this share of the requests is left out of the replay.
const MINOR_PCT: f64 = 2.0;

impl IoShape {
    /// The job that replays the shape: the mode (random: a database's single-block reads
    /// and its buffers' writes land anywhere in its files), the share of reads, one block
    /// size (the dominant direction's mean request, rounded to 4 KiB, at least 4 KiB) and the
    /// depth (rounded, at least 1).
    pub fn job(&self) -> (RwMode, u8, u64, u32) {
        let total = self.reads_s + self.writes_s;
        let read_pct = if total > 0.0 {
            self.reads_s / total * 100.0
        } else {
            100.0
        };
        let (rw, kib) = if read_pct >= 100.0 - MINOR_PCT {
            (RwMode::RandRead, self.read_kib)
        } else if read_pct <= MINOR_PCT {
            (RwMode::RandWrite, self.write_kib)
        } else if read_pct >= 50.0 {
            (RwMode::RandRw, self.read_kib)
        } else {
            (RwMode::RandRw, self.write_kib)
        };
        let bs = ((kib / 4.0).round().max(1.0) as u64) * 4096;
        let pct = read_pct.round().clamp(0.0, 100.0) as u8;
        (rw, pct, bs, self.depth.round().max(1.0) as u32)
    }
}

impl DbReport {
    /// The shape of the I/O at the data disks ([`crate::db::report::CacheCompare::disks`])
    /// over the measured intervals, each weighted by its length; `None` without device
    /// samples of those disks or without I/O. Its writes are PostgreSQL's data-block writes
    /// (buffers written by every process, one block each), not the disks': those also hold
    /// the filesystem's journal and metadata and the WAL, which a raw device would not have
    /// or which the log writer replays.
    pub fn device_shape(&self) -> Option<IoShape> {
        let disks = &self.cache.as_ref()?.disks;
        let (mut secs, mut r, mut rkib, mut depth) = (0.0, 0.0, 0.0, 0.0);
        for iv in self.intervals.iter().filter(|i| i.phase == Phase::Measure) {
            let Some(sys) = &iv.system else { continue };
            let d = iv.dur_s;
            for rates in disks.iter().filter_map(|n| sys.disks.get(n)) {
                r += rates.r_s * d;
                rkib += rates.r_mb_s * 1024.0 * d;
                depth += rates.aqu_sz * d;
            }
            secs += d;
        }
        let log = self.log_shape();
        let writes_s = self.summary.db.buffers_written_s.total();
        let logs = log.is_some();
        if secs <= 0.0 || (r <= 0.0 && writes_s <= 0.0 && !logs) {
            return None;
        }
        Some(IoShape {
            reads_s: r / secs,
            writes_s,
            read_kib: if r > 0.0 { rkib / r } else { 0.0 },
            // One page each: PostgreSQL's BLCKSZ (8 KiB in the builds iogauge starts), InnoDB's
            // 16 KiB.
            write_kib: if writes_s > 0.0 {
                self.server.engine.page_bytes() as f64 / 1024.0
            } else {
                0.0
            },
            depth: depth / secs,
            log,
            reads_per_op: match self.summary.sessions.ops_s {
                ops if ops > 0.0 => Some(r / secs / ops),
                _ => None,
            },
            doublewrite: self
                .summary
                .db
                .innodb
                .filter(|i| i.dblwr_pages_s > 0.0)
                .map(|i| Doublewrite {
                    pages_s: i.dblwr_pages_s,
                    writes_s: i.dblwr_writes_s,
                }),
        })
    }

    /// The WAL stream over the measured window, from PostgreSQL's own counters; `None`
    /// without updates (a read-only run's WAL, from pruning or hint bits, commits nothing
    /// and stays in the data job's writes) or without WAL writes and syncs.
    fn log_shape(&self) -> Option<LogShape> {
        let db = &self.summary.db;
        let (writes_s, syncs_s) = (db.log_writes_s.0, db.log_syncs_s.0);
        let logs = db.rows_updated_s > 0.0 && writes_s > 0.0 && syncs_s > 0.0;
        logs.then(|| LogShape {
            writes_s,
            write_kib: db.log_bytes_s.0 / writes_s / 1024.0,
            commits_per_sync: db.commits_s / syncs_s,
            commits_per_op: match self.summary.sessions.ops_s {
                ops if ops > 0.0 => db.commits_s / ops,
                _ => 0.0,
            },
            // What the sessions waited on, as the run's own diagnosis ranked it.
            is_load: self
                .findings
                .iter()
                .any(|f| f.rule == "db-wal" && f.impact >= LOG_LOAD_SHARE),
        })
    }
}

/// The share of DB time waiting for the WAL from which the log is the db run's load.
const LOG_LOAD_SHARE: f64 = 0.5;

impl IoShape {
    /// The data job's rate cap when the log was the load (a redo test, whose data sat in the
    /// buffer cache): the data replayed closed-loop would be a load the database never made.
    /// `None`: as fast as the depth allows.
    pub fn minor_data_rate(&self) -> Option<u64> {
        let data = self.reads_s + self.writes_s;
        self.log
            .as_ref()
            .filter(|l| l.is_load)
            .map(|_| data.ceil().max(1.0) as u64)
    }

    /// The log writer's rate cap: the db run's WAL writes/s while the data I/O was the load
    /// (the sessions' pace set its commits, and a log writer back to back would measure a
    /// load the database never made); `None`, back to back, when the log was the load (how
    /// fast the log goes is then the measure).
    pub fn log_rate(&self) -> Option<u64> {
        let log = self.log.as_ref().filter(|l| !l.is_load)?;
        Some(log.writes_s.ceil().max(1.0) as u64)
    }
}

impl LogShape {
    /// The log writer's write size: the mean WAL write rounded up to 4 KiB (direct I/O's
    /// alignment; PostgreSQL writes whole 8 KiB WAL pages).
    pub fn bs(&self) -> u64 {
        ((self.write_kib / 4.0).ceil().max(1.0) as u64) * 4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(reads_s: f64, writes_s: f64, read_kib: f64, write_kib: f64, depth: f64) -> IoShape {
        IoShape {
            reads_s,
            writes_s,
            read_kib,
            write_kib,
            depth,
            log: None,
            reads_per_op: None,
            doublewrite: None,
        }
    }

    #[test]
    fn the_job_that_replays_a_shape() {
        // Single-block reads at 3.4 in flight, no writes to speak of.
        assert_eq!(
            shape(5000.0, 40.0, 8.1, 64.0, 3.4).job(),
            (RwMode::RandRead, 99, 8192, 3)
        );
        // Reads with writes merged by the writeback: the reads' size.
        assert_eq!(
            shape(3000.0, 1000.0, 8.0, 120.0, 12.6).job(),
            (RwMode::RandRw, 75, 8192, 13)
        );
        // Writes dominate: their size; read-ahead's larger reads do not set it.
        assert_eq!(
            shape(100.0, 900.0, 256.0, 16.3, 0.2).job(),
            (RwMode::RandRw, 10, 16384, 1)
        );
        assert_eq!(
            shape(0.0, 800.0, 0.0, 8.0, 2.0).job(),
            (RwMode::RandWrite, 0, 8192, 2)
        );
        assert_eq!(
            shape(10.0, 0.0, 1.0, 0.0, 0.0).job().2,
            4096,
            "at least 4 KiB"
        );
    }

    #[test]
    fn the_load_closed_loop_the_other_stream_at_its_rate() {
        let mut s = shape(40.0, 20.0, 8.0, 8.0, 1.0);
        assert_eq!((s.minor_data_rate(), s.log_rate()), (None, None), "no log");
        let mut log = LogShape {
            writes_s: 999.2,
            write_kib: 8.0,
            commits_per_sync: 1.0,
            commits_per_op: 1.0,
            is_load: false,
        };
        s.log = Some(log.clone());
        assert_eq!(
            s.minor_data_rate(),
            None,
            "the data was the load: closed loop"
        );
        assert_eq!(s.log_rate(), Some(1000), "the log at its rate");
        log.is_load = true;
        s.log = Some(log);
        assert_eq!(s.minor_data_rate(), Some(60), "the data at its rate");
        assert_eq!(s.log_rate(), None, "the log back to back");
        s.reads_s = 0.2;
        s.writes_s = 0.0;
        assert_eq!(s.minor_data_rate(), Some(1), "at least one a second");
    }

    #[test]
    fn the_log_writer_writes_whole_4k_blocks() {
        let log = |kib| LogShape {
            writes_s: 100.0,
            write_kib: kib,
            commits_per_sync: 1.0,
            commits_per_op: 0.0,
            is_load: false,
        };
        assert_eq!(log(8.0).bs(), 8192);
        assert_eq!(log(9.3).bs(), 12288, "rounded up, not down");
        assert_eq!(log(0.2).bs(), 4096);
    }
}
