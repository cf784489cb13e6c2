//! What a run's log-writer stream (`run --log-bs`) did over the measured window: the raw
//! counterpart of a database's WAL writes and syncs (commits wait on the sync). A leaf: it
//! names nothing of its parent, which re-exports it.

use iogauge_stats::{LatHist, LatSummary, Nanos, MIB};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The log writer's measured window: writes of `bs` bytes, each followed by `fdatasync`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LogSummary {
    /// Bytes of each write (`--log-bs`).
    pub bs: u64,
    /// Where it wrote: `--log-target` as given, or the job's first target.
    pub target: PathBuf,
    /// Writes (each with its `fdatasync`) completed in the measured window.
    pub writes: u64,
    /// Bytes those writes moved.
    pub bytes: u64,
    /// Seconds from the measured window's start to the end of its last counted write.
    pub elapsed_s: f64,
    pub writes_s: f64,
    /// MiB/s (2^20 bytes per second).
    pub mbps: f64,
    /// The write alone (`pwrite(2)`), µs.
    pub write_lat_us: LatSummary,
    /// The `fdatasync(2)` after it, µs: what a commit waits on beyond the write.
    pub sync_lat_us: LatSummary,
}

impl LogSummary {
    /// The figures of `writes` writes of `bs` bytes to `target` over `elapsed`, with the
    /// latency histograms of the writes and of the syncs.
    pub fn of(
        bs: u64,
        target: PathBuf,
        writes: u64,
        elapsed: Nanos,
        write: &LatHist,
        sync: &LatHist,
    ) -> Self {
        let secs = elapsed.as_secs_f64();
        let bytes = writes * bs;
        let per = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        LogSummary {
            bs,
            target,
            writes,
            bytes,
            elapsed_s: secs,
            writes_s: per(writes as f64),
            mbps: per(bytes as f64 / MIB),
            write_lat_us: write.summary(),
            sync_lat_us: sync.summary(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_over_the_log_window() {
        let (mut w, mut s) = (LatHist::new(), LatHist::new());
        for _ in 0..4 {
            w.record(100_000);
            s.record(300_000);
        }
        let l = LogSummary::of(8192, "/t".into(), 256, Nanos(2_000_000_000), &w, &s);
        assert_eq!((l.bytes, l.writes_s, l.mbps), (256 * 8192, 128.0, 1.0));
        assert!(
            (l.write_lat_us.mean - 100.0).abs() < 0.5,
            "{:?}",
            l.write_lat_us
        );
        assert!(
            (l.sync_lat_us.mean - 300.0).abs() < 0.5,
            "{:?}",
            l.sync_lat_us
        );
        let idle = LogSummary::of(8192, "/t".into(), 0, Nanos(0), &w, &s);
        assert_eq!((idle.writes_s, idle.mbps), (0.0, 0.0));
    }
}
