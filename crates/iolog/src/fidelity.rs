//! How faithfully a replay reproduced its original: the two traces' [`Summary`]s compared
//! figure by figure, each as the difference a user can judge (a ratio, percentage points, or
//! a distance between distributions in 0..1), and which of them are off by more than a
//! [`Tolerance`]. A figure either side could not measure is `None` and never "off".

use crate::hist::ks_distance;
use crate::Summary;
use serde::{Deserialize, Serialize};

/// The replay against the original.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fidelity {
    /// Replay IOPS / original IOPS (1: the same rate).
    pub iops_ratio: Option<f64>,
    /// Replay's read share minus the original's, in percentage points.
    pub read_share_points: Option<f64>,
    /// Largest difference between the two read/write size CDFs (Kolmogorov–Smirnov), 0..1.
    pub size_distance: Option<f64>,
    /// Replay's locality minus the original's, in percentage points.
    pub locality_points: Option<f64>,
    /// Replay's sequential share minus the original's, in percentage points.
    pub sequential_points: Option<f64>,
    /// Kolmogorov–Smirnov distance between the inter-arrival distributions, 0..1
    /// ([`crate::hist::ks_distance`]: `sup_x |F_original(x) − F_replay(x)|` over the
    /// histograms' bucket edges, NIST/SEMATECH e-Handbook §1.3.5.16).
    pub interarrival_ks: Option<f64>,
}

/// How far a replay may stray before a figure is called off.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Relative, for ratios: 0.05 accepts 0.95..=1.05.
    pub ratio: f64,
    /// Percentage points, for shares.
    pub points: f64,
    /// For distances between distributions (0..1).
    pub distance: f64,
}

impl Default for Tolerance {
    /// 5%, 5 points, 0.05.
    fn default() -> Self {
        Tolerance {
            ratio: 0.05,
            points: 5.0,
            distance: 0.05,
        }
    }
}

fn points(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some((b? - a?) * 100.0)
}

impl Fidelity {
    pub fn between(original: &Summary, replay: &Summary) -> Fidelity {
        let iops_ratio = match (original.iops, replay.iops) {
            (Some(o), Some(r)) if o.0 > 0.0 => Some(r.0 / o.0),
            _ => None,
        };
        Fidelity {
            iops_ratio,
            read_share_points: points(original.read_share, replay.read_share),
            size_distance: ks_distance(&original.size_hist, &replay.size_hist),
            locality_points: points(original.locality, replay.locality),
            sequential_points: points(original.sequential, replay.sequential),
            interarrival_ks: ks_distance(&original.interarrival, &replay.interarrival),
        }
    }

    /// In words, each figure off by more than the tolerance (empty: a faithful replay).
    pub fn within(&self, tolerance: &Tolerance) -> Vec<String> {
        let mut off = Vec::new();
        if let Some(r) = self
            .iops_ratio
            .filter(|r| (r - 1.0).abs() > tolerance.ratio)
        {
            off.push(format!(
                "IOPS: the replay ran at {:.1}% of the original's (tolerance ±{:.1}%)",
                r * 100.0,
                tolerance.ratio * 100.0
            ));
        }
        for (name, v) in [
            ("read share", self.read_share_points),
            ("locality", self.locality_points),
            ("sequential share", self.sequential_points),
        ] {
            if let Some(p) = v.filter(|p| p.abs() > tolerance.points) {
                off.push(format!(
                    "{name}: {p:+.1} points from the original's (tolerance ±{:.1})",
                    tolerance.points
                ));
            }
        }
        for (name, v) in [
            ("request sizes", self.size_distance),
            ("inter-arrival times", self.interarrival_ks),
        ] {
            if let Some(d) = v.filter(|d| *d > tolerance.distance) {
                off.push(format!(
                    "{name}: distributions {d:.3} apart (Kolmogorov–Smirnov; tolerance {:.3})",
                    tolerance.distance
                ));
            }
        }
        off
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::summarise;
    use crate::testutil::{random_reads, Rng};
    use crate::{Op, Request};

    /// `n` 8 KiB reads/writes with the given inter-arrival times.
    fn trace(n: usize, seed: u64, gap: &dyn Fn(&mut Rng) -> f64) -> Vec<Request> {
        let mut rng = Rng(seed);
        let mut at = 0.0;
        random_reads(n, seed)
            .into_iter()
            .map(|mut r| {
                at += gap(&mut rng);
                r.at_ns = at as u64;
                if rng.next() % 10 < 3 {
                    r.op = Op::Write;
                }
                r
            })
            .collect()
    }

    fn fidelity(a: &[Request], b: &[Request]) -> Fidelity {
        let end = |t: &[Request]| t.last().map_or(0, |r| r.at_ns);
        Fidelity::between(&summarise(1, a, end(a)), &summarise(1, b, end(b)))
    }

    #[test]
    fn distances_table() {
        let mean = 50_000.0;
        let exp = |r: &mut Rng| r.exp(mean);
        let uniform = |r: &mut Rng| r.unit() * 2.0 * mean;
        let n = 100_000;
        let original = trace(n, 1, &exp);
        let shifted: Vec<Request> = original
            .iter()
            .map(|r| Request {
                at_ns: r.at_ns + 3_000_000_000,
                ..*r
            })
            .collect();
        let uniform_trace = trace(n, 1, &uniform);
        // Sampling error at 95% (1.36 sqrt(2/n)) plus the buckets' 0.1%.
        let tol = 1.36 * (2.0 / n as f64).sqrt() + 0.002;
        let exp_vs_uniform = 0.5 - std::f64::consts::LN_2 / 2.0;
        // (name, replay, expected inter-arrival KS, tolerance)
        let cases: [(&str, &[Request], f64, f64); 3] = [
            ("identical", &original, 0.0, 0.0),
            ("shifted in time", &shifted, 0.0, 0.0),
            (
                "exponential vs uniform",
                &uniform_trace,
                exp_vs_uniform,
                tol,
            ),
        ];
        for (name, replay, ks, tol) in cases {
            let f = fidelity(&original, replay);
            let got = f.interarrival_ks.unwrap();
            assert!(
                (got - ks).abs() <= tol,
                "{name}: KS {got}, expected {ks} ± {tol}"
            );
            // Same requests in the same places (only times differ): the rest agree exactly.
            assert_eq!(f.read_share_points, Some(0.0), "{name}");
            assert_eq!(
                (f.size_distance, f.locality_points, f.sequential_points),
                (Some(0.0), Some(0.0), Some(0.0)),
                "{name}"
            );
        }
        let identical = fidelity(&original, &original);
        assert_eq!(identical.iops_ratio, Some(1.0));
        assert!(identical.within(&Tolerance::default()).is_empty());
        let off = fidelity(&original, &uniform_trace).within(&Tolerance::default());
        assert!(
            off.len() == 1 && off[0].starts_with("inter-arrival"),
            "{off:?}"
        );
    }

    #[test]
    fn within_names_what_is_off() {
        let f = Fidelity {
            iops_ratio: Some(0.9),
            read_share_points: Some(-6.0),
            size_distance: Some(0.01),
            locality_points: Some(4.9),
            sequential_points: None,
            interarrival_ks: Some(0.2),
        };
        let off = f.within(&Tolerance::default());
        assert_eq!(off.len(), 3, "{off:?}");
        assert!(
            off[0].contains("90.0%") && off[1].contains("read share") && off[2].contains("0.200")
        );
        let loose = Tolerance {
            ratio: 0.2,
            points: 10.0,
            distance: 0.5,
        };
        assert!(f.within(&loose).is_empty());
    }
}
