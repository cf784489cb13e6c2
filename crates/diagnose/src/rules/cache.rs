//! **Page cache** — the seeds' first lesson: workload I/O is not hardware I/O. Reads the
//! devices never saw were served from memory; writes the devices have not seen wait in the
//! page cache (write-back). Compared in I/Os (counts), never in bytes: read-ahead makes the
//! devices read more bytes than asked for, which would hide the cache (the 0% of issue #27).
//!
//! - A run's reads: device reads ÷ workload reads (the disks under the targets) < 0.8.
//!   Impact = (1 − that ratio) × the reads' share of the workload's I/Os. An O_DIRECT run
//!   whose reads reached the device above the disks it targets (a loop, dm or md device)
//!   but not the disks: that device's backing store answered (a cached or sparse backing
//!   file), and the impact is further × the share of the read latency spent in that device
//!   (its read await ÷ the latency): a throttle above it explains the rest.
//! - A buffered run's writes: device writes ÷ workload writes < 0.8. Impact = (1 − ratio) ×
//!   the writes' share.
//! - A database run: device reads ÷ the database's reads from the OS (PostgreSQL's
//!   `blks_read`, InnoDB's `Innodb_buffer_pool_reads`; both per second, in pages and
//!   requests) < 0.8. Impact = (1 − ratio) × max(the data-file read waits' share of DB time,
//!   0.1): the reads are cache hits, so the share of DB time they hold is small by nature,
//!   and the run measured memory; the floor stays below what a finding explaining the run's
//!   time has (0.2).
//!
//! - A calibration: its small-I/O point at 1 outstanding I/O took < 5 µs on average, below
//!   what any storage device can do: memory answers (the calibration's old verdict). Impact
//!   = 1: every point of the curve is then the cache's.
//!
//! Ground truth: `diagnose::shared::buffered_reads` (buffered reads of a small file the page
//! cache holds) and `diagnose::shared::buffered_writes`.

use super::db::{io_share, DbClass};
use crate::made::{ev, ratio, Made};
use crate::view::{Whole, Work};
use iogauge_model::db::engine::Engine;
use iogauge_model::derive::DiskRates;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

/// Device I/Os per workload I/O below which a cache absorbed them.
pub const REACHED: f64 = 0.8;
/// A database run's cache finding is weighted by at least this share of DB time: its reads
/// are cache hits, so the time they hold is small by nature, yet the run then measured
/// memory, not the storage. Below the 0.2 at which a finding claims to explain the run's
/// time (#45: at 0.2 a lock-bound run's few cached reads read as a second limit).
pub const DB_FLOOR: f64 = 0.1;
const SOURCE: &str =
    "workload vs hardware I/O (the seed studies: collectl/iostat beside the load profile)";

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    match doc {
        Document::Run(_) => run(w),
        Document::DbRun(r) => {
            let Some(c) = &r.cache else {
                return Vec::new();
            };
            // No share without the data's disks sampled (a filesystem whose devices were
            // not found): no device reads seen is not "all from the cache".
            if c.db_physical_reads_s <= 0.0 || c.disks.is_empty() || c.page_cache_pct.is_none() {
                return Vec::new();
            }
            let reached = ratio(c.device_reads_s, c.db_physical_reads_s);
            if reached >= REACHED {
                return Vec::new();
            }
            let share = io_share(&r.summary.aas, &[DbClass::Read]).max(DB_FLOOR);
            let engine = r.server.engine;
            let mut evidence = vec![
                ev(
                    match engine {
                        Engine::Postgres => "PostgreSQL reads from the OS (blks_read)",
                        Engine::Mariadb => "MariaDB reads from the OS (Innodb_buffer_pool_reads)",
                    },
                    c.db_physical_reads_s,
                    "/s",
                ),
                ev("device reads", c.device_reads_s, "/s"),
                ev(
                    "reads that never reached a disk",
                    (1.0 - reached) * 100.0,
                    "%",
                ),
            ];
            if let Some(ms) = r.summary.db.avg_read_ms {
                evidence.push(ev(format!("{}'s average read", engine.product()), ms, "ms"));
            }
            vec![Made {
                rule: "page-cache-reads",
                layer: Layer::PageCache,
                title: format!(
                    "{:.0}% of {}'s reads (in pages) never reached a disk: the OS page cache served them",
                    (1.0 - reached) * 100.0,
                    engine.product()
                ),
                impact: (1.0 - reached) * share,
                evidence,
                next: "to measure the storage, cap the server's page cache (--cache-limit, as root) or use a data set larger than RAM",
                source: SOURCE,
            }
            .into()]
        }
        Document::Calibration(c) => calibration(c),
    }
}

/// Latency at 1 outstanding I/O below which memory, not a device, answers, µs.
pub const MEMORY_US: f64 = 5.0;

