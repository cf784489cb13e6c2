//! A calibration as data: what was asked (`CalibrateSpec`), each measured point of the
//! curves and ORION's matrix cells, the search's outcome, the CALIBRATE_IO figures taken
//! from it, and the stored document (`CalibrationReport`) with every point's interval
//! series. The search itself is the engine's (`iogauge_engine::calibrate`).

use crate::finding::Finding;
use crate::iopath::IoPath;
use crate::meta::{Kind, Meta};
use crate::preflight::Preflight;
use crate::run::IntervalReport;
use crate::spec::IoSetup;
use crate::system::Snapshot;
use crate::target::TargetInfo;
use iogauge_stats::units::secs;
use iogauge_stats::{Interval, LatHist, LatSummary};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Which latency figure the cap applies to (CALIBRATE_IO uses the mean).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Criterion {
    Mean,
    P95,
    P99,
}

impl Criterion {
    /// As the flag and JSON name it.
    pub fn name(self) -> &'static str {
        match self {
            Criterion::Mean => "mean",
            Criterion::P95 => "p95",
            Criterion::P99 => "p99",
        }
    }

    pub fn of(self, l: &LatSummary) -> f64 {
        match self {
            Criterion::Mean => l.mean,
            Criterion::P95 => l.p95,
            Criterion::P99 => l.p99,
        }
    }
}

impl std::str::FromStr for Criterion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "mean" => Ok(Criterion::Mean),
            "p95" => Ok(Criterion::P95),
            "p99" => Ok(Criterion::P99),
            _ => Err(format!("unknown criterion '{s}': use mean, p95 or p99")),
        }
    }
}

/// The three steps of a calibration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// Small random reads (8 KiB), outstanding I/Os searched: max_iops.
    Small,
    /// Large random reads (1 MiB), outstanding I/Os searched: max_mbps.
    Large,
    /// One worker (one process) issuing large reads at the best large-I/O depth: max_pmbps.
    Single,
}

impl Step {
    /// As JSON names it.
    pub fn name(self) -> &'static str {
        match self {
            Step::Small => "small",
            Step::Large => "large",
            Step::Single => "single",
        }
    }
}

/// ORION's `-type`: how the large I/Os of the large step, the one-process step and the
/// matrix's cells are placed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LargeType {
    /// Random offsets over the whole tested span (CALIBRATE_IO, ORION's default).
    #[default]
    Rand,
    /// Sequential streams: each outstanding large I/O is one stream reading (or writing) its
    /// own slice of the tested span from its start, wrapping within it (ORION's "each stream
    /// has its own sequential region").
    Seq,
}

impl LargeType {
    /// As the flag and JSON name it.
    pub fn name(self) -> &'static str {
        match self {
            LargeType::Rand => "rand",
            LargeType::Seq => "seq",
        }
    }
}

impl std::str::FromStr for LargeType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rand" => Ok(LargeType::Rand),
            "seq" => Ok(LargeType::Seq),
            _ => Err(format!("unknown large I/O type '{s}': use rand or seq")),
        }
    }
}

/// ORION's `-matrix`: which cells of the small × large mixed matrix run after the curves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatrixMode {
    /// The small and large curves only, no mixed cell.
    #[default]
    Basic,
    /// Every (small, large) combination of the levels.
    Detailed,
    /// Large fixed at `num_large`, small over its levels.
    Row,
    /// Small fixed at `num_small`, large over its levels.
    Col,
    /// The one cell (`num_small`, `num_large`).
    Point,
}

impl MatrixMode {
    const ALL: [MatrixMode; 5] = [
        MatrixMode::Basic,
        MatrixMode::Detailed,
        MatrixMode::Row,
        MatrixMode::Col,
        MatrixMode::Point,
    ];

    /// As the flag and JSON name it.
    pub fn name(self) -> &'static str {
        match self {
            MatrixMode::Basic => "basic",
            MatrixMode::Detailed => "detailed",
            MatrixMode::Row => "row",
            MatrixMode::Col => "col",
            MatrixMode::Point => "point",
        }
    }

    /// Whether the mode fixes the small level (`--num-small`) and the large one (`--num-large`).
    pub fn fixes(self) -> (bool, bool) {
        match self {
            MatrixMode::Basic | MatrixMode::Detailed => (false, false),
            MatrixMode::Row => (false, true),
            MatrixMode::Col => (true, false),
            MatrixMode::Point => (true, true),
        }
    }
}

impl std::str::FromStr for MatrixMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        MatrixMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown matrix '{s}': use basic, detailed, row, col or point"))
    }
}

/// Reads `matrix` as documents before ORION's modes stored it too: `false` is basic, `true`
/// detailed (every cell).
fn matrix_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<MatrixMode, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Bool(bool),
        Mode(MatrixMode),
    }
    Ok(match Stored::deserialize(d)? {
        Stored::Bool(false) => MatrixMode::Basic,
        Stored::Bool(true) => MatrixMode::Detailed,
        Stored::Mode(m) => m,
    })
}

