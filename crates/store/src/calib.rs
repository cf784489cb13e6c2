//! The JSON document of `iogauge calibrate`: the CALIBRATE_IO figures under their own names
//! (max_iops, latency, max_mbps, max_pmbps, num_disks), the preflight, every point of the
//! curves with its interval series, and the verdicts.

use crate::{IntervalReport, SCHEMA};
use iogauge_engine::calibrate::{figures, CalibrateSpec, Cell, Outcome, Point};
use iogauge_engine::TargetInfo;
use iogauge_probe::Preflight;
use serde::{Deserialize, Serialize};

/// One point with its time series.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointReport {
    #[serde(flatten)]
    pub point: Point,
    pub intervals: Vec<IntervalReport>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    pub schema: u32,
    pub kind: String,
    pub iogauge_version: String,
    /// RFC 3339, UTC.
    pub start_time: String,
    pub end_time: String,
    pub interrupted: bool,
    pub options: CalibrateSpec,
    pub preflight: Preflight,
    /// Whether io_uring works here ("supported", or why not), whichever engine ran.
    #[serde(default)]
    pub io_uring: String,
    pub targets: Vec<TargetInfo>,
    /// Highest small-I/O IOPS with the criterion latency under the cap.
    pub max_iops: Option<f64>,
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
    pub verdicts: Vec<String>,
    pub warnings: Vec<String>,
}

impl CalibrationReport {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        options: CalibrateSpec,
        preflight: Preflight,
        targets: Vec<TargetInfo>,
        out: &Outcome,
        verdicts: Vec<String>,
        start_time: String,
        end_time: String,
    ) -> Self {
        let f = figures(out, options.criterion, options.max_latency_us);
        let warnings = preflight.warnings.clone();
        CalibrationReport {
            schema: SCHEMA,
            kind: "calibrate".into(),
            iogauge_version: env!("CARGO_PKG_VERSION").into(),
            start_time,
            end_time,
            interrupted: out.interrupted,
            num_disks: options.disks,
            options,
            preflight,
            io_uring: String::new(),
            targets,
            max_iops: f.max_iops,
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
            verdicts,
            warnings,
        }
    }
}
