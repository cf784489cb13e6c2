//! A synthetic campaign view of any shape, with deterministic noise, for the HTML report's
//! browser and budget tests.

use iogauge_campaign::{
    AasPoint, CampaignView, CaseView, Environment, LatCurve, MetricCase, MetricView, RunDigest,
    SeriesPoint,
};
use iogauge_model::finding::{Evidence, Finding, Layer};
use iogauge_stats::compare::{Describe, Ratio, Statistic, Verdict};
use std::collections::BTreeMap;

/// The shape of a synthetic campaign.
pub struct Shape {
    pub cases: usize,
    pub runs: usize,
    pub intervals: usize,
    /// Give the last case's runs database wait events (or every case's when `all_db`).
    pub db: bool,
    pub all_db: bool,
    /// The campaign's statistic: the ratios' headline.
    pub statistic: Statistic,
}

/// Case `c`'s top finding: the device for odd cases, the OS queue for even ones, with
/// markup in its words (the reports escape it).
pub fn finding(c: usize) -> Finding {
    let (layer, what) = if c % 2 == 1 {
        (Layer::Device, "vda")
    } else {
        (Layer::OsQueue, "the <queue> & nr_requests")
    };
    Finding {
        rule: format!("rule-{c}"),
        layer,
        title: format!("limited by {what}"),
        impact: 0.5 + 0.05 * c as f64,
        evidence: vec![Evidence::new("vda %util <busy>", 97.0, "%")],
        next: "raise nr_requests & retry".into(),
        source: "the USE method <Gregg>".into(),
        ..Default::default()
    }
}

/// Deterministic noise in [-1, 1) from a counter (SplitMix64).
pub fn noise(k: u64) -> f64 {
    let mut z = k.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

pub const NAMES: [&str; 3] = ["ext4", "xfs <tuned> & \"fast\"", "db on btrfs"];

pub fn case_name(i: usize) -> String {
    match NAMES.get(i) {
        Some(n) => n.to_string(),
        None => format!("case-{i:02}"),
    }
}

pub fn series(case: usize, rep: u32, n: usize) -> Vec<SeriesPoint> {
    let base = 40_000.0 * (1.0 + 0.35 * case as f64);
    (0..n)
        .map(|t| {
            let k = (case * 1_000_003 + rep as usize * 10_007 + t) as u64;
            let tf = t as f64;
            let iops = base * (1.0 + 0.06 * (tf / 9.0).sin() + 0.03 * noise(k));
            let ramp = t < 5;
            let iops = if ramp {
                iops * (t as f64 + 1.0) / 6.0
            } else {
                iops
            };
            SeriesPoint {
                t_s: tf,
                dur_s: 1.0,
                ramp,
                read_iops: iops * 0.7,
                write_iops: iops * 0.3,
                lat_mean_us: Some(180.0 + 20.0 * noise(k + 1)),
                lat_p99_us: (t % 97 != 50)
                    .then(|| 900.0 + 250.0 * (tf / 13.0).cos() + 80.0 * noise(k + 2)),
                dev_iops: (t >= 3).then_some(iops * 1.04),
                util_pct: (t >= 3).then(|| (70.0 + 20.0 * (tf / 11.0).sin()).min(100.0)),
            }
        })
        .collect()
}

pub fn aas(rep: u32, n: usize) -> Vec<AasPoint> {
    let events = [
        "CPU",
        "IO:DataFileRead",
        "LWLock:BufferMapping",
        "IO:WALSync",
        "Client:ClientRead",
    ];
    (0..n)
        .map(|t| {
            let k = (rep as usize * 7919 + t) as u64;
            let events = events
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let v = (4.0 / (i as f64 + 1.0)) * (1.0 + 0.3 * noise(k * 5 + i as u64));
                    (e.to_string(), v.max(0.0))
                })
                .collect();
            AasPoint {
                t_s: t as f64,
                events,
            }
        })
        .collect()
}

pub fn lat_curve(label: &str, scale: f64) -> LatCurve {
    let ps = [
        0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999, 100.0,
    ];
    let points = ps
        .iter()
        .map(|&p: &f64| {
            let nines = -(1.0 - p / 100.0).max(1e-7).log10();
            (p, scale * (60.0 + 90.0 * nines * nines))
        })
        .collect();
    LatCurve {
        label: label.into(),
        points,
    }
}

/// One metric's samples per case, as (key, label, unit, higher_is_better, f(case, rep)).
pub type MetricDef = (
    &'static str,
    &'static str,
    &'static str,
    bool,
    fn(usize, u32) -> f64,
);

pub const METRICS: [MetricDef; 3] = [
    ("iops", "IOPS", "IOPS", true, |c, r| {
        // Case 1, repetition 3 is far off: an outlier to flag.
        let off = if c == 1 && r == 3 { 1.45 } else { 1.0 };
        40_000.0
            * (1.0 + 0.35 * c as f64)
            * (1.0 + 0.01 * noise((c * 31 + r as usize) as u64))
            * off
    }),
    ("mib_s", "throughput", "MiB/s", true, |c, r| {
        160.0 * (1.0 + 0.2 * c as f64) * (1.0 + 0.05 * noise((c * 37 + r as usize) as u64))
    }),
    (
        "read_lat_p99_ms",
        "read latency p99",
        "ms",
        false,
        |c, r| 0.9 * (1.0 - 0.1 * c as f64) * (1.0 + 0.2 * noise((c * 41 + r as usize) as u64)),
    ),
];

