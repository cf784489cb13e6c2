//! Where an I/O's time goes below the application, per block device and direction, from the
//! kernel's block tracepoints (the stages of blktrace's btt): before the request queue
//! (`block_bio_queue` → insert or issue: throttling, splitting, waiting for a request), in
//! the queue (`block_rq_insert` → `block_rq_issue`, btt's Q2D less its pre-queue part) and in
//! the device (`block_rq_issue` → `block_rq_complete`, btt's D2C).
//!
//! [`LayerCounters`] are cumulative since the tracer started, sampled with the other /proc
//! counters at the ends of each interval (`Snapshot::layers`); [`LayerRates`] are one
//! interval's figures between two samples (`Derived::layers`), as iostat's are between two
//! reads of /proc/diskstats.

use serde::{Deserialize, Serialize};

/// Sub-buckets per power of two of a [`StageHist`]: a bucket spans 1/16 of its octave, so a
/// quantile read from it (interpolated within the bucket) is within about 3% of the exact one.
pub const SUB_BUCKETS: u32 = 16;

/// The bucket of `ns` in a [`StageHist`]: values below [`SUB_BUCKETS`] have a bucket each;
/// above, octave `k` (values in `[2^k, 2^(k+1))`) has [`SUB_BUCKETS`] equal buckets. The same
/// function runs in the BPF program, so the kernel's and the reader's buckets agree.
pub fn bucket_of(ns: u64) -> u32 {
    if ns < u64::from(SUB_BUCKETS) {
        return ns as u32;
    }
    let k = 63 - ns.leading_zeros(); // 2^k <= ns
    let shift = k - SUB_BUCKETS.trailing_zeros();
    let sub = ((ns >> shift) as u32) - SUB_BUCKETS; // 0..SUB_BUCKETS
    (k - SUB_BUCKETS.trailing_zeros() + 1) * SUB_BUCKETS + sub
}

/// The lowest value of bucket `b` (the inverse of [`bucket_of`] at the bucket's start).
pub fn bucket_low(b: u32) -> u64 {
    if b < SUB_BUCKETS {
        return u64::from(b);
    }
    let octave = b / SUB_BUCKETS - 1;
    let sub = u64::from(b % SUB_BUCKETS);
    (u64::from(SUB_BUCKETS) + sub) << octave
}

/// A latency histogram of one stage, in nanoseconds: how many, their sum, and the non-empty
/// buckets of [`bucket_of`] as `(bucket, count)` in bucket order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageHist {
    pub count: u64,
    pub sum_ns: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buckets: Vec<(u32, u64)>,
}

impl StageHist {
    /// What happened between `prev` and `self` (both cumulative from the same tracer);
    /// buckets that did not grow are left out.
    pub fn since(&self, prev: &StageHist) -> StageHist {
        let mut buckets = Vec::new();
        let mut p = prev.buckets.iter().peekable();
        for &(b, n) in &self.buckets {
            while p.next_if(|(pb, _)| *pb < b).is_some() {}
            let before = p.next_if(|(pb, _)| *pb == b).map_or(0, |(_, c)| *c);
            if n > before {
                buckets.push((b, n - before));
            }
        }
        StageHist {
            count: self.count.saturating_sub(prev.count),
            sum_ns: self.sum_ns.saturating_sub(prev.sum_ns),
            buckets,
        }
    }

    /// The `q` quantile (0–1) in nanoseconds, interpolated within its bucket; `None` when
    /// empty.
    pub fn quantile_ns(&self, q: f64) -> Option<f64> {
        let total: u64 = self.buckets.iter().map(|(_, n)| n).sum();
        if total == 0 {
            return None;
        }
        let rank = q.clamp(0.0, 1.0) * total as f64;
        let mut seen = 0u64;
        for &(b, n) in &self.buckets {
            if (seen + n) as f64 >= rank {
                let (lo, hi) = (bucket_low(b) as f64, bucket_low(b + 1) as f64);
                let within = ((rank - seen as f64) / n as f64).clamp(0.0, 1.0);
                return Some(lo + (hi - lo) * within);
            }
            seen += n;
        }
        self.buckets.last().map(|(b, _)| bucket_low(b + 1) as f64)
    }