/// One measured point of a curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub step: Step,
    /// Outstanding I/Os over all workers.
    pub outstanding: u32,
    /// Worker threads sharing them (each with its own ring).
    #[serde(default = "one")]
    pub workers: u32,
    pub ios: u64,
    pub iops: f64,
    pub mbps: f64,
    pub lat_us: LatSummary,
    /// Went against the curve (fell more than the noise below a point with fewer
    /// outstanding I/Os) and was measured once more; the later measurement counts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub superseded: bool,
    /// Over MPI: each rank's I/Os in the measured window, by rank (the point's `ios` is their
    /// sum; a rank given no outstanding I/Os at this point did none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rank_ios: Vec<u64>,
}

fn one() -> u32 {
    1
}

/// The interval every point's series is recorded at.
pub const POINT_INTERVAL: Duration = Duration::from_secs(1);

/// The store label of point `index`'s histogram (`3:Small:16`); its intervals' histograms
/// are stored under this and `/` and their [`crate::regrid::interval_label`].
pub fn point_label(index: usize, p: &Point) -> String {
    format!("{index}:{:?}:{}", p.step, p.outstanding)
}

/// A point with what it was made of, for the store.
#[derive(Clone, Debug)]
pub struct Measured {
    pub point: Point,
    pub intervals: Vec<Interval>,
    /// /proc snapshots on the point's interval grid (devices, CPU).
    pub samples: Vec<Snapshot>,
    pub hist: LatHist,
    /// The memory and I/O path the point ran on (`None` from a device model).
    pub io_path: Option<IoPath>,
}

/// What to calibrate, validated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrateSpec {
    pub small_bs: u64,
    pub large_bs: u64,
    #[serde(with = "secs")]
    pub point_time: Duration,
    #[serde(with = "secs")]
    pub point_ramp: Duration,
    /// The latency cap, microseconds.
    pub max_latency_us: f64,
    pub criterion: Criterion,
    pub disks: u32,
    /// Upper end of the outstanding-I/O ramp (from `disks`).
    pub max_outstanding: u32,
    /// Share of writes mixed into every point (ORION -write).
    pub write_pct: u8,
    /// Unmeasured large reads over this many bytes before each point (ORION -cache_size).
    pub cache_size: Option<u64>,
    /// Which cells of ORION's small × large mixed matrix run (stored as a bool before the
    /// modes: `true` reads as detailed).
    #[serde(default, deserialize_with = "matrix_mode")]
    pub matrix: MatrixMode,
    /// The small level `--matrix col|point` fixes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_small: Option<u32>,
    /// The large level `--matrix row|point` fixes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_large: Option<u32>,
    /// Random or sequential large I/Os (ORION `-type`).
    #[serde(default)]
    pub large_type: LargeType,
    /// Engine, O_DIRECT, region, seed, layout and I/O path options, as in `run`.
    #[serde(flatten)]
    pub setup: IoSetup,
    /// What the points ran on (the first point's path; a point that differs is warned of).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_path: Option<IoPath>,
}

impl CalibrateSpec {
    /// The outstanding-I/O ceiling for `disks` disks: 32 per disk, at least 64 (ORION goes
    /// to 5 × disks for small I/O; flash and arrays need far deeper queues to saturate).
    pub fn ceiling(disks: u32) -> u32 {
        (disks.saturating_mul(32)).clamp(64, 4096)
    }
}

/// A finished (or interrupted) calibration.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub measured: Vec<Measured>,
    /// ORION's matrix, when asked for.
    pub matrix: Vec<Cell>,
    /// The matrix cells' small I/Os' latencies, merged over every cell.
    pub matrix_small: LatHist,
    pub interrupted: bool,
}

impl Outcome {
    /// The points of a step that count (not superseded by a second measurement).
    pub fn points(&self, step: Step) -> impl Iterator<Item = &Point> {
        self.measured
            .iter()
            .map(|m| &m.point)
            .filter(move |p| p.step == step && !p.superseded)
    }
}

/// The CALIBRATE_IO figures of an outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Highest IOPS of a small-I/O point meeting the cap.
    pub max_iops: Option<f64>,
    /// That point's criterion latency, milliseconds.
    pub latency: Option<f64>,
    /// Outstanding I/Os of that point.
    pub outstanding: Option<u32>,
    /// Highest MB/s of a large-I/O point.
    pub max_mbps: Option<f64>,
    /// MB/s of one worker (one process) at the best large-I/O depth.
    pub max_pmbps: Option<f64>,
}

/// ORION's IOPS per disk: max_iops over the disks behind the targets (`None` without
/// max_iops).
pub fn iops_per_disk(max_iops: Option<f64>, disks: u32) -> Option<f64> {
    max_iops.filter(|_| disks > 0).map(|i| i / f64::from(disks))
}