/// Case `c` of the shape: its runs (db runs where the shape says), metrics and curves.
pub fn case_view(s: &Shape, c: usize, names: &[String]) -> CaseView {
    let db = s.all_db || (s.db && c == s.cases - 1);
    let runs = (1..=s.runs as u32)
        .map(|rep| RunDigest {
            id: (c * s.runs) as i64 + rep as i64,
            rep,
            kind: if db { "db run".into() } else { "run".into() },
            started_at: format!("2025-03-0{}T10:{:02}:00Z", 1 + c % 9, rep % 60),
            interrupted: c == 0 && rep == 2,
            metrics: METRICS
                .iter()
                .map(|(k, _, _, _, f)| (k.to_string(), f(c, rep)))
                .collect(),
            series: series(c, rep, s.intervals),
            steady_from_s: (rep != 3).then_some(10.0),
            steady_left_s: (rep == 2).then_some(s.intervals as f64 * 0.8),
            read_share: if c == 2 && rep == 1 {
                None
            } else {
                Some(0.7 - 0.1 * c as f64)
            },
            aas: if db {
                aas(rep, s.intervals)
            } else {
                Vec::new()
            },
            warnings: if rep == 2 && c == 0 {
                vec!["interrupted at 80% <SIGINT>".into()]
            } else {
                Vec::new()
            },
            finding: Some(finding(c)),
        })
        .collect();
    let lat = if db {
        vec![lat_curve("db read", 2.0), lat_curve("db update", 3.0)]
    } else {
        vec![
            lat_curve("read", 1.0 + 0.2 * c as f64),
            lat_curve("write", 1.5),
        ]
    };
    CaseView {
        name: names[c].clone(),
        vars: BTreeMap::from([("fs".into(), names[c].clone()), ("qd".into(), "32".into())]),
        args: vec![
            "iogauge".into(),
            "run".into(),
            "--qd".into(),
            "32".into(),
            format!("--target=/mnt/{c}"),
        ],
        runs,
        lat_curves: lat,
        baseline: None,
    }
}

pub fn build(s: &Shape) -> CampaignView {
    let names: Vec<String> = (0..s.cases).map(case_name).collect();
    let baseline = names[0].clone();
    let cases: Vec<CaseView> = (0..s.cases).map(|c| case_view(s, c, &names)).collect();
    let metrics = METRICS
        .iter()
        .map(|&(key, label, unit, hib, f)| {
            let samples = |c: usize| (1..=s.runs as u32).map(|r| f(c, r)).collect::<Vec<f64>>();
            let base = samples(0);
            MetricView {
                key: key.into(),
                label: label.into(),
                unit: unit.into(),
                higher_is_better: hib,
                cases: (0..s.cases)
                    .map(|c| {
                        let x = samples(c);
                        let ratio = (c > 0)
                            .then(|| Ratio::of(&x, &base, s.statistic, 7 + c as u64).unwrap());
                        let verdict = ratio
                            .as_ref()
                            .map(|r| Verdict::of(r).sentence(&names[c], &baseline, hib));
                        MetricCase {
                            case: names[c].clone(),
                            describe: Describe::of(&x).unwrap(),
                            samples: x,
                            ratio,
                            verdict,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    CampaignView {
        schema: 1,
        name: "fs-compare <2025> & co".into(),
        file: "name = \"fs-compare\"\nrepeat = 3\n[vars]\nfs = [\"ext4\", \"xfs\"]\n# a < b && c > d\n</pre><script>alert(1)</script>\n".into(),
        command: "run".into(),
        baseline,
        statistic: s.statistic,
        smoke: false,
        repeat: s.runs as u32,
        environment: Environment {
            host: "bench-01".into(),
            kernel: "6.1.0-18-amd64".into(),
            iogauge_version: "0.1.0".into(),
            cpus: 16,
            ram_bytes: 64 << 30,
            targets: vec!["/mnt/0/data: ext4 on nvme0n1 (file, 4.0 GiB)".into()],
            devices: vec!["nvme0n1".into()],
            first_run: Some("2025-03-01T10:01:00Z".into()),
            last_run: None,
        },
        cases,
        metrics,
        warnings: vec![
            "case \"xfs\" ran 2 of 3 repetitions <script>alert('x')</script>".into(),
            "runs 2 was interrupted".into(),
        ],
    }
}

/// Three cases of three runs, ratios of trimmed means (the other views use means).
pub fn small() -> CampaignView {
    build(&Shape {
        cases: 3,
        runs: 3,
        intervals: 120,
        db: true,
        all_db: false,
        statistic: Statistic::Trimmed,
    })
}
