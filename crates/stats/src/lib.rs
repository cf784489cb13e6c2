//! Pure statistics for iogauge: latency histograms that merge exactly, per-direction I/O
//! counters that add with `+=`, and the figures a summary shows (IOPS, MB/s, percentiles).
//!
//! Nothing here touches the OS or the clock; every input is a count or a duration, so every
//! function is tested on fixed tables.

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod compare;
mod counters;
pub mod echo;
mod fnv;
mod hist;
mod interval;
mod steady;
pub mod units;

pub use counters::{DirStats, Direction, PerDir};
pub use fnv::fnv1a;
pub use hist::{HistError, LatHist, LatSummary};
pub use interval::{absorb_series, measured_totals, merge_series, Interval, Phase, WireInterval};
pub use steady::{
    detect, window_stats, SteadyConfig, SteadyCriterion, SteadyDetector, SteadyReport, WindowStats,
};
pub use units::{BlockSize, Bytes, BytesPerSec, Iops, MiBps, Millis, Nanos, MIB};
