//! A finished `iogauge run` as data: the measured window's summary per direction, the
//! interval series, steady state, per-member figures under a layout, and the workload
//! against the hardware. Built from the engine's recorded series by
//! [`RunReport::from_series`], so a stored run can be re-rendered without re-running it.

use crate::finding::Finding;
use crate::hardware::{compare as compare_hardware, Hardware};
pub use crate::interval::IntervalReport;
use crate::meta::{Kind, Meta};
pub use crate::ranks::{GatherReport, RankReport};
use crate::spec::{JobSpec, LayoutOpts};
pub use crate::summary::{DirSummary, Summary};
use crate::system::Snapshot;
use crate::target::TargetInfo;
use iogauge_stats::{
    detect, measured_totals, DirStats, Interval, Nanos, PerDir, Phase, SteadyConfig,
    SteadyCriterion, SteadyReport,
};
pub use log::LogSummary;
pub use replay::ReplayReport;
use serde::{Deserialize, Serialize};
use std::time::{Duration, SystemTime};

mod log;
mod replay;

/// Steady state of the measured window, reported (not yet waited for: `--steady` is to come).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    pub config: SteadyConfig,
    #[serde(flatten)]
    pub report: SteadyReport,
    /// Seconds from the start of the measured window where the first steady window begins.
    pub reached_at_s: Option<f64>,
    /// Seconds from the start of the measured window where IOPS dropped out of steady state.
    pub left_at_s: Option<f64>,
}

impl Steady {
    /// Rolling window of 5 intervals (at least 3 s), max deviation 20% of the window mean;
    /// leaving = 3 intervals 30% below the steady mean. `None` for windows too short to judge.
    pub fn of(intervals: &[Interval]) -> Option<Steady> {
        let measured: Vec<&Interval> = intervals
            .iter()
            .filter(|i| i.phase == Phase::Measure)
            .collect();
        let iops: Vec<f64> = measured
            .iter()
            .map(|i| {
                let d = i.duration();
                i.io.read.iops(d) + i.io.write.iops(d)
            })
            .collect();
        let starts: Vec<f64> = measured.iter().map(|i| i.start.as_secs_f64()).collect();
        Self::of_series(&iops, &starts, measured.first()?.duration().as_secs_f64())
    }

    /// The same judgement on any per-interval rate (IOPS, database operations/s), given each
    /// interval's start in seconds and the interval length.
    pub fn of_series(rates: &[f64], starts_s: &[f64], every: f64) -> Option<Steady> {
        if every <= 0.0 || starts_s.len() != rates.len() {
            return None;
        }
        let config = SteadyConfig {
            criterion: SteadyCriterion::Deviation { pct: 20.0 },
            window: ((3.0 / every).ceil() as usize).max(5),
            interval_s: every,
            drop_pct: 30.0,
            drop_intervals: 3,
        };
        if rates.len() < config.window {
            return None;
        }
        let report = detect(rates, &config);
        let at = |k: Option<usize>| k.map(|k| starts_s[k] - starts_s[0]);
        Some(Steady {
            reached_at_s: at(report.reached_at),
            left_at_s: at(report.left_at),
            config,
            report,
        })
    }
}

/// Under `--layout`: what each member target did over the measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayoutReport {
    /// `mirror:2,stripe:1m`, as parsed.
    pub layout: String,
    pub members: Vec<MemberReport>,
    /// Member reads and writes per workload read and write (2.00 for writes at mirror:2).
    pub read_amplification: Option<f64>,
    pub write_amplification: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemberReport {
    pub path: String,
    pub degraded: bool,
    pub reads_s: f64,
    pub writes_s: f64,
}

