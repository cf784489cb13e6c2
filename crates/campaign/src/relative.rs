//! A campaign with every figure a ratio to its baseline case (raw = 1): what `report
//! --relative` and `export --relative` render, for studies whose licence lets them publish
//! only normalised figures.
//!
//! Whitelisted, not redacted: a [`RelativeView`] holds ratios, the repetitions divided by the
//! reference's headline statistic, verdicts (which quote only ratios), shares of reads and
//! what the campaign was (its file, cases and environment). It never holds an absolute figure
//! of a run (IOPS, MiB/s, ms, counts), nor the free text that may quote one (findings, run
//! warnings); a figure whose reference lacks the metric (or has 0 in it) is `None`.

use crate::view::{CampaignView, CaseView, Environment, MetricCase, MetricView};
use iogauge_stats::compare::{Ci, Statistic};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A campaign in ratios to its baseline (`export --relative --format json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelativeView {
    pub schema: u32,
    pub name: String,
    pub command: String,
    /// The case every figure is relative to (= 1), unless a case has its own
    /// ([`RelativeCase::relative_to`]).
    pub relative_to: String,
    /// The reference's figure each run is divided by, and each ratio's headline.
    pub statistic: Statistic,
    pub smoke: bool,
    pub repeat: u32,
    pub file: String,
    pub environment: Environment,
    pub cases: Vec<RelativeCase>,
    /// Metrics some run has, in catalogue order.
    pub metrics: Vec<RelativeMetric>,
}

/// One configuration, without figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelativeCase {
    pub name: String,
    pub vars: BTreeMap<String, String>,
    pub args: Vec<String>,
    /// The case its figures are divided by (itself for a baseline).
    pub relative_to: String,
    /// Measured repetitions (interrupted ones left out, as in every figure).
    pub measured: usize,
    /// Mean share of reads among the workload's I/Os (0–1), over the runs that did I/O.
    pub read_share: Option<f64>,
}

/// One metric over every case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelativeMetric {
    pub key: String,
    pub label: String,
    pub higher_is_better: bool,
    /// In case order, every case (a case without the metric has no ratio).
    pub cases: Vec<RelativeFigure>,
}

/// One case's ratio on one metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelativeFigure {
    pub case: String,
    pub relative_to: String,
    /// Repetitions with the metric.
    pub n: usize,
    /// The case's headline statistic ÷ the reference's: exactly 1 for the reference itself;
    /// `None` when either lacks the metric or the reference's figure is 0.
    pub ratio: Option<f64>,
    /// 95 % interval of the ratio (of the baseline's own mean for the baseline), when there
    /// is one.
    pub ci95: Option<Ci>,
    /// Each measured run with the metric, divided by the reference's headline statistic:
    /// `(run id, value)`.
    pub runs: Vec<(i64, f64)>,
    pub verdict: Option<String>,
}

/// `view` in ratios to its baseline(s).
pub fn relative(view: &CampaignView) -> RelativeView {
    let reference = |c: &CaseView| {
        view.baseline_of(&c.name)
            .unwrap_or(c.name.as_str())
            .to_string()
    };
    RelativeView {
        schema: view.schema,
        name: view.name.clone(),
        command: view.command.clone(),
        relative_to: view.baseline.clone(),
        statistic: view.statistic,
        smoke: view.smoke,
        repeat: view.repeat,
        file: view.file.clone(),
        environment: view.environment.clone(),
        cases: view
            .cases
            .iter()
            .map(|c| RelativeCase {
                name: c.name.clone(),
                vars: c.vars.clone(),
                args: c.args.clone(),
                relative_to: reference(c),
                measured: c.runs.iter().filter(|r| !r.interrupted).count(),
                read_share: read_share(c),
            })
            .collect(),
        metrics: view
            .metrics
            .iter()
            .map(|m| RelativeMetric {
                key: m.key.clone(),
                label: m.label.clone(),
                higher_is_better: m.higher_is_better,
                cases: view
                    .cases
                    .iter()
                    .map(|c| figure(view, m, c, &reference(c)))
                    .collect(),
            })
            .collect(),
    }
}

/// Case `c`'s figure on metric `m`, against case `reference`.
fn figure(view: &CampaignView, m: &MetricView, c: &CaseView, reference: &str) -> RelativeFigure {
    let of = |name: &str| m.cases.iter().find(|mc| mc.case == name);
    let mut f = RelativeFigure {
        case: c.name.clone(),
        relative_to: reference.to_string(),
        n: 0,
        ratio: None,
        ci95: None,
        runs: Vec::new(),
        verdict: None,
    };
    let Some(mc) = of(&c.name) else { return f };
    f.n = mc.describe.n;
    let ids = run_ids(c, &m.key);
    if reference == c.name {
        // The reference divided by itself: 1, its runs and interval in its own units.
        let Some(unit) = headline(mc, view.statistic) else {
            return f;
        };
        f.ratio = Some(1.0);
        f.ci95 = (view.statistic == Statistic::Mean)
            .then_some(mc.describe.ci95)
            .flatten()
            .map(|ci| Ci {
                lo: ci.lo / unit,
                hi: ci.hi / unit,
            });
        f.runs = ids
            .into_iter()
            .zip(mc.samples.iter().map(|x| x / unit))
            .collect();
        return f;
    }
    let Some(r) = &mc.ratio else { return f };
    f.ratio = Some(r.headline()).filter(|x| x.is_finite());
    f.ci95 = r.headline_ci();
    f.runs = ids.into_iter().zip(r.normalised.iter().copied()).collect();
    f.verdict = mc.verdict.clone();
    f
}

/// The case's headline statistic of the metric, when it can divide (finite, above 0).
fn headline(mc: &MetricCase, st: Statistic) -> Option<f64> {
    let x = match st {
        Statistic::Mean => mc.describe.mean,
        Statistic::Trimmed => mc.describe.trimmed_mean,
    };
    (x.is_finite() && x > 0.0).then_some(x)
}

/// Ids of the measured runs of `c` that have `key`, in the order of the samples.
fn run_ids(c: &CaseView, key: &str) -> Vec<i64> {
    c.runs
        .iter()
        .filter(|r| !r.interrupted && r.metrics.contains_key(key))
        .map(|r| r.id)
        .collect()
}

fn read_share(c: &CaseView) -> Option<f64> {
    let v: Vec<f64> = c
        .runs
        .iter()
        .filter(|r| !r.interrupted)
        .filter_map(|r| r.read_share)
        .filter(|x| x.is_finite())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::metrics;
    use crate::view::RunDigest;

    fn case(name: &str, iops: &[f64], lat: &[Option<f64>]) -> CaseView {
        let runs = iops
            .iter()
            .zip(lat)
            .enumerate()
            .map(|(i, (x, l))| {
                let mut m = BTreeMap::from([("iops".to_string(), *x)]);
                if let Some(l) = l {
                    m.insert("read_lat_mean_ms".into(), *l);
                }
                RunDigest {
                    id: (name.len() * 100 + i) as i64,
                    rep: i as u32 + 1,
                    kind: "run".into(),
                    started_at: String::new(),
                    interrupted: false,
                    metrics: m,
                    series: Vec::new(),
                    steady_from_s: None,
                    steady_left_s: None,
                    read_share: Some(1.0),
                    aas: Vec::new(),
                    warnings: vec!["latency 0.012 ms is below the device class".into()],
                    finding: None,
                }
            })
            .collect();
        CaseView {
            name: name.into(),
            vars: BTreeMap::new(),
            args: Vec::new(),
            runs,
            lat_curves: Vec::new(),
            baseline: None,
        }
    }

    /// The first case is every other's baseline, as `gather` makes them.
    fn view(mut cases: Vec<CaseView>, st: Statistic) -> CampaignView {
        let base = cases[0].name.clone();
        for c in &mut cases[1..] {
            c.baseline = Some(base.clone());
        }
        CampaignView {
            schema: 1,
            name: "t".into(),
            file: String::new(),
            command: "run".into(),
            baseline: base.clone(),
            statistic: st,
            smoke: false,
            repeat: 3,
            environment: Environment::default(),
            metrics: metrics(&cases, &base, st),
            warnings: Vec::new(),
            cases,
        }
    }

    /// The baseline is exactly 1; another case is its mean over the baseline's, each run
    /// divided by the baseline's mean; a baseline without the metric gives no ratio at all.
    #[test]
    fn ratios_to_the_baseline() {
        let v = view(
            vec![
                case("raw", &[100.0, 110.0, 90.0], &[None, None, None]),
                case(
                    "ext4",
                    &[50.0, 60.0, 40.0],
                    &[Some(2.0), Some(2.0), Some(2.0)],
                ),
            ],
            Statistic::Mean,
        );
        let r = relative(&v);
        assert_eq!(r.relative_to, "raw");
        let iops = &r.metrics[0];
        assert_eq!(iops.key, "iops");
        let (raw, ext4) = (&iops.cases[0], &iops.cases[1]);
        assert_eq!(raw.ratio, Some(1.0));
        assert_eq!(raw.runs, [(300, 1.0), (301, 1.1), (302, 0.9)]);
        assert!((ext4.ratio.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(ext4.runs, [(400, 0.5), (401, 0.6), (402, 0.4)]);
        assert_eq!(ext4.relative_to, "raw");
        let lat = r
            .metrics
            .iter()
            .find(|m| m.key == "read_lat_mean_ms")
            .unwrap();
        assert_eq!(lat.cases[0].ratio, None, "raw has no latency");
        assert_eq!(lat.cases[1].ratio, None, "nothing to divide by");
        assert!(lat.cases[1].runs.is_empty());
        // No absolute figure and no free text survives.
        let json = serde_json::to_string(&r).unwrap();
        for absolute in ["100", "110", "\"50", "60.0", "0.012"] {
            assert!(!json.contains(absolute), "{absolute} in {json}");
        }
    }

    /// Trimmed: the baseline's runs are divided by its trimmed mean, and a baseline whose
    /// figure is 0 gives "-", never a division by 0.
    #[test]
    fn trimmed_and_zero_baselines() {
        let v = view(
            vec![
                case("raw", &[100.0, 200.0, 120.0], &[Some(0.0); 3]),
                case("xfs", &[60.0, 60.0, 60.0], &[Some(1.0); 3]),
            ],
            Statistic::Trimmed,
        );
        let r = relative(&v);
        let raw = &r.metrics[0].cases[0];
        assert_eq!(raw.ratio, Some(1.0));
        assert_eq!(raw.runs[0], (300, 100.0 / 120.0));
        assert_eq!(r.metrics[0].cases[1].ratio, Some(0.5));
        let lat = r
            .metrics
            .iter()
            .find(|m| m.key == "read_lat_mean_ms")
            .unwrap();
        assert_eq!(lat.cases[0].ratio, None, "0 cannot be the reference");
        assert_eq!(lat.cases[1].ratio, None);
    }
}
