//! The database's load profile as data, like an AWR load profile: cumulative server
//! counters (or their difference over an interval) and the rates derived from them. The
//! counters are read by `iogauge_db`.

use iogauge_stats::units::{Bytes, BytesPerSec, Iops, Millis};
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Cumulative counters (from a snapshot) or their difference over an interval (a delta).
/// Times are milliseconds, as PostgreSQL reports them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadDelta {
    pub blks_hit: u64,
    pub blks_read: u64,
    pub blk_read_time_ms: f64,
    pub blk_write_time_ms: f64,
    /// The data files' read times were not measured (PostgreSQL with `track_io_timing`
    /// off, on a user's server): the average read is then unknown, not 0.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_untimed: bool,
    pub tup_returned: u64,
    pub tup_fetched: u64,
    pub tup_updated: u64,
    pub xact_commit: u64,
    pub xact_rollback: u64,
    pub log_records: u64,
    pub log_fpi: u64,
    pub log_bytes: Bytes,
    pub log_writes: u64,
    pub log_syncs: u64,
    pub log_write_time_ms: Millis,
    pub log_sync_time_ms: Millis,
    /// The log's write and sync times were not measured (MariaDB without its redo probe:
    /// the server counts its log writes but does not time them; PostgreSQL with
    /// `track_wal_io_timing` off); their averages are then unknown, not 0.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub log_untimed: bool,
    pub buffers_checkpointer: u64,
    pub buffers_bgwriter: u64,
    pub buffers_backend: u64,
    /// Relation reads and writes by process type, with their times (`pg_stat_io`,
    /// PostgreSQL 16+; all zero before).
    #[serde(default)]
    pub by_process: ByProcess<IoCounts>,
    /// InnoDB's own counters (MariaDB; absent for PostgreSQL).
    #[serde(default, skip_serializing_if = "InnoDb::is_zero")]
    pub innodb: InnoDb,
}

/// What InnoDB counts beside the figures every engine has (`SHOW GLOBAL STATUS`): its data
/// file I/O, the pages it wrote, and the doublewrite buffer, which writes every page twice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InnoDb {
    /// `Innodb_data_reads`, `Innodb_data_writes`, `Innodb_data_fsyncs`: read, write and
    /// fsync calls on InnoDB's files.
    pub data_reads: u64,
    pub data_writes: u64,
    pub data_fsyncs: u64,
    /// `Innodb_pages_written`: data pages written to their place.
    pub pages_written: u64,
    /// `Innodb_dblwr_pages_written`, `Innodb_dblwr_writes`: the same pages written to the
    /// doublewrite area first, and the writes that took them there.
    pub dblwr_pages: u64,
    pub dblwr_writes: u64,
}

impl InnoDb {
    pub fn is_zero(&self) -> bool {
        *self == InnoDb::default()
    }

    fn zip(&self, o: &InnoDb, f: impl Fn(u64, u64) -> u64) -> InnoDb {
        InnoDb {
            data_reads: f(self.data_reads, o.data_reads),
            data_writes: f(self.data_writes, o.data_writes),
            data_fsyncs: f(self.data_fsyncs, o.data_fsyncs),
            pages_written: f(self.pages_written, o.pages_written),
            dblwr_pages: f(self.dblwr_pages, o.dblwr_pages),
            dblwr_writes: f(self.dblwr_writes, o.dblwr_writes),
        }
    }
}

/// Reads and writes of one process type, and the milliseconds they took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoCounts {
    pub reads: u64,
    pub read_time_ms: f64,
    pub writes: u64,
    pub write_time_ms: f64,
}

/// One figure per server process type, as `pg_stat_io` names them: the sessions (`client
/// backend`: SLOB's db file sequential read), the checkpointer and the background writer (the
/// DBWR's writes), and the WAL writer (its WAL writes, PostgreSQL 18+: log file parallel
/// write).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ByProcess<T> {
    pub client_backends: T,
    pub checkpointer: T,
    pub bgwriter: T,
    pub log_writer: T,
}

impl<T> ByProcess<T> {
    /// `pg_stat_io`'s `backend_type` of each field, in field order.
    pub const BACKEND_TYPES: [&'static str; 4] = [
        "client backend",
        "checkpointer",
        "background writer",
        "walwriter",
    ];