pub fn figures(out: &Outcome, crit: Criterion, cap_us: f64) -> Figures {
    let meets = |p: &&Point| crit.of(&p.lat_us) <= cap_us;
    let best = out
        .points(Step::Small)
        .filter(meets)
        .max_by(|a, b| a.iops.total_cmp(&b.iops));
    Figures {
        max_iops: best.map(|p| p.iops),
        latency: best.map(|p| crit.of(&p.lat_us) / 1e3),
        outstanding: best.map(|p| p.outstanding),
        max_mbps: out
            .points(Step::Large)
            .map(|p| p.mbps)
            .max_by(f64::total_cmp),
        max_pmbps: out
            .points(Step::Single)
            .map(|p| p.mbps)
            .max_by(f64::total_cmp),
    }
}

/// One cell: the small I/Os' IOPS and latency, the large I/Os' MiB/s, measured together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Outstanding small I/Os.
    pub small: u32,
    /// Outstanding large I/Os.
    pub large: u32,
    pub small_iops: f64,
    pub small_lat_us: LatSummary,
    pub large_mbps: f64,
}

/// One point with its time series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointReport {
    #[serde(flatten)]
    pub point: Point,
    pub intervals: Vec<IntervalReport>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub options: CalibrateSpec,
    pub preflight: Preflight,
    /// Whether io_uring works here ("supported", or why not), whichever engine ran.
    #[serde(default)]
    pub io_uring: String,
    pub targets: Vec<TargetInfo>,
    /// Highest small-I/O IOPS with the criterion latency under the cap.
    pub max_iops: Option<f64>,
    /// max_iops ÷ num_disks, as ORION prints it (absent from documents before it was).
    #[serde(default)]
    pub iops_per_disk: Option<f64>,
    /// The criterion latency of that point, milliseconds.
    pub latency: Option<f64>,
    /// Outstanding I/Os of that point.
    pub outstanding: Option<u32>,
    /// Highest MiB/s of large random reads.
    pub max_mbps: Option<f64>,
    /// MiB/s of one worker (one process) at the best large-I/O depth.
    pub max_pmbps: Option<f64>,
    pub num_disks: u32,
    pub points: Vec<PointReport>,
    /// ORION's small × large matrix (with --matrix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matrix: Vec<Cell>,
    /// The calibration's sentences about itself, in documents stored before the findings:
    /// what limits the storage is now in `findings`, the caveats about the figures (a cap
    /// never met, points measured again) in `warnings`. Empty, and left out, in new ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<String>,
    pub warnings: Vec<String>,
    /// What limits the storage, ranked by the share of the time each explains
    /// ([`crate::finding`]); empty in documents stored before iogauge diagnosed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Over MPI: the ranks that shared each point's outstanding I/Os (empty for one process).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<CalibRank>,
}

/// One MPI rank of a calibration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibRank {
    pub rank: u32,
    pub host: String,
    /// The rank's target paths (`{rank}` and `{host}` replaced).
    pub targets: Vec<std::path::PathBuf>,
    /// Why the rank stopped the calibration, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the rank sent rank 0 (its preflight, then each point's series), bytes.
    #[serde(default)]
    pub sent_bytes: u64,
}

impl CalibrationReport {
    pub fn new(
        options: CalibrateSpec,
        preflight: Preflight,
        targets: Vec<TargetInfo>,
        out: &Outcome,
        started_at: String,
    ) -> Self {
        let f = figures(out, options.criterion, options.max_latency_us);
        let warnings = preflight.warnings.clone();
        let num_disks = options.disks;
        CalibrationReport {
            meta: Meta::new(Kind::Calibrate, started_at, out.interrupted),
            num_disks,
            options,
            preflight,
            io_uring: String::new(),
            targets,
            max_iops: f.max_iops,
            iops_per_disk: iops_per_disk(f.max_iops, num_disks),
            latency: f.latency,
            outstanding: f.outstanding,
            max_mbps: f.max_mbps,
            max_pmbps: f.max_pmbps,
            points: out
                .measured
                .iter()
                .map(|m| PointReport {
                    point: m.point.clone(),
                    intervals: m
                        .intervals
                        .iter()
                        .map(|iv| IntervalReport::with_system(iv, &m.samples))
                        .collect(),
                })
                .collect(),
            matrix: out.matrix.clone(),
            verdicts: Vec::new(),
            warnings,
            findings: Vec::new(),
            ranks: Vec::new(),
        }
    }
}

/// Where a curve saturates, judged against its upper envelope, never one pair of points:
/// the shallowest point that no deeper point beats by 5%, with latency grown by half from it
/// to the deepest. Returns (that point, the deepest).
pub fn saturation<'a>(
    small: &[&'a Point],
    lat: impl Fn(&Point) -> f64,
) -> Option<(&'a Point, &'a Point)> {
    let last = *small.last()?;
    for (i, &p) in small.iter().enumerate() {
        let deeper = &small[i + 1..];
        if deeper.is_empty() {
            return None;
        }
        if deeper.iter().all(|q| q.iops < p.iops * 1.05) {
            return (lat(last) > lat(p) * 1.5).then_some((p, last));
        }
    }
    None
}

#[cfg(test)]
mod tests;
