//! `run --log-bs SIZE`: the log-writer stream beside a job (what a database's log writer
//! does: one write, then the `fdatasync` a commit waits on, again and again), and where it
//! writes. A leaf: it names nothing of its parent, which re-exports it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `--log-size`'s default: the span the log wraps around in (PostgreSQL's WAL segment is
/// 16 MiB; a few of them).
pub const DEFAULT_LOG_SIZE: u64 = 64 << 20;

/// The log's region is aligned to this in its target (and `--log-size` a multiple of it),
/// so its O_DIRECT writes are aligned on any device a file system lives on.
pub const LOG_ALIGN: u64 = 4096;

/// `--log-bs`, `--log-target`, `--log-size`, `--log-rate`: one thread writing `bs` bytes
/// sequentially through a region of `size` bytes, wrapping at its end, each write followed
/// by `fdatasync`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogStream {
    /// Bytes of each log write.
    pub bs: u64,
    /// Its own file or device (as PostgreSQL's `--waldir` on a device of its own); `None`:
    /// the last `size` bytes of the job's first target, which the job's span then excludes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<PathBuf>,
    /// Bytes the log wraps around in.
    pub size: u64,
    /// Cap on log writes per second; `None`: back to back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
}

impl LogStream {
    /// The log lives at the end of the job's first target (no `--log-target`).
    pub fn in_first_target(&self) -> bool {
        self.target.is_none()
    }

    /// Bytes of the job's target number `index` (of `size` bytes) left to the data job: all
    /// of it, except the first target's last `size` bytes when the log lives there.
    pub fn data_size(&self, index: usize, size: u64) -> u64 {
        if index == 0 && self.in_first_target() {
            size.saturating_sub(self.size)
        } else {
            size
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_takes_the_end_of_the_first_target_only() {
        let mut l = LogStream {
            bs: 8192,
            target: None,
            size: DEFAULT_LOG_SIZE,
            rate: None,
        };
        assert_eq!(l.data_size(0, 1 << 30), (1 << 30) - DEFAULT_LOG_SIZE);
        assert_eq!(l.data_size(1, 1 << 30), 1 << 30);
        assert_eq!(
            l.data_size(0, 1 << 20),
            0,
            "too small: nothing left, no wrap"
        );
        l.target = Some("/wal/log".into());
        assert_eq!(l.data_size(0, 1 << 30), 1 << 30);
    }

    #[test]
    fn absent_options_are_left_out_of_the_json() {
        let l = LogStream {
            bs: 8192,
            target: None,
            size: 1 << 20,
            rate: None,
        };
        let v = serde_json::to_value(&l).unwrap();
        assert_eq!(v, serde_json::json!({"bs": 8192, "size": 1048576}));
        assert_eq!(serde_json::from_value::<LogStream>(v).unwrap(), l);
    }
}
