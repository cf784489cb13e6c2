//! A finished `iogauge db run`: the sessions, the database's load profile and wait events,
//! and the devices and CPU, per interval on one grid and over the measured window; with the
//! comparison a DBA needs most — how many of PostgreSQL's "physical" reads reached a disk.

use crate::db::aas::Aas;
use crate::db::outcome::{DbInterval, DbOutcome, SessionTotals};
use crate::db::profile::LoadRates;
use crate::db::relations::RelationIo;
use crate::db::workload::{Grid, Workload};
use crate::derive::{Derived, DiskRates};
use crate::finding::Finding;
use crate::hardware::system_between;
use crate::meta::{Kind, Meta};
use crate::preflight::Preflight;
use crate::run::Steady;
use crate::system::Snapshot;
use iogauge_stats::{LatSummary, Nanos, Phase};
use serde::{Deserialize, Serialize};

/// What the sessions did over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub ops: u64,
    pub ops_s: f64,
    pub reads_s: f64,
    pub updates_s: f64,
    pub rows_s: f64,
    /// Per read operation (`work_unit` rows through the index).
    pub read_lat_us: LatSummary,
    /// Per update operation, commit included.
    pub update_lat_us: LatSummary,
}

impl SessionSummary {
    pub fn of(s: &SessionTotals, secs: f64) -> Self {
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        SessionSummary {
            ops: s.ops(),
            ops_s: per_s(s.ops()),
            reads_s: per_s(s.read_ops),
            updates_s: per_s(s.update_ops),
            rows_s: per_s(s.rows_read + s.rows_updated),
            read_lat_us: s.read_lat.summary(),
            update_lat_us: s.update_lat.summary(),
        }
    }
}

/// One setting in force, as `pg_settings` shows it (`setting` in `unit`s, e.g. 2048 × 8kB).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    pub name: String,
    pub setting: String,
    pub unit: Option<String>,
}

/// Where the server ran and what it was set to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DbServer {
    /// PostgreSQL or MariaDB (absent in documents from before MariaDB: PostgreSQL).
    #[serde(default)]
    pub engine: super::engine::Engine,
    /// A private cluster iogauge started (else an existing server by DSN).
    pub private: bool,
    pub version: String,
    /// The cluster directory (private) or the DSN without its password.
    pub location: String,
    /// Memory cgroup limit on the private server (its page cache included), bytes.
    pub cache_limit: Option<u64>,
    pub settings: Vec<Setting>,
}

/// The data set against the memory that could cache it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DataSet {
    pub schemas: u32,
    pub blocks_per_schema: u64,
    pub bytes: u64,
    pub ram_bytes: u64,
    pub shared_buffers_bytes: Option<u64>,
}

/// PostgreSQL's reads from the OS against the reads the disks completed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheCompare {
    pub disks: Vec<String>,
    /// `blks_read` per second: what PostgreSQL calls physical reads.
    pub db_physical_reads_s: f64,
    pub db_read_mb_s: f64,
    pub device_reads_s: f64,
    pub device_read_mb_s: f64,
    /// Share of the database's reads (blocks) that caused no device read (served by the OS
    /// page cache), 0–100; `None` without database reads. Counted in reads, not bytes: the
    /// kernel's read-ahead makes the devices read more bytes than asked, which hid the cache
    /// (documents stored before #27 compared bytes).
    pub page_cache_pct: Option<f64>,
    /// The sentence for the summary in documents stored before the findings (now the
    /// `page-cache-reads` and `read-ahead` findings say it); `None` in new ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// PostgreSQL's writes against the writes the disks under its data and WAL received: what a
