//! What a trace did, in figures a user reads and a replay is compared on ([`crate::Fidelity`]),
//! computed in one streaming pass with memory bounded whatever the trace's length: counters,
//! two HDR histograms, the last few 100 ms windows, and maps bounded by the trace's distinct
//! sizes (at most [`MAX_DISTINCT_SIZES`]), devices and issuers.
//!
//! Reads and writes are the "data" requests: IOPS, sizes, locality and peak windows count
//! them only (a flush has no size or place; a discard's size says nothing about I/O). The
//! inter-arrival distribution counts every request. A figure that cannot be measured is
//! `None`, never 0.

use crate::hist::{new_hist, record, HistBuckets};
use crate::{Flags, Issuer, Op, Request};
use hdrhistogram::Histogram;
use iogauge_stats::{Bytes, Iops, Nanos};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Sizes kept by name in [`Summary::sizes`]; the rest are [`Summary::sizes_other`].
pub const TOP_SIZES: usize = 32;
/// Distinct sizes counted one by one; sizes first seen after this many go to "other" (the
/// histogram still has them).
pub const MAX_DISTINCT_SIZES: usize = 4096;
/// "Local": within this many bytes of the previous data request's end on the device.
pub const LOCAL_BYTES: u64 = 1 << 20;
/// The window of the peak IOPS.
pub const PEAK_WINDOW_NS: u64 = 100_000_000;
/// Issuers named in [`Summary::top_issuers`].
pub const TOP_ISSUERS: usize = 8;
/// Windows kept open for requests that arrive out of order (per-CPU buffers).
const OPEN_WINDOWS: usize = 16;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeCount {
    pub size: Bytes,
    pub requests: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopIssuer {
    /// Index into the trace's issuers.
    pub issuer: u32,
    /// `None` when the issuer table was not given ([`SummaryBuilder::finish`]).
    pub pid: Option<u32>,
    pub comm: Option<String>,
    pub requests: u64,
}

/// A trace's figures (stored as JSON, shown to users).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub duration_s: f64,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub discards: u64,
    pub bytes_read: Bytes,
    pub bytes_written: Bytes,
    /// Reads and writes a second over the duration.
    pub iops: Option<Iops>,
    /// reads / (reads + writes).
    pub read_share: Option<f64>,
    /// The most frequent read/write sizes, most frequent first.
    pub sizes: Vec<SizeCount>,
    /// Reads and writes of the other sizes.
    pub sizes_other: u64,
    pub size_p50: Option<Bytes>,
    pub size_p90: Option<Bytes>,
    pub size_p99: Option<Bytes>,
    /// Read/write sizes in bytes (HDR, 3 digits).
    pub size_hist: HistBuckets,
    /// Share of reads+writes within [`LOCAL_BYTES`] of the previous read/write's end on the
    /// same device (a device's first does not count as local).
    pub locality: Option<f64>,
    /// Share of reads+writes starting exactly at the previous one's end on the same device.
    pub sequential: Option<f64>,
    /// Successive requests' issue-time differences, all devices together, ns (HDR, 3 digits).
    pub interarrival: HistBuckets,
    pub interarrival_mean: Option<Nanos>,
    pub interarrival_p50: Option<Nanos>,
    pub interarrival_p99: Option<Nanos>,
    /// Coefficient of variation (standard deviation / mean): 1 for Poisson arrivals, above
    /// for bursts, below for paced ones.
    pub interarrival_cv: Option<f64>,
    /// The busiest 100 ms window's read/write IOPS over the mean IOPS.
    pub peak_100ms_over_mean: Option<f64>,
    /// In flight at issue, itself included, over the requests that know it.
    pub in_flight_mean: Option<f64>,
    pub in_flight_max: Option<u16>,
    pub sync: u64,
    pub fua: u64,
    pub preflush: u64,
    /// Requests by device index.
    pub per_device: Vec<u64>,
    pub top_issuers: Vec<TopIssuer>,
}

/// Builds a [`Summary`] one request at a time.
pub struct SummaryBuilder {
    counts: [u64; 4],
    bytes: [u64; 2],
    sizes: HashMap<u32, u64>,
    sizes_overflow: u64,
    size_hist: Histogram<u64>,
    ends: Vec<Option<u64>>,
    local: u64,
    sequential: u64,
    last_at: Option<u64>,
    interarrival: Histogram<u64>,
    windows: BTreeMap<u64, u64>,
    peak_window: u64,
    in_flight_sum: u64,
    in_flight_known: u64,
    in_flight_max: u16,
    flags: [u64; 3],
    per_device: Vec<u64>,
    issuers: HashMap<u32, u64>,
}