impl LayoutReport {
    fn of(opts: &LayoutOpts, targets: &[TargetInfo], intervals: &[Interval], s: &Summary) -> Self {
        let mut sums = vec![[0u64; 2]; targets.len()];
        for iv in intervals.iter().filter(|i| i.phase == Phase::Measure) {
            for (a, b) in sums.iter_mut().zip(&iv.members) {
                a[0] += b[0];
                a[1] += b[1];
            }
        }
        let secs = s.elapsed_s.max(1e-9);
        let names: Vec<String> = targets
            .iter()
            .map(|t| t.path.display().to_string())
            .collect();
        let degraded: Vec<usize> = opts
            .degraded
            .iter()
            .filter_map(|d| crate::layout::target_index(&names, d).ok())
            .collect();
        let members: Vec<MemberReport> = names
            .iter()
            .enumerate()
            .map(|(i, p)| MemberReport {
                path: p.clone(),
                degraded: degraded.contains(&i),
                reads_s: sums[i][0] as f64 / secs,
                writes_s: sums[i][1] as f64 / secs,
            })
            .collect();
        let (mr, mw): (f64, f64) = members
            .iter()
            .map(|m| (m.reads_s, m.writes_s))
            .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
        LayoutReport {
            layout: opts.spec.to_string(),
            members,
            read_amplification: (s.read.iops > 0.0).then(|| mr / s.read.iops),
            write_amplification: (s.write.iops > 0.0).then(|| mw / s.write.iops),
        }
    }
}

/// How a `--steady` ramp ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyOutcome {
    /// Ramp intervals [start, end) of the first window that met the criterion; `None` when
    /// the timeout came first.
    pub window: Option<(u32, u32)>,
    /// Where the measured window started, from the job's start.
    pub ramp: Duration,
}

/// How a `--steady` ramp ended (the criterion, window and timeout are in `options.steady`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyWaitReport {
    /// Steady state was reached before `--steady-timeout`.
    pub reached: bool,
    /// The first window that met the criterion, seconds from the job's start.
    pub window_s: Option<(f64, f64)>,
    /// Where the measured window started: ramp-up excluded from every figure.
    pub measured_from_s: f64,
}

impl SteadyWaitReport {
    pub fn of(o: &SteadyOutcome, interval: Duration) -> Self {
        let every = interval.as_secs_f64();
        SteadyWaitReport {
            reached: o.window.is_some(),
            window_s: o
                .window
                .map(|(a, b)| (f64::from(a) * every, f64::from(b) * every)),
            measured_from_s: o.ramp.as_secs_f64(),
        }
    }
}

/// A finished `iogauge run`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub options: JobSpec,
    pub targets: Vec<TargetInfo>,
    /// What the OS said about the targets before the run: their mounts, device queues and
    /// files' layout (absent in results from before runs recorded it). Its warnings are in
    /// `warnings` too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<crate::preflight::Preflight>,
    pub summary: Summary,
    /// Whether the measured window's IOPS settled (fio's `ss=iops:20%` over 5 intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
    /// `--steady`: when the ramp-up reached steady state and the measured window began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_wait: Option<SteadyWaitReport>,
    /// `--layout`: per-member I/O rates and the read and write amplification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutReport>,
    /// Workload against the disks under the targets over the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<Hardware>,
    pub intervals: Vec<IntervalReport>,
    pub warnings: Vec<String>,
    /// What limits the storage, ranked by the share of the time each explains
    /// ([`crate::finding`]); empty in documents stored before iogauge diagnosed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Raw /proc snapshots on the interval grid (`at_ns` from the start), so any view can be
    /// derived again later, at any coarser interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Snapshot>,
    /// A job over MPI ranks (`mpirun -np N iogauge run`): each rank's part. `summary` and
    /// `intervals` above are the whole job's, merged exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankReport>,
    /// Over MPI ranks: how far apart the ranks' first intervals started (latest − earliest
    /// start after the starting barrier), milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_ms: Option<f64>,
    /// Over MPI ranks: from rank 0's end of I/O until it held every rank's part, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gather_ms: Option<f64>,
    /// Over MPI ranks: what the job's end cost rank 0 (absent in documents stored before the
    /// tree gather).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gather: Option<GatherReport>,
    /// `--log-bs`: what the log-writer stream beside the job did (absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogSummary>,
    /// `iogauge replay`: how many recorded requests went, and how late (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayReport>,
}

