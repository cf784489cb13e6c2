//! `iogauge replay`: a job that issues recorded block requests (a capture, a blktrace or a fio
//! iolog) instead of generated ones, what it replayed and how.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The recorded requests a replay issued, and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// Where the requests came from: `trace N` in the store, or the file's path.
    pub source: String,
    /// The format they came in: `iogauge`, `blktrace` or `fio_iolog`.
    pub format: String,
    pub pace: Pace,
    /// How the recorded devices and offsets land on the targets.
    pub map: ReplayMap,
    /// The recorded reads and writes the replay issues.
    pub requests: u64,
    /// Recorded requests it does not issue: flushes and discards (the replay reads and
    /// writes only), and requests longer than the target.
    pub skipped: u64,
}

/// When each recorded request is issued.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Pace {
    /// Open loop: each request at its recorded time divided by `speed` (2: twice as fast),
    /// however many are in flight; latency counts from that time, so waiting for a free
    /// slot is part of it, and a request issued late is counted.
    Timed { speed: f64 },
    /// As fast as the target allows with at most `depth` requests in flight (the recorded
    /// concurrency unless told), in the recorded order.
    Fast { depth: u32 },
}

impl fmt::Display for Pace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pace::Timed { speed } if *speed == 1.0 => f.write_str("timed"),
            Pace::Timed { speed } => write!(f, "timed x{speed}"),
            Pace::Fast { depth } => write!(f, "as fast as possible, QD {depth}"),
        }
    }
}

/// How recorded offsets land on the targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayMap {
    /// Every recorded device onto the one target, each offset modulo the target's size.
    Modulo,
    /// The recorded devices onto the targets in order (device i on target i), each offset
    /// modulo its target's size.
    Devices,
}

impl fmt::Display for ReplayMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReplayMap::Modulo => "modulo",
            ReplayMap::Devices => "devices",
        })
    }
}