impl SummaryBuilder {
    /// For a trace of `devices` devices (requests on devices beyond are counted too).
    pub fn new(devices: usize) -> Self {
        SummaryBuilder {
            counts: [0; 4],
            bytes: [0; 2],
            sizes: HashMap::new(),
            sizes_overflow: 0,
            size_hist: new_hist(),
            ends: vec![None; devices],
            local: 0,
            sequential: 0,
            last_at: None,
            interarrival: new_hist(),
            windows: BTreeMap::new(),
            peak_window: 0,
            in_flight_sum: 0,
            in_flight_known: 0,
            in_flight_max: 0,
            flags: [0; 3],
            per_device: vec![0; devices],
            issuers: HashMap::new(),
        }
    }

    pub fn push(&mut self, r: &Request) {
        self.counts[usize::from(r.op.code())] += 1;
        let d = usize::from(r.device);
        if self.per_device.len() <= d {
            self.per_device.resize(d + 1, 0);
            self.ends.resize(d + 1, None);
        }
        self.per_device[d] += 1;
        if let Some(last) = self.last_at {
            record(&mut self.interarrival, r.at_ns.abs_diff(last), 1);
        }
        self.last_at = Some(r.at_ns);
        if r.in_flight > 0 {
            self.in_flight_sum += u64::from(r.in_flight);
            self.in_flight_known += 1;
            self.in_flight_max = self.in_flight_max.max(r.in_flight);
        }
        for (i, f) in [Flags::SYNC, Flags::FUA, Flags::PREFLUSH]
            .into_iter()
            .enumerate()
        {
            self.flags[i] += u64::from(r.flags.contains(f));
        }
        if r.issuer != Request::UNKNOWN_ISSUER {
            *self.issuers.entry(r.issuer).or_default() += 1;
        }
        if r.op.is_data() {
            self.push_data(r, d);
        }
    }

    fn push_data(&mut self, r: &Request, d: usize) {
        self.bytes[usize::from(r.op == Op::Write)] += u64::from(r.len);
        let room = self.sizes.len() < MAX_DISTINCT_SIZES;
        match self.sizes.get_mut(&r.len) {
            Some(n) => *n += 1,
            None if room => {
                self.sizes.insert(r.len, 1);
            }
            None => self.sizes_overflow += 1,
        }
        record(&mut self.size_hist, u64::from(r.len), 1);
        if let Some(end) = self.ends[d] {
            self.local += u64::from(r.offset.abs_diff(end) <= LOCAL_BYTES);
            self.sequential += u64::from(r.offset == end);
        }
        self.ends[d] = Some(r.end());
        *self.windows.entry(r.at_ns / PEAK_WINDOW_NS).or_default() += 1;
        if self.windows.len() > OPEN_WINDOWS {
            if let Some((_, n)) = self.windows.pop_first() {
                self.peak_window = self.peak_window.max(n);
            }
        }
    }

    /// The summary over `duration_ns`, issuers named by index only.
    pub fn finish(self, duration_ns: u64) -> Summary {
        self.finish_with_issuers(duration_ns, &[])
    }

