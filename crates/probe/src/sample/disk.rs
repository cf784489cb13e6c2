//! One block device's /proc/diskstats counters and the iostat -x figures derived from two of
//! them.
//!
//! Columns are those of `diskstats_show()` in block/genhd.c, documented in
//! Documentation/admin-guide/iostats.rst: 14 fields up to 4.17, 18 from 4.18 (discards),
//! 20 from 5.5 (flushes). The time columns are printed as `%u`, so they wrap at 2^32 ms
//! (about 49.7 days) even on 64-bit kernels; see [`counter_delta`].

use super::{counter_delta, SampleError};
use serde::{Deserialize, Serialize};

const FILE: &str = "/proc/diskstats";

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
    /// Parses one /proc/diskstats line.
    ///
    /// The mapping of columns to fields is procfs-core's `DiskStat::from_line`, but that
    /// function reads the optional columns with `.ok()`: a truncated or garbled 4.18+ line
    /// would silently lose its discard counters. So the line is checked here first: 14, 18
    /// or at least 20 columns (later columns, if a future kernel adds any, are ignored),
    /// every column after the name an unsigned integer.
    pub fn from_line(line: &str) -> Result<DiskCounters, SampleError> {
        let err = |reason: String| SampleError::Parse {
            file: FILE,
            line: line.to_string(),
            reason,
        };
        let cols: Vec<&str> = line.split_whitespace().collect();
        match cols.len() {
            14 | 18 => {}
            n if n >= 20 => {}
            n => {
                return Err(err(format!(
                    "{n} columns; expected 14 (kernel < 4.18), 18 (4.18+) or 20 (5.5+)"
                )))
            }
        }
        for (i, c) in cols.iter().enumerate().filter(|&(i, _)| i != 2) {
            if c.parse::<u64>().is_err() {
                return Err(err(format!("column {} ({c:?}) is not a counter", i + 1)));
            }
        }
        let d = procfs::DiskStat::from_line(line).map_err(|e| err(format!("procfs: {e}")))?;
        let num = |v: i32| u32::try_from(v).map_err(|_| err(format!("device number {v}")));
        Ok(DiskCounters {
            major: num(d.major)?,
            minor: num(d.minor)?,
            name: d.name,
            reads: d.reads,
            reads_merged: d.merged,
            sectors_read: d.sectors_read,
            time_reading_ms: d.time_reading,
            writes: d.writes,
            writes_merged: d.writes_merged,
            sectors_written: d.sectors_written,
            time_writing_ms: d.time_writing,
            in_progress: d.in_progress,
            time_in_progress_ms: d.time_in_progress,
            weighted_time_in_progress_ms: d.weighted_time_in_progress,
            discards: d.discards,
            discards_merged: d.discards_merged,
            sectors_discarded: d.sectors_discarded,
            time_discarding_ms: d.time_discarding,
            flushes: d.flushes,
            time_flushing_ms: d.time_flushing,
        })
    }

    /// True for a device that has never completed an I/O; iostat leaves these out unless
    /// asked for `ALL`, and so does [`super::Sampler`] when no devices are named.
    pub fn never_used(&self) -> bool {
        self.reads == 0
            && self.writes == 0
            && self.discards.unwrap_or(0) == 0
            && self.flushes.unwrap_or(0) == 0
    }
}

/// Parses all of /proc/diskstats; any bad line fails the whole text.
pub fn parse_diskstats(text: &str) -> Result<Vec<DiskCounters>, SampleError> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(DiskCounters::from_line)
        .collect()
}

/// iostat -x figures of one device over one interval. Serde names are iostat's column
/// names with `/` and `-` as `_`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskRates {
    pub r_s: f64,
    pub w_s: f64,
    #[serde(rename = "rMB_s")]
    pub r_mb_s: f64,
    #[serde(rename = "wMB_s")]
    pub w_mb_s: f64,
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
        let ms = secs * 1000.0;
        DiskRates {
            r_s: per_s(reads),
            w_s: per_s(writes),
            r_mb_s: per_s(rsect * 512.0 / 1_048_576.0),
            w_mb_s: per_s(wsect * 512.0 / 1_048_576.0),
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
