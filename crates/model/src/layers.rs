//! Where an I/O's time goes below the application, per block device and direction, from the
//! kernel's block tracepoints (the stages of blktrace's btt): before the request queue
//! (`block_bio_queue` → insert or issue: throttling, splitting, waiting for a request), in
//! the queue (`block_rq_insert` → `block_rq_issue`, btt's Q2D less its pre-queue part) and in
//! the device (`block_rq_issue` → `block_rq_complete`, btt's D2C).
//!
//! [`LayerCounters`] are sampled with the other /proc counters at the ends of each interval
//! (`Snapshot::layers`): counts and sums cumulative since the tracer started, as diskstats'
//! are, but each stage's histogram buckets only what the interval since the tracer's previous
//! reading added ([`StageHist`]), so that a long run keeps one interval's buckets per
//! snapshot, not the whole run's again and again. [`LayerRates`] are one interval's figures
//! between two samples (`Derived::layers`), as iostat's are between two reads of
//! /proc/diskstats.

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
///
/// In a snapshot (`Snapshot::layers`, `Snapshot::ring`) `count` and `sum_ns` are cumulative
/// since the tracer started and `buckets` are those the interval ending at the snapshot
/// added ([`StageHist::fresh_since`]); an interval's histogram is then [`StageHist::after`]
/// the snapshot before, and a longer span's merges its snapshots' buckets
/// (`crate::derive::derive_over`).
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
        // Kept in every snapshot to the end of a run: no spare capacity.
        buckets.shrink_to_fit();
        StageHist {
            count: self.count.saturating_sub(prev.count),
            sum_ns: self.sum_ns.saturating_sub(prev.sum_ns),
            buckets,
        }
    }

    /// `self` (cumulative, as the tracer reads it) as a snapshot keeps it: the same count and
    /// sum, with only the buckets that grew since `prev` (the tracer's previous reading).
    pub fn fresh_since(&self, prev: &StageHist) -> StageHist {
        StageHist {
            count: self.count,
            sum_ns: self.sum_ns,
            buckets: self.since(prev).buckets,
        }
    }

    /// The interval ending at snapshot `self`, after snapshot `prev`: counts and sums by
    /// difference, the buckets `self` carries.
    pub fn after(&self, prev: &StageHist) -> StageHist {
        StageHist {
            count: self.count.saturating_sub(prev.count),
            sum_ns: self.sum_ns.saturating_sub(prev.sum_ns),
            buckets: self.buckets.clone(),
        }
    }

    /// Adds `other`'s buckets to this histogram's (counts and sums unchanged).
    pub fn add_buckets(&mut self, other: &StageHist) {
        if other.buckets.is_empty() {
            return;
        }
        let mut all: Vec<(u32, u64)> = self.buckets.iter().chain(&other.buckets).copied().collect();
        all.sort_unstable_by_key(|(b, _)| *b);
        all.dedup_by(|next, kept| {
            let same = next.0 == kept.0;
            if same {
                kept.1 += next.1;
            }
            same
        });
        self.buckets = all;
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

impl StageCounters {
    fn hists(&self) -> [&StageHist; 3] {
        [&self.pre_queue, &self.queue, &self.device]
    }

    fn hists_mut(&mut self) -> [&mut StageHist; 3] {
        [&mut self.pre_queue, &mut self.queue, &mut self.device]
    }
}

/// Cumulative block-layer counters of one device since the tracer started (but see
/// [`StageHist`] for the buckets a snapshot keeps).
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
    /// In the interval ending at this reading the stages were timed for 1 request in this
    /// many, each timed one counting as many in its stage's count, sum and buckets (so they
    /// estimate every request); requests, bytes, merges, splits and requeues are counted
    /// for all. Absent: every request was timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_one_in: Option<u32>,
    /// The job's own requests among `read` and `write` (the tracer's attribution: the job's
    /// cgroup, or writeback of pages the job dirtied), with their stages; everyone else's are
    /// the difference. Absent: attribution was off (no cgroup of its own for the job) or the
    /// result is from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ours: Option<Box<JobCounters>>,
}

/// The job's own requests on one device, both directions ([`LayerCounters::ours`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCounters {
    pub read: StageCounters,
    pub write: StageCounters,
}

impl JobCounters {
    fn hists_mut(&mut self) -> impl Iterator<Item = &mut StageHist> {
        self.read
            .hists_mut()
            .into_iter()
            .chain(self.write.hists_mut())
    }

    fn hists(&self) -> impl Iterator<Item = &StageHist> {
        self.read.hists().into_iter().chain(self.write.hists())
    }
}

/// Another process's bios on the traced disks over one interval (the tracer's attribution):
/// who queued them. Page-cache writeback is queued by a flusher thread (`kworker/…`), not by
/// the process that wrote the pages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    pub pid: u32,
    /// The process's name when its first bio was seen (`comm`, 15 bytes at most).
    pub comm: String,
    pub bios: u64,
    pub bytes: u64,
    /// Bios of page-cache pages (writeback) among `bios`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub writeback: u64,
}