    pub fn map<U>(&self, f: impl Fn(&T) -> U) -> ByProcess<U> {
        ByProcess {
            client_backends: f(&self.client_backends),
            checkpointer: f(&self.checkpointer),
            bgwriter: f(&self.bgwriter),
            log_writer: f(&self.log_writer),
        }
    }

    pub fn zip<U, V>(&self, o: &ByProcess<U>, f: impl Fn(&T, &U) -> V) -> ByProcess<V> {
        ByProcess {
            client_backends: f(&self.client_backends, &o.client_backends),
            checkpointer: f(&self.checkpointer, &o.checkpointer),
            bgwriter: f(&self.bgwriter, &o.bgwriter),
            log_writer: f(&self.log_writer, &o.log_writer),
        }
    }

    /// (label, figure) in field order, for tables.
    pub fn labelled(&self) -> [(&'static str, &T); 4] {
        [
            ("client backends", &self.client_backends),
            ("checkpointer", &self.checkpointer),
            ("bgwriter", &self.bgwriter),
            ("log writer", &self.log_writer),
        ]
    }
}

/// One process type's I/O as rates: per second, and the average time of each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoRates {
    pub reads_s: f64,
    pub writes_s: f64,
    pub avg_read_ms: Option<f64>,
    pub avg_write_ms: Option<f64>,
}

impl IoCounts {
    fn since(&self, e: &IoCounts) -> IoCounts {
        IoCounts {
            reads: self.reads.saturating_sub(e.reads),
            read_time_ms: (self.read_time_ms - e.read_time_ms).max(0.0),
            writes: self.writes.saturating_sub(e.writes),
            write_time_ms: (self.write_time_ms - e.write_time_ms).max(0.0),
        }
    }

    fn plus(&self, o: &IoCounts) -> IoCounts {
        IoCounts {
            reads: self.reads + o.reads,
            read_time_ms: self.read_time_ms + o.read_time_ms,
            writes: self.writes + o.writes,
            write_time_ms: self.write_time_ms + o.write_time_ms,
        }
    }

    fn rates(&self, secs: f64) -> IoRates {
        let per = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        IoRates {
            reads_s: per(self.reads),
            writes_s: per(self.writes),
            avg_read_ms: (self.reads > 0).then(|| self.read_time_ms / self.reads as f64),
            avg_write_ms: (self.writes > 0).then(|| self.write_time_ms / self.writes as f64),
        }
    }
}

/// Buffers written per second, by who wrote them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BuffersWritten {
    pub checkpointer: f64,
    pub bgwriter: f64,
    pub backend: f64,
}

impl BuffersWritten {
    /// By every process: checkpointer, background writer and backends.
    pub fn total(&self) -> f64 {
        self.checkpointer + self.bgwriter + self.backend
    }
}

/// Rates over an interval, per second unless the name says otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadRates {
    /// Buffer accesses: `blks_hit + blks_read`.
    pub logical_reads_s: f64,
    /// Blocks read from the OS (page cache or device): `blks_read`.
    pub physical_reads_s: f64,
    /// `blk_read_time / blks_read`; `None` without reads. Needs `track_io_timing = on`.
    pub avg_read_ms: Option<f64>,
    pub commits_s: f64,
    pub rows_updated_s: f64,
    pub log_bytes_s: BytesPerSec,
    /// WAL writes (XLogWrite's, the log writer's "log file parallel write").
    #[serde(default)]
    pub log_writes_s: Iops,
    pub log_syncs_s: Iops,
    /// `wal_write_time / log_writes`; `None` without writes. Needs `track_wal_io_timing = on`
    /// (iogauge's private cluster sets it; on another server 0 means it is off).
    #[serde(default)]
    pub avg_log_write_ms: Option<Millis>,
    /// `wal_sync_time / log_syncs`: how long the WAL's fsyncs took, what a commit waits on.
    #[serde(default)]
    pub avg_log_sync_ms: Option<Millis>,
    pub buffers_written_s: BuffersWritten,
    /// Reads and writes by process type with their average times (PostgreSQL 16+).
    #[serde(default)]
    pub by_process: ByProcess<IoRates>,
    /// InnoDB's own rates (MariaDB; absent for PostgreSQL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub innodb: Option<InnoDbRates>,
}

