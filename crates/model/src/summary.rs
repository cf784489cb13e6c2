//! A window's figures per direction (I/Os, bytes, IOPS, MiB/s, latency): what a run's
//! summary and each interval report, and what the hardware rows compare against.

use iogauge_stats::{DirStats, LatSummary, Nanos};
use serde::{Deserialize, Serialize};

/// One direction's figures over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirSummary {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    /// MiB/s (2^20 bytes per second, as iostat's rMB/s).
    pub mbps: f64,
    pub lat_us: LatSummary,
}

impl DirSummary {
    pub fn of(d: &DirStats, elapsed: Nanos) -> Self {
        DirSummary {
            ios: d.ios,
            bytes: d.bytes.0,
            iops: d.iops(elapsed),
            mbps: d.mbps(elapsed),
            lat_us: d.lat.summary(),
        }
    }
}

/// The measured window: totals over every measured interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub elapsed_s: f64,
    pub read: DirSummary,
    pub write: DirSummary,
}
