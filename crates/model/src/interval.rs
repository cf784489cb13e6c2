//! One interval of a run's series as a document holds it.

use crate::derive::Derived;
use crate::hardware::system_between;
use crate::summary::DirSummary;
use crate::system::Snapshot;
use iogauge_stats::{Interval, Phase};
use serde::{Deserialize, Serialize};

/// One interval of the series (differential: only its own I/Os).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalReport {
    pub phase: Phase,
    /// Start, seconds from the job's start.
    pub t_s: f64,
    pub dur_s: f64,
    pub read: DirSummary,
    pub write: DirSummary,
    /// What the devices, CPU and memory did in the same interval (`disks`, `cpu`, `mem`,
    /// `psi_some_pct`), when the run sampled them.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub system: Option<Derived>,
}

impl IntervalReport {
    pub fn of(iv: &Interval) -> Self {
        let d = iv.duration();
        IntervalReport {
            phase: iv.phase,
            t_s: iv.start.as_secs_f64(),
            dur_s: d.as_secs_f64(),
            read: DirSummary::of(&iv.io.read, d),
            write: DirSummary::of(&iv.io.write, d),
            system: None,
        }
    }

    /// The interval with the device figures of the snapshots at its ends.
    pub fn with_system(iv: &Interval, samples: &[Snapshot]) -> Self {
        IntervalReport {
            system: system_between(samples, iv.start, iv.end),
            ..Self::of(iv)
        }
    }
}