/// [`InnoDb`]'s counters per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InnoDbRates {
    pub data_reads_s: f64,
    pub data_writes_s: f64,
    pub data_fsyncs_s: f64,
    pub pages_written_s: f64,
    pub dblwr_pages_s: f64,
    pub dblwr_writes_s: f64,
}

impl LoadRates {
    /// The database's write calls per second: data blocks written by every process
    /// ([`BuffersWritten::total`]) and WAL writes, and InnoDB's doublewrite batches (each a
    /// write of its own before the pages' writes in place).
    pub fn physical_writes_s(&self) -> f64 {
        self.buffers_written_s.total()
            + self.log_writes_s.0
            + self.innodb.map_or(0.0, |i| i.dblwr_writes_s)
    }
}

impl LoadDelta {
    /// `self − earlier`, field by field. A counter that went backwards (statistics reset
    /// mid-run) gives 0 for that interval rather than a huge wrapped number.
    pub fn since(&self, earlier: &LoadDelta) -> LoadDelta {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let f = |a: f64, b: f64| (a - b).max(0.0);
        LoadDelta {
            blks_hit: d(self.blks_hit, earlier.blks_hit),
            blks_read: d(self.blks_read, earlier.blks_read),
            blk_read_time_ms: f(self.blk_read_time_ms, earlier.blk_read_time_ms),
            blk_write_time_ms: f(self.blk_write_time_ms, earlier.blk_write_time_ms),
            tup_returned: d(self.tup_returned, earlier.tup_returned),
            tup_fetched: d(self.tup_fetched, earlier.tup_fetched),
            tup_updated: d(self.tup_updated, earlier.tup_updated),
            xact_commit: d(self.xact_commit, earlier.xact_commit),
            xact_rollback: d(self.xact_rollback, earlier.xact_rollback),
            log_records: d(self.log_records, earlier.log_records),
            log_fpi: d(self.log_fpi, earlier.log_fpi),
            log_bytes: Bytes(d(self.log_bytes.0, earlier.log_bytes.0)),
            log_writes: d(self.log_writes, earlier.log_writes),
            log_syncs: d(self.log_syncs, earlier.log_syncs),
            log_write_time_ms: self.log_write_time_ms.since(earlier.log_write_time_ms),
            log_sync_time_ms: self.log_sync_time_ms.since(earlier.log_sync_time_ms),
            log_untimed: self.log_untimed || earlier.log_untimed,
            reads_untimed: self.reads_untimed || earlier.reads_untimed,
            buffers_checkpointer: d(self.buffers_checkpointer, earlier.buffers_checkpointer),
            buffers_bgwriter: d(self.buffers_bgwriter, earlier.buffers_bgwriter),
            buffers_backend: d(self.buffers_backend, earlier.buffers_backend),
            by_process: self.by_process.zip(&earlier.by_process, IoCounts::since),
            innodb: self.innodb.zip(&earlier.innodb, u64::saturating_sub),
        }
    }

    pub fn buffers_written(&self) -> u64 {
        self.buffers_checkpointer + self.buffers_bgwriter + self.buffers_backend
    }

