//! What a result shows in the history table (like Oracle's DBA_RSRC_IO_CALIBRATE): its
//! target and its headline figures, taken from the document in one place for every kind.

use crate::document::Document;
use crate::meta::Kind;
use crate::run::DirSummary;
use serde::{Deserialize, Serialize};

/// A result's row figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistoryFigures {
    /// The target(s), comma-separated; a database run's server location.
    pub target: String,
    /// IOPS: a run's total, a calibration's max_iops, a database run's physical reads/s
    /// (PostgreSQL's `blks_read`, page-cache hits included).
    pub max_iops: Option<f64>,
    /// MiB/s: a run's total, a calibration's max_mbps.
    pub max_mbps: Option<f64>,
    /// MiB/s of one process (CALIBRATE_IO's MAX_PMBPS).
    pub max_pmbps: Option<f64>,
    /// A run's mean latency, a calibration's latency at max_iops, a database run's average
    /// read time; milliseconds.
    pub latency_ms: Option<f64>,
    /// A calibration's `--disks`; a database run's disks behind its data (`--disks`, else
    /// those it sampled).
    pub disks: Option<u32>,
}

impl Document {
    /// The history row figures of this result.
    pub fn history(&self) -> HistoryFigures {
        match self {
            Document::Run(r) => {
                let s = &r.summary;
                HistoryFigures {
                    target: paths(r.targets.iter().map(|t| &t.path)),
                    max_iops: Some(s.read.iops + s.write.iops),
                    max_mbps: Some(s.read.mbps + s.write.mbps),
                    latency_ms: mean_ms(&s.read, &s.write),
                    ..HistoryFigures::default()
                }
            }
            Document::Calibration(c) => HistoryFigures {
                target: paths(c.targets.iter().map(|t| &t.path)),
                max_iops: c.max_iops,
                max_mbps: c.max_mbps,
                max_pmbps: c.max_pmbps,
                latency_ms: c.latency,
                disks: Some(c.num_disks),
            },
            Document::DbRun(d) => HistoryFigures {
                target: d.server.location.clone(),
                max_iops: Some(d.summary.db.physical_reads_s),
                latency_ms: d.summary.db.avg_read_ms,
                disks: d.spindles(),
                ..HistoryFigures::default()
            },
        }
    }
}

fn paths<'a>(ps: impl Iterator<Item = &'a std::path::PathBuf>) -> String {
    ps.map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The mean latency of reads and writes together, ms; `None` without I/Os.
fn mean_ms(r: &DirSummary, w: &DirSummary) -> Option<f64> {
    let n = r.ios + w.ios;
    (n > 0).then(|| (r.lat_us.mean * r.ios as f64 + w.lat_us.mean * w.ios as f64) / n as f64 / 1e3)
}

/// Whether a run ran to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Complete,
    /// Stopped early (Ctrl-C); the figures cover what ran.
    Interrupted,
}

impl RunStatus {
    /// The name in the `status` column, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// A row of `iogauge history` (like DBA_RSRC_IO_CALIBRATE).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub kind: Kind,
    pub started_at: String,
    pub ended_at: String,
    pub target: String,
    pub status: RunStatus,
    pub max_iops: Option<f64>,
    pub max_mbps: Option<f64>,
    pub max_pmbps: Option<f64>,
    pub latency_ms: Option<f64>,
    pub disks: Option<u32>,
    /// The result's `--label`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}
