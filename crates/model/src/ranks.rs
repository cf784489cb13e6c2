//! A job over MPI ranks: each rank's row in the job's document, and what the job's end cost.

use crate::hardware::Hardware;
use crate::interval::IntervalReport;
use crate::summary::Summary;
use serde::{Deserialize, Serialize};

/// One MPI rank's part of a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: u32,
    pub host: String,
    /// The rank's target paths (`{rank}` and `{host}` replaced).
    pub targets: Vec<std::path::PathBuf>,
    /// The part of each target this rank used when it shared a target for writing with the
    /// others (its 1/N of `--region`); `None`: the job's region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<crate::spec::Region>,
    /// The rank's own measured window, as a run's summary.
    pub summary: Summary,
    /// The rank's workload against its host's devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<Hardware>,
    /// Why the rank's part ended early, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the rank sent on its way to rank 0, bytes: its live reports and its part at the
    /// end (its own and, up the tree, its subtree's merged series and rows).
    #[serde(default)]
    pub sent_bytes: u64,
    /// The rank's own interval series (`--keep-rank-series`; otherwise only the job's is kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<IntervalReport>,
}

/// What the end of a job over ranks cost rank 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GatherReport {
    /// `tree` (each rank's part merged up a binomial tree) or `flat` (every part to rank 0).
    pub shape: String,
    /// From rank 0's end of I/O until it held the job's merged part, ms (folding each part
    /// in as it came included).
    pub gather_ms: f64,
    /// Of that, rank 0's own work folding the parts in (decoding and merging them), ms of its
    /// CPU time (on a host shared by many ranks, its wall time is mostly their turns).
    #[serde(default)]
    pub fold_ms: f64,
    /// Then making the job's document (series to summary, histograms), ms of rank 0's CPU time.
    pub merge_ms: f64,
    /// Bytes and messages of parts rank 0 received at the end.
    pub received_bytes: u64,
    pub messages: u32,
    /// Bytes of live counts rank 0 received during the job.
    pub live_bytes: u64,
}