/// mirror below multiplies (the ASM study: device writes ≈ copies × the load profile's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WriteCompare {
    pub disks: Vec<String>,
    /// PostgreSQL's write calls per second: buffers written (checkpointer, background writer,
    /// backends) plus WAL writes.
    pub db_writes_s: f64,
    /// Writes the disks received per second, counted as the bios the layers above sent:
    /// writes completed plus those merged into them (iostat's w/s + wrqm/s). A block layer
    /// that joins adjacent writes (in a throttle's or a scheduler's queue) would otherwise
    /// hide copies: under a throttle a mirror's writes merge more than a single copy's.
    /// Where the tracer attributed requests, the job's share of them only (see
    /// [`write_compare`]).
    pub device_writes_s: f64,
    /// `device_writes_s / db_writes_s`; `None` without database writes or without the disks
    /// sampled.
    pub per_db_write: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DbSummary {
    pub elapsed_s: f64,
    pub sessions: SessionSummary,
    pub db: LoadRates,
    pub aas: Aas,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbIntervalReport {
    pub phase: Phase,
    pub t_s: f64,
    pub dur_s: f64,
    pub sessions: SessionSummary,
    pub db: LoadRates,
    pub aas: Aas,
    /// The disks' writes per PostgreSQL write in this interval ([`WriteCompare`]); absent
    /// without database writes, or in documents stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_writes_per_db_write: Option<f64>,
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub system: Option<Derived>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbReport {
    #[serde(flatten)]
    pub meta: Meta,
    /// Why the run ended early, when not by Ctrl-C (the server died, …).
    pub error: Option<String>,
    pub server: DbServer,
    pub workload: Workload,
    pub grid: Grid,
    pub data_set: DataSet,
    /// What the OS says about where the data (and WAL) live: filesystem, device chain,
    /// rotational, md arrays, the data set's span of each device. `None` for a server given
    /// by DSN (its storage may be elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<Preflight>,
    pub summary: DbSummary,
    /// Whether the measured window's operations/s settled (the run summary's criterion).
    pub steady: Option<Steady>,
    pub cache: Option<CacheCompare>,
    /// PostgreSQL's writes against the disks' over the measured window; absent in documents
    /// stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<WriteCompare>,
    /// The disks behind the data, for the figures per disk (ORION's IOPS per spindle):
    /// `db run --disks`, else how many of the data's disks the run sampled (`cache.disks`);
    /// absent in documents stored before it was kept, and for a server whose disks are
    /// unknown (see [`DbReport::spindles`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_disks: Option<u32>,
    /// Operations per session over the whole run.
    pub per_session: Vec<u64>,
    /// Blocks read and hit per second per relation over the measured window, busiest
    /// first ([`crate::db::relations`]: what PostgreSQL does and does not count per
    /// relation); absent in documents stored before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relations: Vec<RelationIo>,
    pub intervals: Vec<DbIntervalReport>,
    pub warnings: Vec<String>,
    /// What limits the storage, ranked by the share of the time each explains
    /// ([`crate::finding`]); empty in documents stored before iogauge diagnosed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Snapshot>,
    /// Over MPI: each rank's part (empty for one process).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<DbRank>,
    /// `db run --capture`: the stored trace of the run's own block requests on the data's
    /// disks (`iogauge traces show N`, `iogauge replay N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<i64>,
}

/// One MPI rank of a database run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbRank {
    pub rank: u32,
    pub host: String,
    /// The server its sessions ran on: its own cluster (`--dir PATH.{rank}`), or the job's
    /// one server (`--dsn`).
    pub location: String,
    /// Its sessions: the job's session numbers `first_session ..` (one server), or a whole
    /// workload of its own (its own server).
    pub first_session: u32,
    pub sessions: u32,
    /// Its measured window: its sessions' operations and latencies, and the load profile and
    /// wait events its sampler saw on its server.
    pub summary: DbSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What it sent rank 0 (its interval series with histograms, its summary), bytes.
    #[serde(default)]
    pub sent_bytes: u64,
}

/// What `DbReport::build` needs besides the outcome.
pub struct DbContext {
    pub server: DbServer,
    pub workload: Workload,
    pub grid: Grid,
    pub data_set: DataSet,
    pub disks: Vec<String>,
    /// `db run --disks`: the disks behind the data when `disks` does not say it (an array
    /// seen as one device, a server by DSN); `None` counts `disks`.
    pub num_disks: Option<u32>,
    /// The disks under the data and the WAL, whose writes are compared with PostgreSQL's.
    pub write_disks: Vec<String>,
    pub samples: Vec<Snapshot>,
    pub preflight: Option<Preflight>,
}

fn interval_report(
    iv: &DbInterval,
    samples: &[Snapshot],
    write_disks: &[String],
) -> DbIntervalReport {
    let secs = iv.secs();
    let system = system_between(samples, Nanos(iv.start_ns), Nanos(iv.end_ns));
    let db = iv.rates();
    DbIntervalReport {
        device_writes_per_db_write: system
            .as_ref()
            .and_then(|d| write_compare(&db, d, write_disks).per_db_write),
        phase: if iv.ramp { Phase::Ramp } else { Phase::Measure },
        t_s: iv.start_ns as f64 / 1e9,
        dur_s: secs,
        sessions: SessionSummary::of(&iv.sessions, secs),
        db,
        aas: iv.aas.clone(),
        system,
    }
}

impl DbReport {
    pub fn build(o: &DbOutcome, ctx: DbContext) -> DbReport {
        let m = o.measured();
        let measured: Vec<&DbInterval> = o.intervals.iter().filter(|i| !i.ramp).collect();
        let window = measured
            .first()
            .zip(measured.last())
            .map(|(a, b)| (a.start_ns, b.end_ns));
        let rates = m.rates();
        let whole = window.and_then(|(a, b)| system_between(&ctx.samples, Nanos(a), Nanos(b)));
        let page = ctx.server.engine.page_bytes();
        let cache = whole
            .as_ref()
            .map(|d| cache_compare(&rates, d, &ctx.disks, page));
        let num_disks = ctx.num_disks.or_else(|| count(&ctx.disks));
        let writes = whole
            .as_ref()
            .map(|d| write_compare(&rates, d, &ctx.write_disks));
        let started_at = o
            .started
            .and_then(|t| jiff::Timestamp::try_from(t).ok())
            .map(|t| t.round(jiff::Unit::Millisecond).unwrap_or(t).to_string())
            .unwrap_or_default();
        DbReport {
            meta: Meta::new(Kind::DbRun, started_at, o.interrupted),
            error: o.error.clone(),
            server: DbServer {
                version: if o.server_version.is_empty() {
                    ctx.server.version.clone()
                } else {
                    o.server_version.clone()
                },
                ..ctx.server
            },
            workload: ctx.workload,
            grid: ctx.grid,
            data_set: ctx.data_set,
            preflight: ctx.preflight,
            summary: DbSummary {
                elapsed_s: m.secs,
                sessions: SessionSummary::of(&m.sessions, m.secs),
                db: rates,
                aas: m.aas.clone(),
            },
            steady: steady(&measured),
            cache,
            writes,
            num_disks,
            per_session: o.per_session.clone(),
            relations: o.relations.as_ref().map_or_else(Vec::new, |w| w.rates()),
            intervals: o
                .intervals
                .iter()
                .map(|iv| interval_report(iv, &ctx.samples, &ctx.write_disks))
                .collect(),
            warnings: Vec::new(),
            findings: Vec::new(),
            samples: ctx.samples,
            ranks: Vec::new(),
            trace: None,
        }
    }

    /// The disks behind the data: [`DbReport::num_disks`], or for a document stored before it
    /// was kept the data's disks the run compared its reads with; `None` when unknown.
    pub fn spindles(&self) -> Option<u32> {
        self.num_disks
            .or_else(|| count(self.cache.as_ref().map_or(&[], |c| &c.disks)))
    }
}

/// How many `disks` there are, `None` for none.
fn count(disks: &[String]) -> Option<u32> {
    u32::try_from(disks.len()).ok().filter(|&n| n > 0)
}

fn steady(measured: &[&DbInterval]) -> Option<Steady> {
    let ops: Vec<f64> = measured
        .iter()
        .map(|i| i.sessions.ops() as f64 / i.secs().max(1e-9))
        .collect();
    let starts: Vec<f64> = measured.iter().map(|i| i.start_ns as f64 / 1e9).collect();
    Steady::of_series(&ops, &starts, measured.first()?.secs())
}

/// The database's reads from the OS (pages of `page_bytes`) against what `disks` completed
/// in the same window.
pub fn cache_compare(
    db: &LoadRates,
    d: &Derived,
    disks: &[String],
    page_bytes: u64,
) -> CacheCompare {
    let sum = |f: &dyn Fn(&DiskRates) -> f64| -> f64 {
        disks.iter().filter_map(|n| d.disks.get(n)).map(f).sum()
    };
    let db_mb = db.physical_reads_s * page_bytes as f64 / (1 << 20) as f64;
    let dev_mb = sum(&|r| r.r_mb_s);
    let dev_reads = sum(&|r| r.r_s);
    // In reads: each block PostgreSQL asked the OS for that reached a disk caused at least
    // one device read (read-ahead makes those reads larger, not more numerous). No share
    // without a disk sampled: the data's devices were unknown (a filesystem without one).
    let pct = (sampled_any(d, disks) && db.physical_reads_s > 0.0)
        .then(|| ((1.0 - dev_reads / db.physical_reads_s) * 100.0).clamp(0.0, 100.0));
    CacheCompare {
        disks: disks.to_vec(),
        db_physical_reads_s: db.physical_reads_s,
        db_read_mb_s: db_mb,
        device_reads_s: dev_reads,
        device_read_mb_s: dev_mb,
        page_cache_pct: pct,
        note: None,
    }
}

/// The database's write calls against the write bios `disks` received in the same window:
/// the job's own share of them where the block-layer tracer attributed each disk's requests
/// (its write requests ÷ all write requests there; a filesystem journal's commits and other
/// processes' writes are not the database's copies), else all of them.
pub fn write_compare(db: &LoadRates, d: &Derived, disks: &[String]) -> WriteCompare {
    let db_writes = db.physical_writes_s();
    let device: f64 = disks
        .iter()
        .filter_map(|n| Some((d.disks.get(n)?, d.layers.get(n))))
        .map(|(r, l)| {
            let own = l.and_then(|l| {
                let o = l.ours.as_ref()?;
                (l.write.req_s > 0.0).then(|| (o.write.req_s / l.write.req_s).min(1.0))
            });
            (r.w_s + r.wrqm_s) * own.unwrap_or(1.0)
        })
        .sum();
    WriteCompare {
        disks: disks.to_vec(),
        db_writes_s: db_writes,
        device_writes_s: device,
        per_db_write: (sampled_any(d, disks) && db_writes > 0.0).then(|| device / db_writes),
    }
}

/// Whether any of `disks` was sampled in `d`: none means the data's devices were unknown.
fn sampled_any(d: &Derived, disks: &[String]) -> bool {
    disks.iter().any(|n| d.disks.contains_key(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Measured on btrfs raid1c3 over three throttled loop devices: 296 PostgreSQL writes a
    /// second, the members completed 658 writes and merged 244 more: 3.04 copies per write
    /// (completed writes alone said 2.22).
    #[test]
    fn device_writes_count_merged_bios() {
        let db = LoadRates {
            log_writes_s: iogauge_stats::units::Iops(4.0),
            buffers_written_s: crate::db::profile::BuffersWritten {
                checkpointer: 0.0,
                bgwriter: 100.0,
                backend: 192.0,
            },
            ..Default::default()
        };
        let mut d = Derived::default();
        for (n, w, m) in [
            ("loop0", 220.0, 80.0),
            ("loop1", 219.0, 81.0),
            ("loop2", 219.0, 83.0),
        ] {
            d.disks.insert(
                n.into(),
                DiskRates {
                    w_s: w,
                    wrqm_s: m,
                    ..Default::default()
                },
            );
        }
        let disks: Vec<String> = ["loop0", "loop1", "loop2"].map(String::from).into();
        let c = write_compare(&db, &d, &disks);
        assert_eq!(c.db_writes_s, 296.0);
        assert!(
            (c.per_db_write.unwrap() - 902.0 / 296.0).abs() < 1e-9,
            "{c:?}"
        );
        assert_eq!(write_compare(&db, &d, &[]).per_db_write, None, "no disks");
        assert_eq!(
            write_compare(&LoadRates::default(), &d, &disks).per_db_write,
            None
        );
    }

    #[test]
    fn page_cache_share_in_blocks_not_bytes() {
        let db = LoadRates {
            physical_reads_s: 1280.0, // 10 MiB/s of 8 KiB blocks
            ..Default::default()
        };
        let mut d = Derived::default();
        d.disks.insert(
            "vda".into(),
            DiskRates {
                r_s: 704.0,
                r_mb_s: 5.5,
                ..Default::default()
            },
        );
        let c = cache_compare(&db, &d, &["vda".to_string()], 8192);
        assert!((c.db_read_mb_s - 10.0).abs() < 1e-9);
        assert!((c.page_cache_pct.unwrap() - 45.0).abs() < 1e-9);
        assert!(c.note.is_none(), "the findings say it");
        // Read-ahead: the disk read more bytes than asked (12 MiB/s) in fewer, larger reads
        // (160 of 75 KiB): in bytes 0% came from the cache, in blocks 87.5% did (issue #27).
        let vda = d.disks.get_mut("vda").unwrap();
        vda.r_mb_s = 12.0;
        vda.r_s = 160.0;
        let c = cache_compare(&db, &d, &["vda".to_string()], 8192);
        assert!((c.page_cache_pct.unwrap() - 87.5).abs() < 1e-9, "{c:?}");
        // Every block a device read of its own: none from the cache.
        d.disks.get_mut("vda").unwrap().r_s = 1300.0;
        let c = cache_compare(&db, &d, &["vda".to_string()], 8192);
        assert_eq!(c.page_cache_pct, Some(0.0));
        let none = cache_compare(&LoadRates::default(), &d, &["vda".to_string()], 8192);
        assert_eq!(none.page_cache_pct, None);
        // The data's disks unknown: no share, rather than "100% from the cache".
        assert_eq!(cache_compare(&db, &d, &[], 8192).page_cache_pct, None);
        assert_eq!(
            cache_compare(&db, &d, &["sdb".into()], 8192).page_cache_pct,
            None
        );
    }
}