    /// Rates over `secs` seconds (all zero for a zero-length interval).
    pub fn rates(&self, secs: f64) -> LoadRates {
        let per = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        LoadRates {
            logical_reads_s: per(self.blks_hit + self.blks_read),
            physical_reads_s: per(self.blks_read),
            avg_read_ms: (self.blks_read > 0 && !self.reads_untimed)
                .then(|| self.blk_read_time_ms / self.blks_read as f64),
            commits_s: per(self.xact_commit),
            rows_updated_s: per(self.tup_updated),
            log_bytes_s: BytesPerSec::per(self.log_bytes, secs),
            log_writes_s: Iops::per(self.log_writes, secs),
            log_syncs_s: Iops::per(self.log_syncs, secs),
            avg_log_write_ms: (!self.log_untimed)
                .then(|| self.log_write_time_ms.per(self.log_writes))
                .flatten(),
            avg_log_sync_ms: (!self.log_untimed)
                .then(|| self.log_sync_time_ms.per(self.log_syncs))
                .flatten(),
            buffers_written_s: BuffersWritten {
                checkpointer: per(self.buffers_checkpointer),
                bgwriter: per(self.buffers_bgwriter),
                backend: per(self.buffers_backend),
            },
            by_process: self.by_process.map(|c| c.rates(secs)),
            innodb: (!self.innodb.is_zero()).then(|| {
                let i = &self.innodb;
                InnoDbRates {
                    data_reads_s: per(i.data_reads),
                    data_writes_s: per(i.data_writes),
                    data_fsyncs_s: per(i.data_fsyncs),
                    pages_written_s: per(i.pages_written),
                    dblwr_pages_s: per(i.dblwr_pages),
                    dblwr_writes_s: per(i.dblwr_writes),
                }
            }),
        }
    }
}