/// Origins summed by process (pid and name), the busiest (most bios) first.
pub fn merge_origins<'a>(all: impl IntoIterator<Item = &'a Origin>) -> Vec<Origin> {
    let mut out: Vec<Origin> = Vec::new();
    for o in all {
        match out.iter_mut().find(|x| x.pid == o.pid && x.comm == o.comm) {
            Some(x) => {
                x.bios += o.bios;
                x.bytes += o.bytes;
                x.writeback += o.writeback;
            }
            None => out.push(o.clone()),
        }
    }
    out.sort_by(|a, b| b.bios.cmp(&a.bios).then(a.pid.cmp(&b.pid)));
    out
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl LayerCounters {
    fn hists(&self) -> impl Iterator<Item = &StageHist> {
        self.read.hists().into_iter().chain(self.write.hists())
    }

    fn hists_mut(&mut self) -> impl Iterator<Item = &mut StageHist> {
        self.read
            .hists_mut()
            .into_iter()
            .chain(self.write.hists_mut())
    }

    /// The tracer's reading `self` as a snapshot keeps it, `prev` being its reading before
    /// (none: every bucket is new) ([`StageHist::fresh_since`]).
    pub fn fresh_since(&self, prev: Option<&LayerCounters>) -> LayerCounters {
        let mut out = self.clone();
        if let Some(p) = prev {
            for (h, p) in out.hists_mut().zip(p.hists()) {
                *h = h.fresh_since(p);
            }
            if let (Some(o), Some(po)) = (&mut out.ours, &p.ours) {
                for (h, p) in o.hists_mut().zip(po.hists()) {
                    *h = h.fresh_since(p);
                }
            }
        }
        out
    }

    /// [`LayerCounters::fresh_since`] for every disk of a reading, each against its own
    /// counters in the reading `before` (matched by name).
    pub fn fresh_all(now: &[LayerCounters], before: &[LayerCounters]) -> Vec<LayerCounters> {
        now.iter()
            .map(|l| l.fresh_since(before.iter().find(|b| b.name == l.name)))
            .collect()
    }

    /// Adds `other`'s buckets to this one's, stage by stage ([`StageHist::add_buckets`]).
    pub fn add_buckets(&mut self, other: &LayerCounters) {
        for (h, o) in self.hists_mut().zip(other.hists()) {
            h.add_buckets(o);
        }
        if let (Some(a), Some(b)) = (&mut self.ours, &other.ours) {
            for (h, o) in a.hists_mut().zip(b.hists()) {
                h.add_buckets(o);
            }
        }
    }
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
    /// 1 request in this many was timed in the interval ending at this reading (chosen at
    /// random), each counting as many ([`LayerCounters::timed_one_in`]). Absent: all were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_one_in: Option<u32>,
}

impl RingCounters {
    /// [`LayerCounters::fresh_since`] for the ring's two histograms.
    pub fn fresh_since(&self, prev: Option<&RingCounters>) -> RingCounters {
        match prev {
            Some(p) => RingCounters {
                read: self.read.fresh_since(&p.read),
                write: self.write.fresh_since(&p.write),
                timed_one_in: self.timed_one_in,
            },
            None => self.clone(),
        }
    }

    /// [`LayerCounters::add_buckets`] for the ring's two histograms.
    pub fn add_buckets(&mut self, other: &RingCounters) {
        self.read.add_buckets(&other.read);
        self.write.add_buckets(&other.write);
    }
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
    /// The interval between snapshots `prev` and `cur`, the one right after the other.
    pub fn between(prev: &RingCounters, cur: &RingCounters) -> RingRates {
        RingRates {
            read: StageLat::of(&cur.read.after(&prev.read)),
            write: StageLat::of(&cur.write.after(&prev.write)),
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
    /// The interval between snapshots `prev` and `cur`, the one right after the other.
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
            pre_queue: StageLat::of(&cur.pre_queue.after(&prev.pre_queue)),
            queue: StageLat::of(&cur.queue.after(&prev.queue)),
            device: StageLat::of(&cur.device.after(&prev.device)),
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
    /// The job's own requests ([`LayerCounters::ours`]); absent without attribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ours: Option<Box<JobRates>>,
}

/// The job's own requests on one device over an interval, both directions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobRates {
    pub read: StageRates,
    pub write: StageRates,
}

impl LayerRates {
    /// The job's own stages when the tracer attributed requests, else every request's.
    pub fn own(&self) -> (&StageRates, &StageRates) {
        match &self.ours {
            Some(o) => (&o.read, &o.write),
            None => (&self.read, &self.write),
        }
    }

    /// The share of the device's requests that were the job's (0–1); `None` without
    /// attribution or requests.
    pub fn ours_share(&self) -> Option<f64> {
        let o = self.ours.as_ref()?;
        let all = self.read.req_s + self.write.req_s;
        (all > 0.0).then(|| ((o.read.req_s + o.write.req_s) / all).min(1.0))
    }
}

impl LayerRates {
    /// The interval between snapshots `prev` and `cur`, the one right after the other.
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
            ours: match (&prev.ours, &cur.ours) {
                (Some(p), Some(c)) => Some(Box::new(JobRates {
                    read: StageRates::between(&p.read, &c.read, secs),
                    write: StageRates::between(&p.write, &c.write, secs),
                })),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod tests;