impl RunReport {
    /// Adds what the devices did: per-interval device/CPU figures, the workload vs hardware
    /// comparison over the measured window (summing `disks`), and the raw snapshots.
    pub fn with_samples(
        mut self,
        intervals: &[Interval],
        samples: Vec<Snapshot>,
        disks: &[String],
    ) -> Self {
        self.intervals = intervals
            .iter()
            .map(|iv| IntervalReport::with_system(iv, &samples))
            .collect();
        let measured: Vec<&Interval> = intervals
            .iter()
            .filter(|i| i.phase == Phase::Measure)
            .collect();
        if let (Some(first), Some(last)) = (measured.first(), measured.last()) {
            self.hardware =
                compare_hardware(&self.summary, (first.start, last.end), &samples, disks);
        }
        self.samples = samples;
        self
    }

    /// Builds the report of a run from its recorded series.
    pub fn from_series(
        options: JobSpec,
        targets: Vec<TargetInfo>,
        started: SystemTime,
        intervals: &[Interval],
        interrupted: bool,
    ) -> Self {
        let (total, elapsed): (PerDir<DirStats>, Nanos) = measured_totals(intervals);
        let summary = Summary {
            elapsed_s: elapsed.as_secs_f64(),
            read: DirSummary::of(&total.read, elapsed),
            write: DirSummary::of(&total.write, elapsed),
        };
        let layout = options
            .layout
            .as_ref()
            .map(|o| LayoutReport::of(o, &targets, intervals, &summary));
        let started_at = jiff::Timestamp::try_from(started)
            .map(|t| t.round(jiff::Unit::Millisecond).unwrap_or(t).to_string())
            .unwrap_or_default();
        RunReport {
            meta: Meta::new(Kind::Run, started_at, interrupted),
            options,
            targets,
            preflight: None,
            summary,
            hardware: None,
            steady: Steady::of(intervals),
            steady_wait: None,
            layout,
            intervals: intervals.iter().map(IntervalReport::of).collect(),
            warnings: Vec::new(),
            findings: Vec::new(),
            samples: Vec::new(),
            ranks: Vec::new(),
            start_skew_ms: None,
            gather_ms: None,
            gather: None,
            log: None,
            replay: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::RwMode;

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
                    members: Vec::new(),
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
        assert_eq!(r.meta.started_at, "1970-01-01T00:00:00Z");
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
        assert_eq!(v["schema"], crate::SCHEMA);
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

    /// A run stored before `--log-bs` existed has neither `log` nor `options.log`: it loads
    /// with both `None`, and a run with a log writer keeps it through JSON.
    #[test]
    fn runs_without_a_log_writer_still_load() {
        let r = RunReport::from_series(
            JobSpec::new(RwMode::RandRead),
            vec![],
            SystemTime::UNIX_EPOCH,
            &series(),
            false,
        );
        let old = serde_json::to_value(&r).unwrap();
        assert!(old.get("log").is_none() && old["options"].get("log").is_none());
        let back: RunReport = serde_json::from_value(old).unwrap();
        assert_eq!((back.log, back.options.log), (None, None));
        let mut with = r.clone();
        with.options.log = Some(crate::spec::LogStream {
            bs: 8192,
            target: None,
            size: 1 << 26,
            rate: Some(100),
        });
        with.log = Some(LogSummary {
            writes: 7,
            ..LogSummary::default()
        });
        let text = serde_json::to_string(&with).unwrap();
        assert_eq!(serde_json::from_str::<RunReport>(&text).unwrap(), with);
    }

    #[test]
    fn steady_state_of_a_ramp_then_flat_series() {
        // 1 s intervals: 100, 200, 300 IOPS, then 1000 flat for 8 s, then 400 for 3 s.
        let rates = [
            100u64, 200, 300, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 400, 400, 400,
        ];
        let series: Vec<Interval> = rates
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                let mut io = PerDir::<DirStats>::default();
                for _ in 0..n {
                    io.read.record(4096, 1000);
                }
                Interval {
                    phase: Phase::Measure,
                    index: k as u32,
                    start: Nanos(k as u64 * 1_000_000_000),
                    end: Nanos((k as u64 + 1) * 1_000_000_000),
                    io,
                    members: Vec::new(),
                }
            })
            .collect();
        let st = Steady::of(&series).unwrap();
        assert_eq!(st.reached_at_s, Some(3.0));
        assert_eq!(st.left_at_s, Some(11.0));
        assert!(Steady::of(&series[..3]).is_none(), "too short to judge");
    }
}
