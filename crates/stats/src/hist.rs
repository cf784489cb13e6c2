//! Latency histograms: HDR histograms of nanoseconds with 3 significant digits.
//!
//! 3 significant digits bound the relative error of any recorded value to 0.1%
//! (Gil Tene, HdrHistogram; fio's log-linear buckets are 0.78% wide). Histograms with the
//! same bounds merge exactly by adding bucket counts, so per-worker, per-interval, per-run and
//! per-host histograms combine without losing anything.

use hdrhistogram::serialization::Serializer as _;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Lowest and highest trackable latency in nanoseconds: 1 ns to one hour. Anything slower is
/// clamped to one hour (and still counted), so a hung device shows as a huge max, not a gap.
const LOWEST_NS: u64 = 1;
const HIGHEST_NS: u64 = 3_600_000_000_000;
const SIGFIG: u8 = 3;

#[derive(Debug, thiserror::Error)]
pub enum HistError {
    #[error("histogram decode: {0}")]
    Decode(String),
    #[error("histogram encode: {0}")]
    Encode(String),
}

/// A latency histogram in nanoseconds.
#[derive(Clone, Debug)]
pub struct LatHist(Histogram<u64>);

impl Default for LatHist {
    fn default() -> Self {
        Self::new()
    }
}

/// Same recorded values and counts (histograms that grew to different sizes still compare
/// equal when they hold the same data).
impl PartialEq for LatHist {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .eq(other
                    .0
                    .iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value())))
    }
}

impl LatHist {
    /// An auto-resizing histogram: its buckets grow only as far as the slowest value recorded
    /// (a run keeps two per interval; sized for an hour from the start, each would hold ~270 KB
    /// of counters, ~16 KB empty and ~90 KB up to a millisecond this way). Precision is the
    /// same 3 digits at every size.
    pub fn new() -> Self {
        // 3 significant digits is a constant hdrhistogram accepts; failure is a programming error.
        let mut h = Histogram::new(SIGFIG).expect("3 significant digits are valid");
        h.auto(true);
        LatHist(h)
    }

    /// Records one latency. Values below 1 ns count as 1 ns, above one hour as one hour.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = ns.clamp(LOWEST_NS, HIGHEST_NS);
        if self.0.record(v).is_err() {
            // Only when growing the buckets failed (out of memory): keep the count.
            self.0.saturating_record(v);
        }
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn clear(&mut self) {
        self.0.reset();
    }

    /// Adds another histogram's counts (exact: same precision, bucket by bucket; this one
    /// grows to the other's range first).
    pub fn merge(&mut self, other: &LatHist) {
        self.0
            .add(&other.0)
            .expect("auto-resizing histograms of equal precision always merge");
    }

    /// The value at quantile `q` (0..=1) in nanoseconds: the highest value equivalent to the
    /// bucket that holds it. 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.0.is_empty() {
            0
        } else {
            self.0.value_at_quantile(q)
        }
    }

    pub fn mean_ns(&self) -> f64 {
        if self.0.is_empty() {
            0.0
        } else {
            self.0.mean()
        }
    }

    pub fn max_ns(&self) -> u64 {
        if self.0.is_empty() {
            0
        } else {
            self.0.max()
        }
    }

    pub fn min_ns(&self) -> u64 {
        if self.0.is_empty() {
            0
        } else {
            self.0.min()
        }
    }

    /// The summary a report shows, in microseconds.
    pub fn summary(&self) -> LatSummary {
        let us = |ns: u64| ns as f64 / 1e3;
        LatSummary {
            mean: self.mean_ns() / 1e3,
            p50: us(self.quantile_ns(0.50)),
            p90: us(self.quantile_ns(0.90)),
            p95: us(self.quantile_ns(0.95)),
            p99: us(self.quantile_ns(0.99)),
            p99_9: us(self.quantile_ns(0.999)),
            max: us(self.max_ns()),
        }
    }

    /// Compact binary form (HdrHistogram V2 + DEFLATE), for storing and merging later.
    pub fn encode(&self) -> Result<Vec<u8>, HistError> {
        let mut out = Vec::new();
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(&self.0, &mut out)
            .map_err(|e| HistError::Encode(format!("{e:?}")))?;
        Ok(out)
    }

    pub fn decode(bytes: &[u8]) -> Result<LatHist, HistError> {
        let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| HistError::Decode(format!("{e:?}")))?;
        let mut out = LatHist::new();
        out.0
            .add(&h)
            .map_err(|e| HistError::Decode(format!("{e:?}")))?;
        Ok(out)
    }
}

