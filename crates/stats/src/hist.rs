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
///
/// It is counted in HDR form (one counter per bucket up to the slowest value recorded: ~90 KB
/// for values up to a millisecond) and can be put at rest with [`LatHist::pack`]: the stored
/// form (HDR V2 + DEFLATE, a few hundred bytes to a few KB) and its count. A run keeps every
/// closed interval's histograms to its end, so packing them is what keeps its memory near
/// what it stores (#25: 100 KB per interval otherwise, a 24 h run at 1 s ~8.6 GB). A packed
/// histogram answers every question (decoding once per question) and is unpacked by the
/// first call that changes it.
#[derive(Clone, Debug)]
pub struct LatHist(Repr);

#[derive(Clone, Debug)]
enum Repr {
    Counting(Histogram<u64>),
    Packed { bytes: Box<[u8]>, count: u64 },
}

impl Default for LatHist {
    fn default() -> Self {
        Self::new()
    }
}

/// Same recorded values and counts (histograms that grew to different sizes, or one packed
/// and one not, still compare equal when they hold the same data).
impl PartialEq for LatHist {
    fn eq(&self, other: &Self) -> bool {
        self.count() == other.count()
            && self.with(|a| {
                other.with(|b| {
                    a.iter_recorded()
                        .map(|v| (v.value_iterated_to(), v.count_at_value()))
                        .eq(b
                            .iter_recorded()
                            .map(|v| (v.value_iterated_to(), v.count_at_value())))
                })
            })
    }
}

/// An empty auto-resizing histogram: its buckets grow only as far as the slowest value
/// recorded (sized for an hour from the start, each would hold ~270 KB of counters, ~16 KB
/// empty and ~90 KB up to a millisecond this way). Precision is the same 3 digits at every
/// size.
fn counting() -> Histogram<u64> {
    // 3 significant digits is a constant hdrhistogram accepts; failure is a programming error.
    let mut h = Histogram::new(SIGFIG).expect("3 significant digits are valid");
    h.auto(true);
    h
}

/// HDR V2 + DEFLATE bytes back into a counting histogram.
fn unpack(bytes: &[u8]) -> Result<Histogram<u64>, HistError> {
    let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| HistError::Decode(format!("{e:?}")))?;
    let mut out = counting();
    out.add(&h)
        .map_err(|e| HistError::Decode(format!("{e:?}")))?;
    Ok(out)
}

/// The stored form: HDR V2 + DEFLATE of the histogram as if its values had been recorded
/// into an empty one. An auto-resizing histogram's highest trackable value (in the V2
/// header) depends on the order values and merges came in (it grows to the first value
/// beyond its buckets, not to the largest); set to the largest value recorded, the same
/// counts give the same bytes however they were added up (a job over ranks merged up a tree
/// or flat).
fn pack_bytes(h: &Histogram<u64>) -> Result<Vec<u8>, HistError> {
    let mut out = Vec::new();
    with_canonical(h, |h| {
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(h, &mut out)
            .map(drop)
            .map_err(|e| HistError::Encode(format!("{e:?}")))
    })?;
    Ok(out)
}

/// HDR V2 without DEFLATE: several times faster to make, a little larger; for histograms
/// that only travel (a rank's merged part on its way up), decoded again at the other end.
fn plain_bytes(h: &Histogram<u64>) -> Result<Vec<u8>, HistError> {
    let mut out = Vec::new();
    hdrhistogram::serialization::V2Serializer::new()
        .serialize(h, &mut out)
        .map_err(|e| HistError::Encode(format!("{e:?}")))?;
    Ok(out)
}

/// `f` on `h` as if its values had been recorded into an empty histogram (see
/// [`pack_bytes`]).
fn with_canonical<R>(
    h: &Histogram<u64>,
    f: impl FnOnce(&Histogram<u64>) -> Result<R, HistError>,
) -> Result<R, HistError> {
    let high = h.max().max(2 * LOWEST_NS);
    let canonical;
    let h = match h.high() == high {
        true => h,
        false => {
            let mut c = Histogram::<u64>::new_with_bounds(LOWEST_NS, high, SIGFIG)
                .map_err(|e| HistError::Encode(format!("{e:?}")))?;
            c.auto(true);
            c.add(h).map_err(|e| HistError::Encode(format!("{e:?}")))?;
            canonical = c;
            &canonical
        }
    };
    f(h)
}

impl LatHist {
    pub fn new() -> Self {
        LatHist(Repr::Counting(counting()))
    }

    /// The counters, unpacked first if the histogram is at rest. Bytes this process packed
    /// itself always unpack; should that ever fail, the histogram restarts empty rather than
    /// lose the values recorded next.
    #[inline]
    fn counting_mut(&mut self) -> &mut Histogram<u64> {
        if let Repr::Packed { bytes, .. } = &self.0 {
            self.0 = Repr::Counting(unpack(bytes).unwrap_or_else(|_| counting()));
        }
        match &mut self.0 {
            Repr::Counting(h) => h,
            Repr::Packed { .. } => unreachable!("unpacked above"),
        }
    }

    /// Runs `f` on the counters (decoded for this call if the histogram is at rest).
    fn with<R>(&self, f: impl FnOnce(&Histogram<u64>) -> R) -> R {
        match &self.0 {
            Repr::Counting(h) => f(h),
            Repr::Packed { bytes, .. } => f(&unpack(bytes).unwrap_or_else(|_| counting())),
        }
    }

