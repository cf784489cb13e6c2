//! The placement study's table (issue #28: ORION beside SLOB): a calibration and a database
//! run on the same storage, figure by figure — what the calibration found the disks do for
//! small random reads under its latency cap, against what the disks did under PostgreSQL.
//! The database run's side is its devices' figures: PostgreSQL's own reads (`blks_read`)
//! count blocks the OS page cache served; they are shown too, labelled, without a ratio.
//! Pure: `compare` and `report` render it.

use iogauge_model::calib::{iops_per_disk, CalibrationReport, Criterion, PointReport, Step};
use iogauge_model::db::engine::Engine;
use iogauge_model::db::report::DbReport;
use iogauge_model::derive::Derived;
use iogauge_model::meta::Meta;
use iogauge_model::preflight::leaves;
use iogauge_stats::Phase;
use serde::Serialize;

/// One result of the pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    pub id: i64,
    pub label: Option<String>,
    pub started_at: String,
    pub interrupted: bool,
    /// What its reads per disk divide by: calibrate's `--disks`; db run's `--disks`, else
    /// the data's disks it sampled (`None`: unknown, a server given by DSN).
    pub disks: Option<u32>,
    /// The disks whose figures it holds, by kernel name (the leaves under its targets).
    pub devices: Vec<String>,
}

/// One figure of both, and db ÷ calibration where both measure the same thing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub metric: &'static str,
    /// Its name in a table.
    pub name: &'static str,
    /// What each side's figure is.
    pub about: &'static str,
    pub unit: &'static str,
    pub calibration: Option<f64>,
    pub db_run: Option<f64>,
    /// `db_run / calibration`; `None` where one is missing or they are not alike.
    pub ratio: Option<f64>,
}

/// The placement table of a calibration and a database run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Placement {
    pub calibration: Side,
    pub db_run: Side,
    /// Whether both measured the same disks; `None` when either's are unknown.
    pub same_disks: Option<bool>,
    /// The calibration's cap on its small reads' latency (`criterion` ≤ `cap_ms`).
    pub criterion: Criterion,
    pub cap_ms: f64,
    /// The calibration's small I/O size, bytes (8 KiB, PostgreSQL's block, by default).
    pub small_block: u64,
    /// Outstanding I/Os of the calibration's point at max_iops.
    pub outstanding: Option<u32>,
    /// Share of PostgreSQL's reads the page cache served, 0–100 (the db run's own figure).
    pub page_cache_pct: Option<f64>,
    pub rows: Vec<Row>,
    /// The db run's database, for the legend's words (the rows name it already).
    #[serde(skip)]
    pub engine: Engine,
}

/// The table of calibration `cal` (stored as `cal_id`) beside database run `db` (`db_id`).
pub fn placement(
    (cal_id, cal): (i64, &CalibrationReport),
    (db_id, db): (i64, &DbReport),
) -> Placement {
    let cal_disks = calibration_disks(cal);
    let cache = db.cache.as_ref();
    let db_disks: Vec<String> = cache.map_or_else(Vec::new, |c| c.disks.clone());
    let side = |id: i64, meta: &Meta, disks: Option<u32>, devices: &[String]| Side {
        id,
        label: meta.label.clone(),
        started_at: meta.started_at.clone(),
        interrupted: meta.interrupted,
        disks,
        devices: devices.to_vec(),
    };
    Placement {
        same_disks: (!cal_disks.is_empty() && !db_disks.is_empty()).then(|| cal_disks == db_disks),
        rows: rows(cal, db, &cal_disks, &db_disks),
        calibration: side(cal_id, &cal.meta, Some(cal.num_disks), &cal_disks),
        db_run: side(db_id, &db.meta, db.spindles(), &db_disks),
        criterion: cal.options.criterion,
        cap_ms: cal.options.max_latency_us / 1e3,
        small_block: cal.options.small_bs,
        outstanding: cal.outstanding,
        page_cache_pct: cache.and_then(|c| c.page_cache_pct),
        engine: db.server.engine,
    }
}