    /// The mean in nanoseconds; `None` when empty.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64)
    }
}

/// One direction's cumulative counters on one device.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCounters {
    /// Requests completed (`block_rq_complete`).
    pub requests: u64,
    /// Bytes those requests carried.
    pub bytes: u64,
    /// Bios merged into a request already made (`block_bio_backmerge`/`frontmerge`).
    pub merges: u64,
    /// Bios split to fit the device's limits (`block_split`).
    pub splits: u64,
    /// A request's first bio queued → the request inserted into the scheduler's queue, or
    /// issued when it bypassed the queue.
    pub pre_queue: StageHist,
    /// Inserted → issued to the driver (0 for requests issued directly).
    pub queue: StageHist,
    /// Issued → completed: the device's service time (btt's D2C).
    pub device: StageHist,
}

/// Cumulative block-layer counters of one device since the tracer started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerCounters {
    /// Kernel name: `vda`, `loop3`, `nvme0n1`.
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub read: StageCounters,
    pub write: StageCounters,
    /// Requests put back into the queue (`block_rq_requeue`).
    pub requeues: u64,
    /// The queue's `nr_requests` when the tracer started (absent in results from before it
    /// was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u32>,
}

/// The kernel's whole time for this process's own io_uring reads and writes, cumulative since
/// the tracer started: `io_uring_submit_req` → `io_uring_complete` (the completion posted to
/// the ring, after the wake-up that follows the device's interrupt). It holds the submit path
/// (system call, io_uring, filesystem), every block stage and the completion's way back; what
/// the application's latency adds to it is iogauge's own time. Not per disk: io_uring does
/// not know the disk when it takes a request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RingCounters {
    pub read: StageHist,
    pub write: StageHist,
}

/// [`RingCounters`] over an interval, per direction (`None`: no I/O of that direction).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RingRates {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<StageLat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<StageLat>,
}

impl RingRates {
    pub fn between(prev: &RingCounters, cur: &RingCounters) -> RingRates {
        RingRates {
            read: StageLat::of(&cur.read.since(&prev.read)),
            write: StageLat::of(&cur.write.since(&prev.write)),
        }
    }
}

/// One stage's latency over an interval, µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageLat {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
}

impl StageLat {
    fn of(h: &StageHist) -> Option<StageLat> {
        Some(StageLat {
            mean_us: h.mean_ns()? / 1e3,
            p50_us: h.quantile_ns(0.5)? / 1e3,
            p99_us: h.quantile_ns(0.99)? / 1e3,
        })
    }
}

/// One direction's figures on one device over an interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageRates {
    /// Requests completed per second.
    pub req_s: f64,
    /// Mean request size, KiB (what the device was asked per request: read-ahead and merges
    /// make it larger than the application's block).
    pub req_kib: f64,
    pub merges_s: f64,
    pub splits_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_queue: Option<StageLat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<StageLat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<StageLat>,
}

impl StageRates {
    pub fn between(prev: &StageCounters, cur: &StageCounters, secs: f64) -> StageRates {
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let requests = cur.requests.saturating_sub(prev.requests);
        let bytes = cur.bytes.saturating_sub(prev.bytes);
        StageRates {
            req_s: per_s(requests),
            req_kib: if requests > 0 {
                bytes as f64 / 1024.0 / requests as f64
            } else {
                0.0
            },
            merges_s: per_s(cur.merges.saturating_sub(prev.merges)),
            splits_s: per_s(cur.splits.saturating_sub(prev.splits)),
            pre_queue: StageLat::of(&cur.pre_queue.since(&prev.pre_queue)),
            queue: StageLat::of(&cur.queue.since(&prev.queue)),
            device: StageLat::of(&cur.device.since(&prev.device)),
        }
    }
}