    /// Puts the histogram at rest in its stored form (see the type's doc). Nothing changes if
    /// it is packed already or cannot be encoded.
    pub fn pack(&mut self) {
        if let Repr::Counting(h) = &self.0 {
            if let Ok(bytes) = pack_bytes(h) {
                let count = h.len();
                self.0 = Repr::Packed {
                    bytes: bytes.into_boxed_slice(),
                    count,
                };
            }
        }
    }

    /// Whether the histogram is at rest ([`LatHist::pack`]).
    pub fn is_packed(&self) -> bool {
        matches!(self.0, Repr::Packed { .. })
    }

    /// Records one latency. Values below 1 ns count as 1 ns, above one hour as one hour.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = ns.clamp(LOWEST_NS, HIGHEST_NS);
        let h = self.counting_mut();
        if h.record(v).is_err() {
            // Only when growing the buckets failed (out of memory): keep the count.
            h.saturating_record(v);
        }
    }

    pub fn count(&self) -> u64 {
        match &self.0 {
            Repr::Counting(h) => h.len(),
            Repr::Packed { count, .. } => *count,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    pub fn clear(&mut self) {
        match &mut self.0 {
            Repr::Counting(h) => h.reset(),
            Repr::Packed { .. } => self.0 = Repr::Counting(counting()),
        }
    }

    /// Adds another histogram's counts (exact: same precision, bucket by bucket; this one
    /// grows to the other's range first).
    pub fn merge(&mut self, other: &LatHist) {
        if other.is_empty() {
            return;
        }
        let mine = self.counting_mut();
        other.with(|o| {
            mine.add(o)
                .expect("auto-resizing histograms of equal precision always merge");
        });
    }

    /// The value at quantile `q` (0..=1) in nanoseconds: the highest value equivalent to the
    /// bucket that holds it. 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.is_empty() {
            return 0;
        }
        self.with(|h| h.value_at_quantile(q))
    }

    pub fn mean_ns(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        self.with(|h| h.mean())
    }

    pub fn max_ns(&self) -> u64 {
        if self.is_empty() {
            return 0;
        }
        self.with(|h| h.max())
    }

    pub fn min_ns(&self) -> u64 {
        if self.is_empty() {
            return 0;
        }
        self.with(|h| h.min())
    }

    /// The summary a report shows, in microseconds.
    pub fn summary(&self) -> LatSummary {
        if self.is_empty() {
            return LatSummary::default();
        }
        let us = |ns: u64| ns as f64 / 1e3;
        self.with(|h| LatSummary {
            mean: h.mean() / 1e3,
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p95: us(h.value_at_quantile(0.95)),
            p99: us(h.value_at_quantile(0.99)),
            p99_9: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
        })
    }

    /// The form a histogram travels in between processes (a rank's part): the packed bytes
    /// themselves when it is at rest, else HDR V2 without DEFLATE: a merged part re-encoded at every step up a tree costs the
    /// compression no time. [`LatHist::decode`] reads both.
    pub fn encode_wire(&self) -> Result<Vec<u8>, HistError> {
        match &self.0 {
            Repr::Counting(h) => plain_bytes(h),
            Repr::Packed { bytes, .. } => Ok(bytes.to_vec()),
        }
    }

    /// Compact binary form (HdrHistogram V2 + DEFLATE), for storing and merging later: the
    /// packed bytes themselves when the histogram is at rest.
    pub fn encode(&self) -> Result<Vec<u8>, HistError> {
        match &self.0 {
            Repr::Counting(h) => pack_bytes(h),
            Repr::Packed { bytes, .. } => Ok(bytes.to_vec()),
        }
    }

    pub fn decode(bytes: &[u8]) -> Result<LatHist, HistError> {
        unpack(bytes).map(|h| LatHist(Repr::Counting(h)))
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
        let Repr::Counting(c) = &h.0 else {
            panic!("a new histogram counts")
        };
        assert!(
            c.distinct_values() * 3 <= full.distinct_values(),
            "{} vs {}",
            c.distinct_values(),
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

    #[test]
    fn a_packed_histogram_keeps_everything_in_a_fraction_of_the_memory() {
        let mut h = LatHist::new();
        for us in 1..=1000u64 {
            h.record(us * 1000 + us % 7);
        }
        let counting = h.clone();
        let encoded = h.encode().unwrap();
        h.pack();
        assert!(h.is_packed());
        let Repr::Packed { bytes, .. } = &h.0 else {
            unreachable!()
        };
        let Repr::Counting(c) = &counting.0 else {
            unreachable!()
        };
        // The counters are 8 bytes each; packed they are a small fraction of that.
        assert!(
            bytes.len() * 10 < c.distinct_values() * 8,
            "{}",
            bytes.len()
        );
        assert_eq!(h, counting);
        assert_eq!(h.count(), 1000);
        assert_eq!(h.summary(), counting.summary());
        assert_eq!(
            h.encode().unwrap(),
            encoded,
            "packed bytes are the stored form"
        );
        // Merging into it, or recording, unpacks it first; the data stay exact.
        let mut both = h.clone();
        both += &counting;
        assert!(!both.is_packed());
        assert_eq!(both.count(), 2000);
        let mut more = h.clone();
        more.record(5_000_000);
        assert_eq!(more.count(), 1001);
        assert_eq!(more.max_ns(), counting.max_ns().max(more.max_ns()));
        // A packed histogram merges into another as it is.
        let mut total = LatHist::new();
        total += &h;
        assert_eq!(total, counting);
        h.clear();
        assert!(h.is_empty() && !h.is_packed());
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