    /// The summary over `duration_ns`, the top issuers' pid and comm taken from `issuers`.
    pub fn finish_with_issuers(self, duration_ns: u64, issuers: &[Issuer]) -> Summary {
        let [reads, writes, flushes, discards] = self.counts;
        let data = reads + writes;
        let duration_s = duration_ns as f64 / 1e9;
        let share = |n: u64| (data > 0).then(|| n as f64 / data as f64);
        let iops = (duration_ns > 0 && data > 0).then(|| Iops::per(data, duration_s));
        let peak = self
            .windows
            .values()
            .copied()
            .max()
            .unwrap_or(0)
            .max(self.peak_window);
        let peak_iops = peak as f64 / (PEAK_WINDOW_NS as f64 / 1e9);
        // The bucket's lowest value: a trace of 4096-byte requests has a p50 of 4096, not the
        // highest value HDR's bucket holds (4099 at 3 digits).
        let quantile = |h: &Histogram<u64>, q: f64| {
            (!h.is_empty()).then(|| h.lowest_equivalent(h.value_at_quantile(q)))
        };
        let ia = &self.interarrival;
        let mut sizes: Vec<SizeCount> = self
            .sizes
            .iter()
            .map(|(&size, &requests)| SizeCount {
                size: Bytes(u64::from(size)),
                requests,
            })
            .collect();
        sizes.sort_by(|a, b| b.requests.cmp(&a.requests).then(a.size.cmp(&b.size)));
        let kept: u64 = sizes.iter().take(TOP_SIZES).map(|s| s.requests).sum();
        sizes.truncate(TOP_SIZES);
        let mut top: Vec<(u32, u64)> = self.issuers.into_iter().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Summary {
            duration_s,
            requests: reads + writes + flushes + discards,
            reads,
            writes,
            flushes,
            discards,
            bytes_read: Bytes(self.bytes[0]),
            bytes_written: Bytes(self.bytes[1]),
            iops,
            read_share: share(reads),
            sizes,
            sizes_other: data - kept,
            size_p50: quantile(&self.size_hist, 0.5).map(Bytes),
            size_p90: quantile(&self.size_hist, 0.9).map(Bytes),
            size_p99: quantile(&self.size_hist, 0.99).map(Bytes),
            size_hist: HistBuckets::of(&self.size_hist),
            locality: share(self.local),
            sequential: share(self.sequential),
            interarrival: HistBuckets::of(ia),
            interarrival_mean: (!ia.is_empty()).then(|| Nanos(ia.mean().round() as u64)),
            interarrival_p50: quantile(ia, 0.5).map(Nanos),
            interarrival_p99: quantile(ia, 0.99).map(Nanos),
            interarrival_cv: (!ia.is_empty() && ia.mean() > 0.0).then(|| ia.stdev() / ia.mean()),
            peak_100ms_over_mean: iops.map(|m| peak_iops / m.0),
            in_flight_mean: (self.in_flight_known > 0)
                .then(|| self.in_flight_sum as f64 / self.in_flight_known as f64),
            in_flight_max: (self.in_flight_known > 0).then_some(self.in_flight_max),
            sync: self.flags[0],
            fua: self.flags[1],
            preflush: self.flags[2],
            per_device: self.per_device,
            top_issuers: top
                .into_iter()
                .take(TOP_ISSUERS)
                .map(|(issuer, requests)| {
                    let who = usize::try_from(issuer).ok().and_then(|i| issuers.get(i));
                    TopIssuer {
                        issuer,
                        pid: who.map(|w| w.pid),
                        comm: who.map(|w| w.comm.clone()),
                        requests,
                    }
                })
                .collect(),
        }
    }
}