/// One device's block-layer figures over an interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LayerRates {
    pub read: StageRates,
    pub write: StageRates,
    pub requeues_s: f64,
    /// The queue's `nr_requests` ([`LayerCounters::nr_requests`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u32>,
}

impl LayerRates {
    pub fn between(prev: &LayerCounters, cur: &LayerCounters, secs: f64) -> LayerRates {
        LayerRates {
            read: StageRates::between(&prev.read, &cur.read, secs),
            write: StageRates::between(&prev.write, &cur.write, secs),
            requeues_s: if secs > 0.0 {
                cur.requeues.saturating_sub(prev.requeues) as f64 / secs
            } else {
                0.0
            },
            nr_requests: cur.nr_requests,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut last = 0;
        for ns in (0..100_000u64).chain([1 << 20, (1 << 20) + 1, u64::MAX / 2, u64::MAX]) {
            let b = bucket_of(ns);
            assert!(b >= last, "{ns}");
            assert!(
                bucket_low(b) <= ns,
                "{ns}: bucket {b} starts at {}",
                bucket_low(b)
            );
            if ns < u64::MAX / 2 {
                assert!(ns < bucket_low(b + 1), "{ns}: bucket {b}");
            }
            last = b;
        }
        // A bucket spans 1/16 of its octave.
        assert_eq!(
            bucket_low(bucket_of(1_000_000) + 1) - bucket_low(bucket_of(1_000_000)),
            1 << 15
        );
    }

    fn hist(values: &[u64]) -> StageHist {
        let mut h = StageHist::default();
        for &v in values {
            h.count += 1;
            h.sum_ns += v;
            let b = bucket_of(v);
            match h.buckets.binary_search_by_key(&b, |(k, _)| *k) {
                Ok(i) => h.buckets[i].1 += 1,
                Err(i) => h.buckets.insert(i, (b, 1)),
            }
        }
        h
    }

    #[test]
    fn quantiles_are_within_the_bucket_width() {
        let values: Vec<u64> = (1..=10_000).map(|i| i * 997).collect();
        let h = hist(&values);
        for q in [0.5, 0.9, 0.99] {
            let exact = values[(q * values.len() as f64) as usize - 1] as f64;
            let got = h.quantile_ns(q).unwrap();
            assert!((got - exact).abs() / exact < 0.04, "q{q}: {got} vs {exact}");
        }
        assert_eq!(h.mean_ns(), Some(997.0 * 5000.5));
        assert_eq!(StageHist::default().quantile_ns(0.5), None);
    }

    #[test]
    fn an_interval_is_the_difference_of_two_samples() {
        let a = hist(&[1_000, 2_000, 50_000]);
        let b = hist(&[1_000, 2_000, 50_000, 2_000, 9_000_000]);
        let d = b.since(&a);
        assert_eq!((d.count, d.sum_ns), (2, 9_002_000));
        assert_eq!(d, hist(&[2_000, 9_000_000]));
        assert_eq!(a.since(&a), StageHist::default());
    }

    #[test]
    fn rates_between_two_samples() {
        let prev = StageCounters {
            requests: 10,
            bytes: 10 * 4096,
            ..Default::default()
        };
        let cur = StageCounters {
            requests: 110,
            bytes: 10 * 4096 + 100 * 65536,
            merges: 50,
            device: hist(&[100_000; 100]),
            ..Default::default()
        };
        let r = StageRates::between(&prev, &cur, 2.0);
        assert_eq!((r.req_s, r.req_kib, r.merges_s), (50.0, 64.0, 25.0));
        let d = r.device.unwrap();
        assert!(
            (d.mean_us - 100.0).abs() < 1e-9 && (d.p50_us - 100.0).abs() < 4.0,
            "{d:?}"
        );
        assert!(r.queue.is_none());
    }
}
