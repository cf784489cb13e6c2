//! The results model. These serde types *are* iogauge's JSON schema (versioned by `schema`);
//! the SQLite store (a later issue) persists the same types.
//!
//! Raw figures (I/O counts, bytes, histogram percentiles) are built from the recorded series by
//! `RunReport::from_series`, so a stored run can be re-rendered without re-running it.

use iogauge_engine::{JobSpec, TargetInfo};
use iogauge_stats::{measured_totals, DirStats, Interval, LatSummary, Nanos, PerDir, Phase};
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

mod calib;
mod db;
pub use calib::{CalibrationReport, PointReport};
pub use db::{NewRun, RunRow, RunStatus, Store, StoreError, StoredRun};

/// Version of the JSON schema; bump on any incompatible change.
pub const SCHEMA: u32 = 1;

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

/// One interval of the series (differential: only its own I/Os).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntervalReport {
    pub phase: Phase,
    /// Start, seconds from the job's start.
    pub t_s: f64,
    pub dur_s: f64,
    pub read: DirSummary,
    pub write: DirSummary,
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
        }
    }
}

/// A finished `iogauge run`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub schema: u32,
    pub kind: String,
    pub iogauge_version: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// Stopped early (Ctrl-C): the figures cover what ran.
    pub interrupted: bool,
    pub options: JobSpec,
    pub targets: Vec<TargetInfo>,
    pub summary: Summary,
    pub intervals: Vec<IntervalReport>,
    pub warnings: Vec<String>,
}

impl RunReport {
    /// Builds the report of a run from its recorded series.
    pub fn from_series(
        options: JobSpec,
        targets: Vec<TargetInfo>,
        started: SystemTime,
        intervals: &[Interval],
        interrupted: bool,
    ) -> Self {
        let (total, elapsed): (PerDir<DirStats>, Nanos) = measured_totals(intervals);
        let started_at = jiff::Timestamp::try_from(started)
            .map(|t| t.round(jiff::Unit::Millisecond).unwrap_or(t).to_string())
            .unwrap_or_default();
        RunReport {
            schema: SCHEMA,
            kind: "run".into(),
            iogauge_version: env!("CARGO_PKG_VERSION").into(),
            started_at,
            interrupted,
            options,
            targets,
            summary: Summary {
                elapsed_s: elapsed.as_secs_f64(),
                read: DirSummary::of(&total.read, elapsed),
                write: DirSummary::of(&total.write, elapsed),
            },
            intervals: intervals.iter().map(IntervalReport::of).collect(),
            warnings: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_engine::RwMode;

    fn series() -> Vec<Interval> {
        (0..3)
            .map(|i| {
                let mut io = PerDir::<DirStats>::default();
                for k in 0..100 {
                    io.read.record(8192, 50_000 + k * 100);
                }
                io.write.record(8192, 200_000);
                Interval {
                    phase: if i == 0 { Phase::Ramp } else { Phase::Measure },
                    index: i,
                    start: Nanos(u64::from(i) * 1_000_000_000),
                    end: Nanos(u64::from(i + 1) * 1_000_000_000),
                    io,
                }
            })
            .collect()
    }

    #[test]
    fn summary_excludes_ramp_and_matches_shape() {
        let r = RunReport::from_series(
            JobSpec::new(RwMode::RandRw),
            vec![],
            SystemTime::UNIX_EPOCH,
            &series(),
            false,
        );
        assert_eq!(r.summary.read.ios, 200);
        assert_eq!(r.summary.read.bytes, 200 * 8192);
        assert_eq!(r.summary.elapsed_s, 2.0);
        assert_eq!(r.summary.read.iops, 100.0);
        assert_eq!(r.intervals.len(), 3);
        assert_eq!(r.started_at, "1970-01-01T00:00:00Z");
        let v: serde_json::Value = serde_json::to_value(&r).unwrap();
        for key in ["ios", "bytes", "iops", "mbps"] {
            assert!(v["summary"]["read"][key].is_number(), "summary.read.{key}");
        }
        for key in ["mean", "p50", "p90", "p99", "p99_9", "max"] {
            assert!(
                v["summary"]["write"]["lat_us"][key].is_number(),
                "lat_us.{key}"
            );
        }
        assert_eq!(v["schema"], 1);
        assert_eq!(v["intervals"][0]["phase"], "ramp");
    }

    #[test]
    fn json_round_trip_is_exact() {
        let r = RunReport::from_series(
            JobSpec::new(RwMode::RandRead),
            vec![],
            SystemTime::now(),
            &series(),
            true,
        );
        let text = serde_json::to_string(&r).unwrap();
        let back: RunReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }
}