/// The summary of a whole slice (for tests and small traces).
pub fn summarise(devices: usize, requests: &[Request], duration_ns: u64) -> Summary {
    let mut b = SummaryBuilder::new(devices);
    requests.iter().for_each(|r| b.push(r));
    b.finish(duration_ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{random_reads, sequential_reads};

    fn req(at_ns: u64, device: u16, offset: u64, len: u32, op: Op) -> Request {
        Request {
            at_ns,
            device,
            offset,
            len,
            op,
            flags: Flags::NONE,
            issuer: Request::UNKNOWN_ISSUER,
            in_flight: 0,
        }
    }

    #[test]
    fn a_small_trace_by_hand() {
        let k = 4096;
        let trace = [
            req(0, 0, 0, k, Op::Read),                 // first on device 0: not local
            req(10, 0, 4096, k, Op::Write),            // sequential, local
            req(30, 1, 1 << 30, 2 * k, Op::Read),      // first on device 1
            req(60, 0, 8192 + (1 << 20), k, Op::Read), // 1 MiB past the end: local
            req(100, 0, 0, 0, Op::Flush),              // not data
            req(150, 1, 0, k, Op::Read),               // 1 GiB back: far
        ];
        let s = summarise(2, &trace, 1_000_000_000);
        assert_eq!(
            (s.requests, s.reads, s.writes, s.flushes, s.discards),
            (6, 4, 1, 1, 0)
        );
        assert_eq!(
            (s.bytes_read, s.bytes_written),
            (Bytes(5 * 4096), Bytes(4096))
        );
        assert_eq!(s.iops, Some(Iops(5.0)));
        assert_eq!(s.read_share, Some(0.8));
        assert_eq!((s.locality, s.sequential), (Some(0.4), Some(0.2)));
        assert_eq!(
            s.sizes[0],
            SizeCount {
                size: Bytes(4096),
                requests: 4
            }
        );
        assert_eq!((s.sizes.len(), s.sizes_other), (2, 0));
        assert_eq!(s.per_device, vec![4, 2]);
        // Gaps 10, 20, 30, 40, 50: mean 30.
        assert_eq!(s.interarrival_mean, Some(Nanos(30)));
        assert_eq!(s.interarrival.count(), 5);
        assert_eq!(
            (s.in_flight_mean, s.in_flight_max),
            (None, None),
            "imports without it"
        );
        assert!(s.top_issuers.is_empty());
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Summary>(&json).unwrap(), s);
    }

    #[test]
    fn nothing_measured_is_none_not_zero() {
        let s = summarise(1, &[], 0);
        assert_eq!(
            (s.iops, s.read_share, s.locality, s.size_p50),
            (None, None, None, None)
        );
        assert_eq!(
            (
                s.interarrival_mean,
                s.interarrival_cv,
                s.peak_100ms_over_mean
            ),
            (None, None, None)
        );
    }

    #[test]
    fn sizes_keep_the_top_32_and_count_the_rest() {
        // Size i*512 appears i times, for 40 sizes.
        let trace: Vec<Request> = (1..=40u32)
            .flat_map(|i| {
                (0..i).map(move |j| req(u64::from(i * 100 + j), 0, 0, i * 512, Op::Write))
            })
            .collect();
        let s = summarise(1, &trace, 1_000_000);
        assert_eq!(s.sizes.len(), TOP_SIZES);
        assert_eq!(
            s.sizes[0],
            SizeCount {
                size: Bytes(40 * 512),
                requests: 40
            }
        );
        assert_eq!(s.sizes_other, (1..=8).sum::<u64>());
        // The p50 request: half of the 820 requests are at or below it.
        let total = trace.len() as u64;
        let p50 = s.size_p50.unwrap().0;
        let at_or_below = trace.iter().filter(|r| u64::from(r.len) <= p50).count() as u64;
        assert!(
            at_or_below * 2 >= total && (at_or_below - 40) * 2 < total,
            "{p50}"
        );
    }

    #[test]
    fn in_flight_flags_issuers_and_peak() {
        let mut trace = random_reads(2000, 1);
        // Squeeze the first 1000 into 50 ms: that window is the peak.
        for r in &mut trace[..1000] {
            r.at_ns /= 1000;
        }
        trace.sort_by_key(|r| r.at_ns);
        for (i, r) in trace.iter_mut().enumerate() {
            r.issuer = (i % 10) as u32 % 3;
            r.flags = if i % 4 == 0 {
                Flags::SYNC | Flags::FUA
            } else {
                Flags::NONE
            };
        }
        let duration = trace.last().unwrap().at_ns + 1;
        let issuers: Vec<Issuer> = (0..3)
            .map(|i| Issuer {
                pid: i,
                comm: format!("c{i}"),
                cgroup: 0,
            })
            .collect();
        let mut b = SummaryBuilder::new(1);
        trace.iter().for_each(|r| b.push(r));
        let s = b.finish_with_issuers(duration, &issuers);
        let mut windows = HashMap::new();
        trace
            .iter()
            .for_each(|r| *windows.entry(r.at_ns / PEAK_WINDOW_NS).or_insert(0u64) += 1);
        let peak = *windows.values().max().unwrap() as f64 * 10.0;
        let mean = trace.len() as f64 / (duration as f64 / 1e9);
        assert!((s.peak_100ms_over_mean.unwrap() - peak / mean).abs() < 1e-9);
        let known: Vec<u64> = trace.iter().map(|r| u64::from(r.in_flight)).collect();
        assert_eq!(s.in_flight_max, trace.iter().map(|r| r.in_flight).max());
        let m = known.iter().sum::<u64>() as f64 / known.len() as f64;
        assert!((s.in_flight_mean.unwrap() - m).abs() < 1e-9);
        assert_eq!((s.sync, s.fua, s.preflush), (500, 500, 0));
        let by_count = |i: u32| trace.iter().filter(|r| r.issuer == i).count() as u64;
        assert_eq!(s.top_issuers.len(), 3);
        assert_eq!(
            s.top_issuers[0].requests,
            (0..3).map(by_count).max().unwrap()
        );
        assert_eq!(
            s.top_issuers[0].comm,
            Some(format!("c{}", s.top_issuers[0].issuer))
        );
    }

    #[test]
    fn locality_matches_its_definition_on_a_mix() {
        let mut trace = random_reads(3000, 7);
        trace.extend(sequential_reads(3000, 8).into_iter().map(|mut r| {
            r.device = 1;
            r
        }));
        trace.sort_by_key(|r| r.at_ns);
        let s = summarise(2, &trace, trace.last().unwrap().at_ns);
        // The definition, directly.
        let mut ends: HashMap<u16, u64> = HashMap::new();
        let (mut local, mut seq) = (0, 0);
        for r in &trace {
            if let Some(&e) = ends.get(&r.device) {
                local += u64::from(r.offset.abs_diff(e) <= 1 << 20);
                seq += u64::from(r.offset == e);
            }
            ends.insert(r.device, r.offset + u64::from(r.len));
        }
        assert_eq!(s.locality, Some(local as f64 / 6000.0));
        assert_eq!(s.sequential, Some(seq as f64 / 6000.0));
        assert!(s.sequential.unwrap() > 0.49 && s.sequential.unwrap() < 0.51);
    }
}
