//! /proc/diskstats lines parsed into one block device's counters
//! (`iogauge_model::system::DiskCounters`).
//!
//! Columns are those of `diskstats_show()` in block/genhd.c, documented in
//! Documentation/admin-guide/iostats.rst: 14 fields up to 4.17, 18 from 4.18 (discards),
//! 20 from 5.5 (flushes). The time columns are printed as `%u`, so they wrap at 2^32 ms
//! (about 49.7 days) even on 64-bit kernels; see `iogauge_model::counter::counter_delta`.

use super::error::SampleError;
use iogauge_model::system::DiskCounters;

const FILE: &str = "/proc/diskstats";

/// Parses one /proc/diskstats line.
///
/// The mapping of columns to fields is procfs-core's `DiskStat::from_line`, but that
/// function reads the optional columns with `.ok()`: a truncated or garbled 4.18+ line
/// would silently lose its discard counters. So the line is checked here first: 14, 18
/// or at least 20 columns (later columns, if a future kernel adds any, are ignored),
/// every column after the name an unsigned integer.
pub fn parse_disk_line(line: &str) -> Result<DiskCounters, SampleError> {
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

/// Parses all of /proc/diskstats; any bad line fails the whole text.
pub fn parse_diskstats(text: &str) -> Result<Vec<DiskCounters>, SampleError> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse_disk_line)
        .collect()
}