fn calibration(c: &iogauge_model::calib::CalibrationReport) -> Vec<Finding> {
    use iogauge_model::calib::Step;
    let Some(qd1) = c
        .points
        .iter()
        .map(|p| &p.point)
        .find(|p| p.step == Step::Small && p.outstanding == 1 && !p.superseded)
    else {
        return Vec::new();
    };
    if qd1.lat_us.mean >= MEMORY_US || qd1.ios == 0 {
        return Vec::new();
    }
    vec![Made {
        rule: "page-cache-reads",
        layer: Layer::PageCache,
        title: format!(
            "latency at 1 outstanding I/O is {:.1} µs, below what any storage device can do: memory (the page cache?) is answering",
            qd1.lat_us.mean
        ),
        impact: 1.0,
        evidence: vec![
            ev("mean latency at 1 outstanding I/O", qd1.lat_us.mean, "µs"),
            ev("IOPS at 1 outstanding I/O", qd1.iops, "IOPS"),
        ],
        next: "calibrate with O_DIRECT (drop --buffered) on a target no cache above the device holds",
        source: SOURCE,
    }
    .into()]
}

fn run(w: &Whole) -> Vec<Finding> {
    let Some(k) = w.work else {
        return Vec::new();
    };
    if w.bottom.is_empty() {
        return Vec::new();
    }
    let mut v = Vec::new();
    let rs = k.read_share();
    let reads = ratio(w.bottom_sum(|d| d.r_s), k.read.iops);
    if k.read.iops > 0.0 && reads < REACHED {
        let pct = (1.0 - reads) * 100.0;
        let (title, impact, evidence, next) = match above_the_disks(w, k) {
            Some((name, at, share)) => (
                format!("{pct:.0}% of the workload's reads reached {name} but not the disks under it: what backs {name} answered from memory (a cached or sparse backing file)"),
                (1.0 - reads) * rs * share,
                vec![
                    ev("workload reads", k.read.iops, "IOPS"),
                    ev(format!("{name} reads"), at.r_s, "IOPS"),
                    ev("disk reads", w.bottom_sum(|d| d.r_s), "IOPS"),
                    ev(format!("{name} read await"), at.r_await, "ms"),
                ],
                "the device's figures are its backing store's memory: back it with a preallocated file (or a disk) whose cache it bypasses (losetup --direct-io=on)",
            ),
            None => (
                format!(
                    "{pct:.0}% of the workload's reads never reached a device: {} absorbed them",
                    if k.direct { "a cache above the disks" } else { "the page cache" }
                ),
                (1.0 - reads) * rs,
                vec![
                    ev("workload reads", k.read.iops, "IOPS"),
                    ev("device reads", w.bottom_sum(|d| d.r_s), "IOPS"),
                    ev("device reads per workload read", reads, "×"),
                ],
                "the figures are memory's, not the storage's: use O_DIRECT (drop --buffered) or a data set larger than RAM",
            ),
        };
        v.push(Made {
            rule: "page-cache-reads",
            layer: Layer::PageCache,
            title,
            impact,
            evidence,
            next,
            source: SOURCE,
        });
    }
    let writes = ratio(w.bottom_sum(|d| d.w_s), k.write.iops);
    if !k.direct && k.write.iops > 0.0 && writes < REACHED {
        v.push(Made {
            rule: "page-cache-writes",
            layer: Layer::PageCache,
            title: format!(
                "{:.0}% of the workload's writes had not reached a device: they wait in the page cache (write-back)",
                (1.0 - writes) * 100.0
            ),
            impact: (1.0 - writes) * (1.0 - rs),
            evidence: vec![
                ev("workload writes", k.write.iops, "IOPS"),
                ev("device writes", w.bottom_sum(|d| d.w_s), "IOPS"),
                ev("device writes per workload write", writes, "×"),
            ],
            next: "the writes were measured into memory: use O_DIRECT, or a run long enough for write-back to reach steady state",
            source: SOURCE,
        });
    }
    v.into_iter().map(Finding::from).collect()
}

/// An O_DIRECT run's reads that reached a device above the disks (a loop, dm or md device
/// the target is) but not the disks under it: that device's name, its figures and the
/// share of the workload's read latency spent in it (its read await ÷ the latency, at most
/// 1). Its backing store answered from memory, and only that time is the cache's: a loop
/// device behind a cgroup throttle spends 30 µs of a 13 ms read there (#45 saw "a cache
/// absorbed them" explain 100% of a throttled run's time).
fn above_the_disks(w: &Whole, k: Work) -> Option<(&str, &DiskRates, f64)> {
    if !k.direct || k.read.lat_us <= 0.0 {
        return None;
    }
    let (name, at) = w
        .entry
        .iter()
        .filter(|n| !w.bottom.contains(n))
        .filter_map(|n| Some((n.as_str(), w.disks.get(n)?)))
        .max_by(|a, b| a.1.r_s.total_cmp(&b.1.r_s))?;
    (at.r_s >= REACHED * k.read.iops)
        .then(|| (name, at, (at.r_await * 1e3 / k.read.lat_us).min(1.0)))
}
