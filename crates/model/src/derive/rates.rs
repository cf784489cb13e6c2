//! What one interval's figures are: the iostat -x figures of a device ([`DiskRates`]), the CPU
//! shares ([`CpuRates`]), both with the formula from two raw counters, and the whole interval
//! ([`Derived`]) that [`derive`](super::derive) computes and [`Derived::combine`] joins.

use crate::counter::counter_delta;
use crate::layers::{LayerRates, Origin, RingRates};
use crate::sched::JobCpuRates;
use crate::system::{CpuCounters, DiskCounters, LoadAvg, MemInfo, SwapCounters};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Figures of one interval between two snapshots.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Per device present in both snapshots, by kernel name.
    pub disks: BTreeMap<String, DiskRates>,
    pub cpu: CpuRates,
    /// As of the later snapshot (a gauge, not a rate).
    pub mem: MemInfo,
    /// Percent of the interval during which some task stalled on I/O (Δsome.total µs / Δt).
    pub psi_some_pct: Option<f64>,
    /// /proc/loadavg as of the later snapshot (a gauge); `None` when it was not sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadAvg>,
    /// Per device by kernel name, where the time of its requests went (before the queue, in
    /// it, in the device), when the block-layer tracer ran.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub layers: BTreeMap<String, LayerRates>,
    /// The kernel's whole time for this process's io_uring I/Os (submit to completion), when
    /// the tracer saw them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring: Option<RingRates>,
    /// Other processes' bios on the traced disks in the interval, the busiest first
    /// (`crate::layers::Origin`); empty without the tracer's attribution.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Origin>,
    /// Pages swapped in and out per second (`sar -W`'s pswpin/s, pswpout/s), when both
    /// snapshots read /proc/vmstat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap: Option<SwapRates>,
    /// The job's own threads' CPU time and run-queue wait per second, when both snapshots
    /// read them; `None`: not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobCpuRates>,
    /// Percent of the interval during which some task waited for a CPU (/proc/pressure/cpu
    /// Δsome.total µs / Δt), when both snapshots read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_cpu_some_pct: Option<f64>,
}

/// Pages swapped per second over an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SwapRates {
    pub in_s: f64,
    pub out_s: f64,
}

impl SwapRates {
    /// Between two readings `secs` apart (0 when they are not apart).
    pub fn between(prev: &SwapCounters, cur: &SwapCounters, secs: f64) -> SwapRates {
        let per_s = |a: u64, b: u64| {
            if secs > 0.0 {
                counter_delta(a, b) as f64 / secs
            } else {
                0.0
            }
        };
        SwapRates {
            in_s: per_s(prev.pages_in, cur.pages_in),
            out_s: per_s(prev.pages_out, cur.pages_out),
        }
    }
}

/// iostat -x figures of one device over one interval. Serde names are iostat's column
/// names with `/` and `-` as `_`; a figure a document does not have reads as 0 (a device
/// row of a schema-1 run stored only r/s, w/s, MB/s and %util).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskRates {
    pub r_s: f64,
    pub w_s: f64,
    #[serde(rename = "rMB_s")]
    pub r_mb_s: f64,
    #[serde(rename = "wMB_s")]
    pub w_mb_s: f64,
    /// Reads merged into others per second before reaching the device (iostat's rrqm/s).
    pub rrqm_s: f64,
    pub wrqm_s: f64,
    /// Merged reads in percent of all reads asked for (iostat's %rrqm: merged ÷ (merged +
    /// issued) × 100; 0 with neither).
    pub rrqm_pct: f64,
    pub wrqm_pct: f64,
    /// Mean read size, KiB.
    pub rareq_sz: f64,
    /// Mean write size, KiB.
    pub wareq_sz: f64,
    pub aqu_sz: f64,
    /// Mean read latency including queueing, ms.
    pub r_await: f64,
    pub w_await: f64,
    /// Percent of the interval with I/O in flight, capped at 100.
    pub util: f64,
    /// Discards per second, when both snapshots have the 4.18+ columns.
    pub d_s: Option<f64>,
    /// Flushes per second, when both snapshots have the 5.5+ columns.
    pub f_s: Option<f64>,
}

