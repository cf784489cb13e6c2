//! HDR histograms (3 significant digits: any value within 0.1% of its bucket's; Gil Tene's
//! HdrHistogram) as JSON-friendly bucket lists, and the Kolmogorov–Smirnov distance between
//! two of them.
//!
//! A bucket is `[highest value equivalent to it, count]`: recording that value again lands
//! in the same bucket, so the list rebuilds the histogram exactly ([`HistBuckets::histogram`]).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

const SIGFIG: u8 = 3;

/// An empty auto-resizing 3-digit histogram (values from 0 up).
pub(crate) fn new_hist() -> Histogram<u64> {
    // 3 significant digits is a constant hdrhistogram accepts.
    let mut h = Histogram::new(SIGFIG).expect("3 significant digits are valid");
    h.auto(true);
    h
}

/// Records `n` of `v`, growing the histogram as far as needed (`saturating_record` would
/// clamp to its current top instead); a value beyond any size is clamped.
pub(crate) fn record(h: &mut Histogram<u64>, v: u64, n: u64) {
    if h.record_n(v, n).is_err() {
        h.saturating_record_n(v, n);
    }
}

/// A histogram's non-empty buckets, in increasing order of value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct HistBuckets(pub Vec<[u64; 2]>);

impl HistBuckets {
    pub fn of(h: &Histogram<u64>) -> HistBuckets {
        HistBuckets(
            h.iter_recorded()
                .map(|v| [v.value_iterated_to(), v.count_at_value()])
                .collect(),
        )
    }

    /// The histogram again (buckets out of order or with overflowing counts are taken as
    /// they come: recording is commutative and counts saturate).
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = new_hist();
        for &[value, count] in &self.0 {
            record(&mut h, value, count);
        }
        h
    }

    pub fn count(&self) -> u64 {
        self.0.iter().fold(0u64, |a, b| a.saturating_add(b[1]))
    }
}

/// The Kolmogorov–Smirnov distance `D = sup_x |F_a(x) − F_b(x)|` between the two empirical
/// CDFs (NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.5.16), evaluated at every
/// bucket edge of either histogram: exact for the bucketed data, so two distributions closer
/// than the buckets' 0.1% width cannot be told apart. `None` when either is empty.
pub fn ks_distance(a: &HistBuckets, b: &HistBuckets) -> Option<f64> {
    let (na, nb) = (a.count() as f64, b.count() as f64);
    if na == 0.0 || nb == 0.0 {
        return None;
    }
    let (mut ia, mut ib) = (0, 0);
    let (mut ca, mut cb) = (0u64, 0u64);
    let mut d = 0.0f64;
    let mut sa = a.0.clone();
    let mut sb = b.0.clone();
    sa.sort_unstable();
    sb.sort_unstable();
    while ia < sa.len() || ib < sb.len() {
        let va = sa.get(ia).map_or(u64::MAX, |x| x[0]);
        let vb = sb.get(ib).map_or(u64::MAX, |x| x[0]);
        let x = va.min(vb);
        // Take every bucket at or below x on both sides before comparing the CDFs.
        while ia < sa.len() && sa[ia][0] == x {
            ca = ca.saturating_add(sa[ia][1]);
            ia += 1;
        }
        while ib < sb.len() && sb[ib][0] == x {
            cb = cb.saturating_add(sb[ib][1]);
            ib += 1;
        }
        d = d.max((ca as f64 / na - cb as f64 / nb).abs());
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    #[test]
    fn buckets_rebuild_the_histogram() {
        let mut h = new_hist();
        let mut rng = Rng(1);
        for _ in 0..10_000 {
            h.record(rng.next() >> (rng.next() % 64)).unwrap();
        }
        h.record(0).unwrap();
        let b = HistBuckets::of(&h);
        let json = serde_json::to_string(&b).unwrap();
        let back: HistBuckets = serde_json::from_str(&json).unwrap();
        let h2 = back.histogram();
        assert_eq!(HistBuckets::of(&h2), b);
        assert_eq!(h2.len(), h.len());
        for q in [0.0, 0.5, 0.99, 1.0] {
            assert_eq!(h2.value_at_quantile(q), h.value_at_quantile(q));
        }
    }

    /// Table: two samples, the KS distance expected from their distributions' formulas, and
    /// the tolerance (sampling error ~1.36/sqrt(n) at 95% plus the buckets' 0.1%).
    #[test]
    fn ks_distance_table() {
        let n = 200_000;
        let mean = 100_000.0;
        let sample = |seed: u64, f: &dyn Fn(&mut Rng) -> f64| {
            let mut rng = Rng(seed);
            let mut h = new_hist();
            for _ in 0..n {
                h.record(f(&mut rng) as u64).unwrap();
            }
            HistBuckets::of(&h)
        };
        let exp = |r: &mut Rng| r.exp(mean);
        let uniform = |r: &mut Rng| r.unit() * 2.0 * mean;
        let shifted = |r: &mut Rng| r.exp(mean) + mean;
        // F_exp(x) − F_uni(x) = 1 − e^(−x/μ) − x/(2μ) is largest at x = μ ln 2.
        let exp_vs_uniform = 0.5 - std::f64::consts::LN_2 / 2.0;
        // Shifted by μ: at x = μ the unshifted CDF is 1 − 1/e, the shifted one 0.
        let exp_vs_shifted = 1.0 - (-1.0f64).exp();
        let tol = 1.36 * (2.0 / n as f64).sqrt() + 0.002;
        let cases: [(&str, HistBuckets, HistBuckets, f64, f64); 4] = [
            ("same sample", sample(1, &exp), sample(1, &exp), 0.0, 1e-12),
            (
                "two exponential samples",
                sample(1, &exp),
                sample(2, &exp),
                0.0,
                tol,
            ),
            (
                "exponential vs uniform",
                sample(3, &exp),
                sample(4, &uniform),
                exp_vs_uniform,
                tol,
            ),
            (
                "exponential vs shifted",
                sample(5, &exp),
                sample(6, &shifted),
                exp_vs_shifted,
                tol,
            ),
        ];
        for (name, a, b, want, tol) in cases {
            let d = ks_distance(&a, &b).unwrap();
            assert!((d - want).abs() <= tol, "{name}: {d} vs {want} ± {tol}");
            assert_eq!(Some(d), ks_distance(&b, &a), "{name}: symmetric");
        }
        assert_eq!(ks_distance(&HistBuckets::default(), &sample(1, &exp)), None);
    }
}
