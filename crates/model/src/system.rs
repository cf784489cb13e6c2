//! The OS's raw counters at one instant, as a run stores them on its interval grid:
//! /proc/diskstats per device, the /proc/stat CPU lines (the aggregate and one per CPU),
//! page cache state from /proc/meminfo, pages swapped from /proc/vmstat, /proc/pressure/io and
//! /proc/loadavg, /proc/pressure/cpu and the job's own threads' CPU figures
//! (`crate::sched`). Raw counters are kept so any view can be derived
//! again later (`crate::derive`); reading and parsing the live files is `iogauge_probe`'s.

use crate::layers::{LayerCounters, Origin, RingCounters};
use crate::sched::{CpuPressure, JobCpu};
use serde::{Deserialize, Serialize};

/// Raw counters at one instant, as stored with a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Monotonic time of the sample, ns, from the caller's clock (the same clock as the
    /// workload's intervals, so the grids line up).
    pub at_ns: u64,
    pub disks: Vec<DiskCounters>,
    pub cpu: CpuCounters,
    pub mem: MemInfo,
    /// `None` when /proc/pressure/io does not exist (kernel < 4.20 or `psi=0`).
    pub psi: Option<IoPressure>,
    /// The `cpuN` lines of /proc/stat, one per online CPU in the kernel's order; empty in
    /// documents stored before iogauge kept them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<CpuLine>,
    /// /proc/loadavg; `None` in documents stored before iogauge read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadAvg>,
    /// The block layer's per-device stage counters, when the tracer ran (`crate::layers`):
    /// cumulative, but each histogram's buckets are only this snapshot's interval's
    /// (`crate::layers::StageHist`); empty otherwise and in documents stored before it
    /// existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<LayerCounters>,
    /// This process's io_uring I/Os (`crate::layers::RingCounters`), kept as `layers` are, when the
    /// tracer ran on a kernel with io_uring's tracepoints; `None` otherwise and in documents
    /// stored before iogauge kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring: Option<RingCounters>,
    /// Other processes' bios on the traced disks since the tracer's previous reading, the
    /// busiest first (the tracer's attribution, `crate::layers::Origin`); empty without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Origin>,
    /// Pages swapped in and out since boot; `None` where /proc/vmstat could not be read and in
    /// documents stored before iogauge read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap: Option<SwapCounters>,
    /// The job's own threads' CPU time and run-queue wait (`crate::sched`), when the
    /// sampler ran inside the job's process; `None` otherwise (a database's server, `watch`)
    /// and in documents stored before iogauge read them: not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobCpu>,
    /// /proc/pressure/cpu; `None` where it does not exist and in documents stored before
    /// iogauge read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_cpu: Option<CpuPressure>,
}

/// /proc/vmstat's `pswpin` and `pswpout`: pages read from and written to swap since boot
/// (what `sar -W` shows per second). A disk holding swap does that I/O beside the workload's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapCounters {
    pub pages_in: u64,
    pub pages_out: u64,
}

/// Raw counters of one device, one /proc/diskstats line. Times are milliseconds, sizes are
/// 512-byte sectors whatever the device's logical block size (iostats.rst).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCounters {
    pub major: u32,
    pub minor: u32,
    /// Kernel name: `vda`, `sda1`, `nvme0n1`, `loop3`.
    pub name: String,
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub time_reading_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub time_writing_ms: u64,
    /// I/Os in flight at the moment of reading (a gauge, not a counter).
    pub in_progress: u64,
    /// Time the device had I/O in flight (`io_ticks`, the base of %util).
    pub time_in_progress_ms: u64,
    /// Sum of every I/O's time in flight (`time_in_queue`, the base of aqu-sz).
    pub weighted_time_in_progress_ms: u64,
    /// Kernel 4.18+.
    pub discards: Option<u64>,
    pub discards_merged: Option<u64>,
    pub sectors_discarded: Option<u64>,
    pub time_discarding_ms: Option<u64>,
    /// Kernel 5.5+.
    pub flushes: Option<u64>,
    pub time_flushing_ms: Option<u64>,
}

impl DiskCounters {
    /// True for a device that has never completed an I/O; iostat leaves these out unless
    /// asked for `ALL`, and so does the sampler when no devices are named.
    pub fn never_used(&self) -> bool {
        self.reads == 0
            && self.writes == 0
            && self.discards.unwrap_or(0) == 0
            && self.flushes.unwrap_or(0) == 0
    }
}

/// The aggregate `cpu` line of /proc/stat, in USER_HZ ticks (`show_stat()` in
/// fs/proc/stat.c). Guest time is already part of `user` and `nice`, so it is not kept.
/// Columns a kernel does not print (iowait before 2.6, steal before 2.6.11) read as 0.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuCounters {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// One CPU's line of /proc/stat (`cpuN`): its number and its counters. Stored as one array
/// `[N, user, nice, system, idle, iowait, irq, softirq, steal]` rather than an object, so a
/// sample of a many-CPU machine stays small (about 60 bytes a CPU instead of 130).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "[u64; 9]", into = "[u64; 9]")]
pub struct CpuLine {
    /// The N of `cpuN`; offline CPUs have no line, so it need not be the index.
    pub cpu: u32,
    pub counters: CpuCounters,
}

impl From<CpuLine> for [u64; 9] {
    fn from(l: CpuLine) -> [u64; 9] {
        let c = l.counters;
        [
            u64::from(l.cpu),
            c.user,
            c.nice,
            c.system,
            c.idle,
            c.iowait,
            c.irq,
            c.softirq,
            c.steal,
        ]
    }
}

impl TryFrom<[u64; 9]> for CpuLine {
    type Error = String;

    fn try_from(a: [u64; 9]) -> Result<CpuLine, String> {
        let [cpu, user, nice, system, idle, iowait, irq, softirq, steal] = a;
        Ok(CpuLine {
            cpu: u32::try_from(cpu).map_err(|_| format!("CPU number {cpu} out of range"))?,
            counters: CpuCounters {
                user,
                nice,
                system,
                idle,
                iowait,
                irq,
                softirq,
                steal,
            },
        })
    }
}

/// /proc/loadavg (`loadavg_proc_show()` in fs/proc/loadavg.c): the run queue's exponentially
/// damped averages over 1, 5 and 15 minutes (runnable plus uninterruptible tasks, so tasks
/// waiting on I/O count), and at the moment of reading the runnable and the existing
/// scheduling entities (threads).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadAvg {
    pub one: f64,
    pub five: f64,
    pub fifteen: f64,
    pub runnable: u32,
    pub tasks: u32,
}

/// Page cache state from /proc/meminfo, bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemInfo {
    /// `Cached`: the page cache less swap cache.
    pub cached: u64,
    pub buffers: u64,
    /// `Dirty`: waiting to be written back.
    pub dirty: u64,
    /// `Writeback`: being written back now.
    pub writeback: u64,
}

/// /proc/pressure/io (kernel 4.20+ with PSI enabled): share of time some or all non-idle
/// tasks were stalled on I/O. `avg10` is the kernel's 10 s running average in percent,
/// `total` the cumulative stall time in µs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoPressure {
    pub some_avg10: f64,
    pub some_total_us: u64,
    pub full_avg10: f64,
    pub full_total_us: u64,
}
