//! Hand-made cases and runs for the analysis tests, and the lookups they share.

use iogauge_campaign::{CaseView, MetricView, RunDigest};
use std::collections::BTreeMap;

pub fn run(id: i64, rep: u32, metrics: &[(&str, f64)]) -> RunDigest {
    RunDigest {
        id,
        rep,
        kind: "run".into(),
        started_at: format!("2025-01-01T00:00:{id:02}Z"),
        interrupted: false,
        metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        series: Vec::new(),
        steady_from_s: None,
        steady_left_s: None,
        read_share: Some(1.0),
        aas: Vec::new(),
        warnings: Vec::new(),
        finding: None,
    }
}

pub fn case(name: &str, runs: Vec<RunDigest>) -> CaseView {
    CaseView {
        name: name.into(),
        vars: BTreeMap::new(),
        args: Vec::new(),
        runs,
        lat_curves: Vec::new(),
        baseline: None,
    }
}

/// A case with one metric, runs numbered from `first_id`, repetitions from 1.
pub fn series(name: &str, first_id: i64, key: &str, values: &[f64]) -> CaseView {
    let runs = values
        .iter()
        .enumerate()
        .map(|(i, v)| run(first_id + i as i64, i as u32 + 1, &[(key, *v)]))
        .collect();
    case(name, runs)
}

/// Two cases × 3 repetitions, B with an interrupted 4th repetition and a metric A lacks.
pub fn two_cases() -> Vec<CaseView> {
    let a = case(
        "A",
        vec![
            run(1, 1, &[("iops", 100.0), ("read_lat_p99_ms", 2.0)]),
            run(2, 2, &[("iops", 110.0), ("read_lat_p99_ms", 2.0)]),
            run(3, 3, &[("iops", 120.0), ("read_lat_p99_ms", 2.0)]),
        ],
    );
    let mut interrupted = run(14, 4, &[("iops", 5.0), ("read_lat_p99_ms", 9.0)]);
    interrupted.interrupted = true;
    let b = case(
        "B",
        vec![
            run(
                11,
                1,
                &[
                    ("iops", 150.0),
                    ("read_lat_p99_ms", 1.0),
                    ("write_iops", 10.0),
                ],
            ),
            run(
                12,
                2,
                &[
                    ("iops", 160.0),
                    ("read_lat_p99_ms", 1.0),
                    ("write_iops", 10.0),
                ],
            ),
            run(
                13,
                3,
                &[
                    ("iops", 200.0),
                    ("read_lat_p99_ms", 1.0),
                    ("write_iops", 10.0),
                ],
            ),
            interrupted,
        ],
    );
    vec![a, b]
}

pub fn find<'a>(ms: &'a [MetricView], key: &str) -> &'a MetricView {
    ms.iter()
        .find(|m| m.key == key)
        .unwrap_or_else(|| panic!("{key}"))
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}
