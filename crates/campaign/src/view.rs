//! What a report needs to know about a campaign, gathered from the store once: the cases with
//! their runs (digested from the stored JSON documents and histograms) and the statistics per
//! metric. Renderers (HTML, Markdown, CSV, JSON) read only this; nothing here touches the store.
//!
//! These serde types are also the `export --format json` document (`"schema": 1`).

use iogauge_model::finding::Finding;
use iogauge_stats::compare::{Describe, Ratio, Statistic};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A whole campaign as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CampaignView {
    pub schema: u32,
    pub name: String,
    /// The campaign file as it was when the runs were made.
    pub file: String,
    /// The command every run used: `run`, `calibrate` or `db run`.
    pub command: String,
    /// Case every ratio is taken against.
    pub baseline: String,
    /// The campaign file's `statistic`: each ratio's headline (of means or of trimmed
    /// means) and the verdict it gives. Exports from before it existed used the mean.
    #[serde(default)]
    pub statistic: Statistic,
    /// Whether the runs were made at `--smoke` scale.
    pub smoke: bool,
    /// Repetitions per case the file asks for.
    pub repeat: u32,
    pub environment: Environment,
    /// In the order the file declares them.
    pub cases: Vec<CaseView>,
    /// Only metrics that some run has.
    pub metrics: Vec<MetricView>,
    /// Campaign-level warnings (cases short of repetitions, runs interrupted, run warnings
    /// that recur), each one sentence.
    pub warnings: Vec<String>,
}

impl CampaignView {
    /// The case `case` is compared with: its own baseline (`baseline = { fs = "raw" }` gives
    /// each case one), else the campaign's; `None` for a baseline itself.
    pub fn baseline_of(&self, case: &str) -> Option<&str> {
        match self.cases.iter().find(|c| c.name == case) {
            Some(c) => c.baseline.as_deref(),
            None => (case != self.baseline).then_some(self.baseline.as_str()),
        }
    }

    /// Whether `case` is a baseline: the campaign's, or another case's.
    pub fn is_baseline(&self, case: &str) -> bool {
        case == self.baseline
            || self
                .cases
                .iter()
                .any(|c| c.baseline.as_deref() == Some(case))
    }
}

/// Where the campaign ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub host: String,
    pub kernel: String,
    pub iogauge_version: String,
    pub cpus: u32,
    pub ram_bytes: u64,
    /// One line per target, e.g. `./iogauge-scratch/data: ext4 on vda (file, 1.0 GiB)`.
    pub targets: Vec<String>,
    /// Whole disks the runs sampled, e.g. `vda`.
    pub devices: Vec<String>,
    /// First and last run's start, RFC 3339.
    pub first_run: Option<String>,
    pub last_run: Option<String>,
}

/// One configuration: a set of variable values, run `repeat` times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseView {
    pub name: String,
    pub vars: BTreeMap<String, String>,
    /// The command line every run of the case used (without the store and JSON flags).
    pub args: Vec<String>,
    /// Measured repetitions, in repetition order (warm-up runs are left out).
    pub runs: Vec<RunDigest>,
    /// Latency percentile curves from the histograms of every run of the case merged, one per
    /// direction that did I/O.
    pub lat_curves: Vec<LatCurve>,
    /// The case this one's ratios are taken against; `None` for a baseline.
    #[serde(default)]
    pub baseline: Option<String>,
}

/// Latency at increasing percentiles (x: percentile, 0–100; y: microseconds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatCurve {
    /// `read`, `write`, or for database runs `db read` / `db update`.
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// One stored run, reduced to what reports show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunDigest {
    pub id: i64,
    /// 1-based repetition number.
    pub rep: u32,
    /// `run`, `calibrate` or `db run`.
    pub kind: String,
    pub started_at: String,
    pub interrupted: bool,
    /// Metric key → value (keys as in [`MetricView::key`]).
    pub metrics: BTreeMap<String, f64>,
    /// The time series, ramp-up included (marked).
    pub series: Vec<SeriesPoint>,
    /// Seconds from the run's start where the steady-state window begins and where IOPS left
    /// steady state, when the run judged it.
    pub steady_from_s: Option<f64>,
    pub steady_left_s: Option<f64>,
    /// Share of reads among workload I/Os (0–1), when the run did I/O.
    pub read_share: Option<f64>,
    /// Database runs: average active sessions by wait event, per interval.
    pub aas: Vec<AasPoint>,
    pub warnings: Vec<String>,
    /// The run's top finding (what limits the storage), when it has findings; digests
    /// exported before findings existed have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<Finding>,
}

/// One interval of a run's series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Start, seconds from the run's start.
    pub t_s: f64,
    pub dur_s: f64,
    /// Ramp-up (left out of the figures).
    pub ramp: bool,
    /// Workload I/Os (or database operations) per second, reads and writes.
    pub read_iops: f64,
    pub write_iops: f64,
    /// Workload latency, µs (mean and p99 over both directions' larger).
    pub lat_mean_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    /// What the disks did: reads + writes per second, and the busiest disk's %util (0–100).
    pub dev_iops: Option<f64>,
    pub util_pct: Option<f64>,
}

/// Average active sessions of one interval, by wait event (`CPU` for sessions on CPU).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AasPoint {
    pub t_s: f64,
    pub events: BTreeMap<String, f64>,
}

/// One metric over every case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricView {
    /// e.g. `iops`, `read_lat_p99_ms`, `db_physical_reads_s`.
    pub key: String,
    /// e.g. `IOPS`, `read latency p99`.
    pub label: String,
    /// e.g. `IOPS`, `MiB/s`, `ms`, `reads/s`.
    pub unit: String,
    pub higher_is_better: bool,
    /// In case order; a case none of whose runs has the metric is left out.
    pub cases: Vec<MetricCase>,
}

/// One metric of one case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricCase {
    pub case: String,
    /// One value per measured repetition, repetition order.
    pub samples: Vec<f64>,
    pub describe: Describe,
    /// Against the baseline (`None` for the baseline itself or when it lacks the metric);
    /// its [`Ratio::headline`] is the one to show.
    pub ratio: Option<Ratio>,
    /// "B is 1.42× A (95% CI 1.35–1.49)" or "no difference … beyond noise", from the
    /// headline; `None` for the baseline or below the repetitions a verdict needs.
    pub verdict: Option<String>,
}

/// What the store keeps as a campaign's definition: the expanded file and where it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub campaign: crate::spec::Campaign,
    pub environment: Environment,
}