/// The figures of `cal` (on `cal_disks`) and `db` (its data on `db_disks`), a row each.
fn rows(
    cal: &CalibrationReport,
    db: &DbReport,
    cal_disks: &[String],
    db_disks: &[String],
) -> Vec<Row> {
    let best = best_point(cal);
    let cache = db.cache.as_ref();
    let db_window = window(
        db.intervals
            .iter()
            .map(|i| (i.phase, i.dur_s, i.system.as_ref())),
    );
    let cal_window = |p: &PointReport| {
        let ivs = p.intervals.iter();
        read_await_ms(
            &window(ivs.map(|i| (i.phase, i.dur_s, i.system.as_ref()))),
            cal_disks,
        )
    };
    let device_reads = cache.map(|c| c.device_reads_s);
    let spindles = db.spindles();
    // The database's own reads/s (the metric keeps its first name, pg_reads_s, for both).
    let db_reads = match db.server.engine {
        Engine::Postgres => ("PostgreSQL reads/s", "PostgreSQL's reads/s (blks_read): blocks asked of the OS, page-cache hits included; no ratio, the storage did not serve them all"),
        Engine::Mariadb => ("MariaDB reads/s", "InnoDB's data file reads/s (Innodb_data_reads): pages asked of the OS, with O_DIRECT by default so the page cache serves none; no ratio, a database figure beside the devices'"),
    };
    vec![
        row(
            "reads_s",
            "reads/s",
            "the calibration's small-I/O IOPS at the latency cap (max_iops); the reads/s the devices under the data completed",
            "IOPS",
            cal.max_iops,
            device_reads,
        ),
        Row {
            ratio: None,
            ..row(
                "pg_reads_s",
                db_reads.0,
                db_reads.1,
                "reads/s",
                None,
                Some(db.summary.db.physical_reads_s),
            )
        },
        row(
            "read_ms",
            "read latency, ms",
            "the mean latency of the calibration's small reads at max_iops; the database's mean single-block read time (PostgreSQL's blk_read_time / blks_read, InnoDB's data file read time from performance_schema)",
            "ms",
            best.map(|p| p.point.lat_us.mean / 1e3),
            db.summary.db.avg_read_ms,
        ),
        row(
            "device_await_ms",
            "device await, ms",
            "the devices' read await (iostat r_await: the time reads took over the reads), at the calibration's max_iops point and over the db run's measured window",
            "ms",
            best.and_then(cal_window),
            read_await_ms(&db_window, db_disks),
        ),
        row(
            "reads_s_per_disk",
            "reads/s per disk",
            "reads/s per disk (ORION's IOPS per spindle): max_iops over calibrate --disks; the devices' reads/s over db run --disks (else the data's disks)",
            "IOPS",
            iops_per_disk(cal.max_iops, cal.num_disks),
            device_reads.zip(spindles).map(|(r, n)| r / f64::from(n)),
        ),
        row(
            "read_mib_s",
            "read MiB/s",
            "read throughput: the calibration's small-I/O point at max_iops; the devices under the data",
            "MiB/s",
            best.map(|p| p.point.mbps),
            cache.map(|c| c.device_read_mb_s),
        ),
        row(
            "max_mib_s",
            "max MiB/s, large reads",
            "the calibration's large random reads at their best (max_mbps); a db run of single-block reads has none",
            "MiB/s",
            cal.max_mbps,
            None,
        ),
    ]
}

/// A row with its ratio db ÷ calibration (none for a calibration figure of 0).
fn row(
    metric: &'static str,
    name: &'static str,
    about: &'static str,
    unit: &'static str,
    calibration: Option<f64>,
    db_run: Option<f64>,
) -> Row {
    Row {
        metric,
        name,
        about,
        unit,
        calibration,
        db_run,
        ratio: calibration
            .zip(db_run)
            .filter(|(c, _)| *c > 0.0)
            .map(|(c, d)| d / c),
    }
}

/// The small-I/O point max_iops was taken from (its IOPS copied exactly, as the digest finds
/// it).
fn best_point(c: &CalibrationReport) -> Option<&PointReport> {
    c.points.iter().find(|p| {
        p.point.step == Step::Small
            && !p.point.superseded
            && Some(p.point.iops) == c.max_iops
            && Some(p.point.outstanding) == c.outstanding
    })
}

/// The disks under a calibration's targets, sorted, each once: the leaves of the device
/// chains its preflight resolved, else the targets' own devices.
fn calibration_disks(c: &CalibrationReport) -> Vec<String> {
    let mut disks: Vec<String> = c
        .preflight
        .targets
        .iter()
        .filter_map(|t| t.device.as_ref())
        .flat_map(|d| leaves(d).into_iter().map(|l| l.name.clone()))
        .collect();
    if disks.is_empty() {
        disks = c.targets.iter().filter_map(|t| t.device.clone()).collect();
    }
    disks.sort();
    disks.dedup();
    disks
}

/// The measured window's intervals (phase, length s, figures): each length with its figures.
fn window<'a>(
    ivs: impl Iterator<Item = (Phase, f64, Option<&'a Derived>)>,
) -> Vec<(f64, Option<&'a Derived>)> {
    ivs.filter(|(phase, _, _)| *phase == Phase::Measure)
        .map(|(_, dur, d)| (dur, d))
        .collect()
}

/// The read await of `disks` over `intervals` (length s, figures): the time their reads
/// took over their reads. iostat's r_await is Δtime reading ÷ Δreads (sysstat's
/// `compute_ext_disk_stats`), so each interval's await weighs by its reads (r/s × length);
/// `None` without a read.
fn read_await_ms(intervals: &[(f64, Option<&Derived>)], disks: &[String]) -> Option<f64> {
    let (mut time, mut reads) = (0.0, 0.0);
    for (dur, d) in intervals {
        let Some(d) = d else { continue };
        for r in disks.iter().filter_map(|n| d.disks.get(n)) {
            let n = r.r_s * dur;
            reads += n;
            time += r.r_await * n;
        }
    }
    (reads > 0.0).then(|| time / reads)
}

#[cfg(test)]
mod tests;