impl AddAssign<&LatHist> for LatHist {
    fn add_assign(&mut self, other: &LatHist) {
        self.merge(other);
    }
}

/// Latency figures in microseconds: mean and the percentiles iogauge reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatSummary {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_grow_only_as_far_as_the_slowest_value() {
        let full = Histogram::<u64>::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGFIG).unwrap();
        let mut h = LatHist::new();
        for ns in [5_000, 80_000, 1_000_000] {
            h.record(ns);
        }
        assert!(
            h.0.distinct_values() * 3 <= full.distinct_values(),
            "{} vs {}",
            h.0.distinct_values(),
            full.distinct_values()
        );
        // Merging a slow outlier grows it, and the result is exact.
        let mut slow = LatHist::new();
        slow.record(2_000_000_000);
        h += &slow;
        assert_eq!(h.count(), 4);
        assert!((h.max_ns() as f64 / 2e9 - 1.0).abs() < 1e-3);
        let mut same = LatHist::new();
        for ns in [2_000_000_000, 1_000_000, 80_000, 5_000] {
            same.record(ns);
        }
        assert_eq!(
            h, same,
            "equal data compares equal whatever the growth order"
        );
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let h = LatHist::new();
        assert_eq!(h.summary(), LatSummary::default());
        assert_eq!(h.count(), 0);
    }

    #[test]
    fn percentiles_of_a_known_table_within_0_1_percent() {
        // 1..=1000 µs, once each: p50 = 500 µs, p90 = 900, p99 = 990, p99.9 = 999, max = 1000.
        let mut h = LatHist::new();
        for us in 1..=1000u64 {
            h.record(us * 1000);
        }
        let s = h.summary();
        for (got, want) in [
            (s.p50, 500.0),
            (s.p90, 900.0),
            (s.p99, 990.0),
            (s.p99_9, 999.0),
            (s.max, 1000.0),
            (s.mean, 500.5),
        ] {
            assert!(
                (got - want).abs() / want <= 0.001,
                "got {got} want {want} (error above 0.1%)"
            );
        }
    }

    #[test]
    fn values_outside_bounds_are_clamped_and_counted() {
        let mut h = LatHist::new();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.count(), 2);
        assert!(h.max_ns() >= HIGHEST_NS);
        assert_eq!(h.min_ns(), 1);
    }

    #[test]
    fn encode_decode_round_trip_is_exact() {
        let mut h = LatHist::new();
        for v in [1_000u64, 25_000, 25_001, 7_000_000, 123_456_789] {
            h.record(v);
        }
        let back = LatHist::decode(&h.encode().unwrap()).unwrap();
        assert_eq!(back, h);
        assert!(LatHist::decode(b"not a histogram").is_err());
    }

    proptest! {
        /// Merging is exact: two halves merged equal the whole, bucket for bucket.
        #[test]
        fn merge_equals_recording_everything(a in proptest::collection::vec(1u64..10_000_000_000, 0..300),
                                             b in proptest::collection::vec(1u64..10_000_000_000, 0..300)) {
            let mut ha = LatHist::new();
            let mut hb = LatHist::new();
            let mut all = LatHist::new();
            for &v in &a { ha.record(v); all.record(v); }
            for &v in &b { hb.record(v); all.record(v); }
            ha += &hb;
            prop_assert_eq!(ha.count(), (a.len() + b.len()) as u64);
            prop_assert!(ha == all);
        }

        /// Every recorded value is reported within 0.1% (3 significant digits).
        #[test]
        fn single_value_error_below_0_1_percent(v in 1u64..3_000_000_000_000) {
            let mut h = LatHist::new();
            h.record(v);
            let got = h.quantile_ns(0.5) as f64;
            prop_assert!((got - v as f64).abs() / v as f64 <= 0.001);
        }
    }
}
