//! What a replay (`iogauge replay`) did beyond its I/O: how many recorded requests it issued
//! and how late, timed, they went. A leaf: its parent re-exports it.

use iogauge_stats::{LatHist, LatSummary};
use serde::{Deserialize, Serialize};

/// A replay's pacing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayReport {
    /// Recorded requests issued.
    pub issued: u64,
    /// Timed: requests issued more than `late_after_ms` after their recorded time (the
    /// target, or this machine, could not keep the recorded pace); `None` when fast.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    /// What counts as late, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_after_ms: Option<f64>,
    /// Timed: how late each request went (0 when on time), µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness_us: Option<LatSummary>,
    /// The recorded requests' figures (the trace that was replayed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Box<iogauge_iolog::Summary>>,
    /// The replay's own requests as the targets' disks were given them, captured while it
    /// ran (absent without the tracer, or on targets not on a disk of their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed: Option<Box<iogauge_iolog::Summary>>,
    /// `replayed` against `recorded`, figure by figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fidelity: Option<iogauge_iolog::Fidelity>,
    /// Why the replay's own requests were not captured, when they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed_unknown: Option<String>,
}

impl ReplayReport {
    /// `issued` requests; timed, with `late` of them later than `late_after_ms` and every
    /// request's lateness in `lateness` (ns).
    pub fn of(issued: u64, timed: Option<(u64, f64, &LatHist)>) -> Self {
        ReplayReport {
            issued,
            late: timed.map(|t| t.0),
            late_after_ms: timed.map(|t| t.1),
            lateness_us: timed.map(|t| t.2.summary()),
            ..ReplayReport::default()
        }
    }
}