impl DiskRates {
    /// The figures of sysstat's iostat -x (`compute_ext_disk_stats()` in common.c and
    /// `write_ext_stat()` in iostat.c) between `prev` and `cur`, `secs` apart:
    ///
    /// - r/s = Δreads / Δt; rMB/s = Δsectors_read × 512 / 2^20 / Δt
    /// - rrqm/s = Δreads_merged / Δt; %rrqm = Δreads_merged / (Δreads_merged + Δreads) × 100
    /// - rareq-sz = Δsectors_read × 512 / 1024 / Δreads (0 with no reads)
    /// - r_await = Δtime_reading / Δreads (0 with no reads)
    /// - aqu-sz = Δweighted_time_in_progress / Δt_ms
    /// - %util = Δtime_in_progress / Δt_ms × 100, capped at 100
    ///
    /// With `secs` ≤ 0 every rate is 0.
    pub fn between(prev: &DiskCounters, cur: &DiskCounters, secs: f64) -> DiskRates {
        let d = |p: u64, c: u64| counter_delta(p, c) as f64;
        let per_s = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
        let ratio = |n: f64, ios: f64| if ios > 0.0 { n / ios } else { 0.0 };
        let opt = |p: Option<u64>, c: Option<u64>| Some(per_s(d(p?, c?)));
        let (reads, writes) = (d(prev.reads, cur.reads), d(prev.writes, cur.writes));
        let rsect = d(prev.sectors_read, cur.sectors_read);
        let wsect = d(prev.sectors_written, cur.sectors_written);
        let rmerged = d(prev.reads_merged, cur.reads_merged);
        let wmerged = d(prev.writes_merged, cur.writes_merged);
        let ms = secs * 1000.0;
        DiskRates {
            r_s: per_s(reads),
            w_s: per_s(writes),
            r_mb_s: per_s(rsect * 512.0 / 1_048_576.0),
            w_mb_s: per_s(wsect * 512.0 / 1_048_576.0),
            rrqm_s: per_s(rmerged),
            wrqm_s: per_s(wmerged),
            rrqm_pct: ratio(rmerged * 100.0, rmerged + reads),
            wrqm_pct: ratio(wmerged * 100.0, wmerged + writes),
            rareq_sz: ratio(rsect / 2.0, reads),
            wareq_sz: ratio(wsect / 2.0, writes),
            aqu_sz: ratio(
                d(
                    prev.weighted_time_in_progress_ms,
                    cur.weighted_time_in_progress_ms,
                ),
                ms,
            ),
            r_await: ratio(d(prev.time_reading_ms, cur.time_reading_ms), reads),
            w_await: ratio(d(prev.time_writing_ms, cur.time_writing_ms), writes),
            util: (ratio(d(prev.time_in_progress_ms, cur.time_in_progress_ms), ms) * 100.0)
                .min(100.0),
            d_s: opt(prev.discards, cur.discards),
            f_s: opt(prev.flushes, cur.flushes),
        }
    }
}

/// CPU time over an interval in percent of all CPUs' time, grouped as iostat's avg-cpu
/// (`write_cpu_stat()` in iostat.c) but with nice counted as user and irq and softirq as
/// system.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuRates {
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub steal: f64,
    pub idle: f64,
}

impl CpuRates {
    /// Percent of the time not idle (user, system, iowait and steal), 0–100.
    pub fn busy(&self) -> f64 {
        (100.0 - self.idle).clamp(0.0, 100.0)
    }

    /// Percent of the time the CPU ran something or was taken by the hypervisor (user,
    /// system, steal), 0–100: [`CpuRates::busy`] less iowait, which is idle time with I/O
    /// outstanding (threads asleep on the storage leave their CPU iowait, not working).
    pub fn working(&self) -> f64 {
        (100.0 - self.idle - self.iowait).clamp(0.0, 100.0)
    }

    /// Percent of the total Δticks (user + nice + system + idle + iowait + irq + softirq +
    /// steal, as sysstat's `get_per_cpu_interval()`); all 0 when no tick elapsed.
    pub fn between(prev: &CpuCounters, cur: &CpuCounters) -> CpuRates {
        let d = |p: u64, c: u64| counter_delta(p, c) as f64;
        let user = d(prev.user, cur.user) + d(prev.nice, cur.nice);
        let system =
            d(prev.system, cur.system) + d(prev.irq, cur.irq) + d(prev.softirq, cur.softirq);
        let iowait = d(prev.iowait, cur.iowait);
        let steal = d(prev.steal, cur.steal);
        let idle = d(prev.idle, cur.idle);
        let total = user + system + iowait + steal + idle;
        if total <= 0.0 {
            return CpuRates::default();
        }
        let pct = |v: f64| v / total * 100.0;
        CpuRates {
            user: pct(user),
            system: pct(system),
            iowait: pct(iowait),
            steal: pct(steal),
            idle: pct(idle),
        }
    }
}