impl AddAssign<&LoadDelta> for LoadDelta {
    fn add_assign(&mut self, o: &LoadDelta) {
        self.blks_hit += o.blks_hit;
        self.blks_read += o.blks_read;
        self.blk_read_time_ms += o.blk_read_time_ms;
        self.blk_write_time_ms += o.blk_write_time_ms;
        self.tup_returned += o.tup_returned;
        self.tup_fetched += o.tup_fetched;
        self.tup_updated += o.tup_updated;
        self.xact_commit += o.xact_commit;
        self.xact_rollback += o.xact_rollback;
        self.log_records += o.log_records;
        self.log_fpi += o.log_fpi;
        self.log_bytes += o.log_bytes;
        self.log_writes += o.log_writes;
        self.log_syncs += o.log_syncs;
        self.log_write_time_ms += o.log_write_time_ms;
        self.log_sync_time_ms += o.log_sync_time_ms;
        self.log_untimed |= o.log_untimed;
        self.reads_untimed |= o.reads_untimed;
        self.buffers_checkpointer += o.buffers_checkpointer;
        self.buffers_bgwriter += o.buffers_bgwriter;
        self.buffers_backend += o.buffers_backend;
        self.by_process = self.by_process.zip(&o.by_process, IoCounts::plus);
        self.innodb = self.innodb.zip(&o.innodb, |a, b| a + b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(hit: u64, read: u64, read_ms: f64, wal: u64) -> LoadDelta {
        LoadDelta {
            blks_hit: hit,
            blks_read: read,
            blk_read_time_ms: read_ms,
            log_bytes: Bytes(wal),
            xact_commit: hit / 10,
            tup_updated: 7,
            log_syncs: 3,
            buffers_checkpointer: 4,
            buffers_bgwriter: 2,
            buffers_backend: 6,
            ..Default::default()
        }
    }

    #[test]
    fn rates_from_deltas() {
        let a = snap(1_000, 100, 50.0, 8192);
        let b = snap(3_000, 500, 250.0, 8192 + 4096);
        let d = b.since(&a);
        assert_eq!((d.blks_hit, d.blks_read, d.log_bytes.0), (2_000, 400, 4096));
        let r = d.rates(2.0);
        assert_eq!(r.logical_reads_s, 1_200.0);
        assert_eq!(r.physical_reads_s, 200.0);
        assert_eq!(r.avg_read_ms, Some(0.5));
        assert_eq!(r.commits_s, 100.0);
        assert_eq!(r.log_bytes_s.0, 2048.0);
        assert_eq!(r.rows_updated_s, 0.0);
        let abs = a.rates(2.0);
        assert_eq!(abs.buffers_written_s.backend, 3.0);
        assert_eq!(abs.log_syncs_s.0, 1.5);
        assert_eq!(abs.avg_log_write_ms, None, "no writes, no average");
    }

    #[test]
    fn log_write_and_sync_latency_are_time_over_count() {
        let d = LoadDelta {
            log_writes: 40,
            log_write_time_ms: Millis(2.0),
            log_syncs: 20,
            log_sync_time_ms: Millis(30.0),
            ..Default::default()
        };
        let r = d.rates(2.0);
        assert_eq!(r.log_writes_s.0, 20.0);
        assert_eq!(r.avg_log_write_ms, Some(Millis(0.05)));
        assert_eq!(r.avg_log_sync_ms, Some(Millis(1.5)));
    }

    #[test]
    fn process_io_subtracts_adds_and_averages() {
        let io = |reads, read_time_ms| IoCounts {
            reads,
            read_time_ms,
            writes: 0,
            write_time_ms: 0.0,
        };
        let mut a = LoadDelta::default();
        a.by_process.client_backends = io(100, 10.0);
        let mut b = a.clone();
        b.by_process.client_backends = io(300, 50.0);
        let d = b.since(&a);
        assert_eq!(d.by_process.client_backends, io(200, 40.0));
        let r = d.rates(2.0).by_process.client_backends;
        assert_eq!(
            (r.reads_s, r.avg_read_ms, r.avg_write_ms),
            (100.0, Some(0.2), None)
        );
        let mut t = d.clone();
        t += &d;
        assert_eq!(t.by_process.client_backends, io(400, 80.0));
        assert_eq!(t.by_process.checkpointer, IoCounts::default());
    }

    #[test]
    fn schema_one_rates_without_wal_latency_still_read() {
        let v = serde_json::json!({
            "logical_reads_s": 1.0, "physical_reads_s": 1.0, "avg_read_ms": null,
            "commits_s": 0.0, "rows_updated_s": 0.0, "log_bytes_s": 0.0, "log_syncs_s": 0.0,
            "buffers_written_s": {"checkpointer": 0.0, "bgwriter": 0.0, "backend": 0.0}
        });
        let r: LoadRates = serde_json::from_value(v).unwrap();
        assert_eq!((r.log_writes_s.0, r.avg_log_sync_ms), (0.0, None));
    }

    #[test]
    fn no_reads_no_average_and_resets_do_not_wrap() {
        let a = snap(10, 5, 1.0, 100);
        let d = snap(20, 5, 1.0, 50).since(&a);
        assert_eq!(d.rates(1.0).avg_read_ms, None);
        assert_eq!(d.log_bytes.0, 0, "a reset counter gives 0, not a wrap");
        assert_eq!(LoadDelta::default().rates(0.0), LoadRates::default());
    }

    #[test]
    fn untimed_reads_have_no_average() {
        let d = LoadDelta {
            blks_read: 100,
            blk_read_time_ms: 0.0,
            reads_untimed: true,
            ..LoadDelta::default()
        };
        let r = d.since(&LoadDelta::default()).rates(1.0);
        assert_eq!((r.physical_reads_s, r.avg_read_ms), (100.0, None));
        let mut sum = LoadDelta::default();
        sum += &d;
        assert!(sum.reads_untimed);
    }

    #[test]
    fn untimed_log_writes_have_no_average() {
        let d = LoadDelta {
            log_writes: 100,
            log_syncs: 10,
            log_untimed: true,
            ..LoadDelta::default()
        };
        let r = d.since(&LoadDelta::default()).rates(1.0);
        assert_eq!((r.log_writes_s.0, r.avg_log_write_ms), (100.0, None));
        assert_eq!(r.avg_log_sync_ms, None);
    }

    #[test]
    fn deltas_add_up() {
        let mut t = LoadDelta::default();
        t += &snap(1, 2, 3.0, 4);
        t += &snap(1, 2, 3.0, 4);
        assert_eq!(
            (t.blks_hit, t.blks_read, t.blk_read_time_ms, t.log_bytes.0),
            (2, 4, 6.0, 8)
        );
        assert_eq!(t.buffers_written(), 24);
    }

    #[test]
    fn rate_keys_are_the_documented_ones() {
        let v = serde_json::to_value(LoadRates::default()).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "avg_log_sync_ms",
                "avg_log_write_ms",
                "avg_read_ms",
                "buffers_written_s",
                "by_process",
                "commits_s",
                "log_bytes_s",
                "log_syncs_s",
                "log_writes_s",
                "logical_reads_s",
                "physical_reads_s",
                "rows_updated_s",
            ]
        );
        let b = serde_json::to_value(BuffersWritten::default()).unwrap();
        assert_eq!(b.as_object().unwrap().len(), 3);
    }
}
