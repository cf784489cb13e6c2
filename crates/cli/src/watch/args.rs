//! `iogauge watch`'s flags as clap sees them; `options` checks them.

use crate::store_args::StoreArgs;
use clap::{Args, ValueEnum};
use iogauge_model::units::parse_duration;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Refresh interval (100ms to 1h).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Devices to show by kernel name, e.g. sda,nvme0n1, or `all` (every whole disk and
    /// stacked device that has done I/O since boot). Default: those that do I/O while watch
    /// runs (an idle loop device stays out).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub devices: Vec<String>,
    /// One timestamped line per interval instead of the full-screen view (for logs, like
    /// collectl -oT); implied when stdout is not a terminal.
    #[arg(long)]
    pub plain: bool,
    /// CPU figures: `total` (the machine as a whole) or `each` (one row per CPU, so a
    /// single saturated core shows; collectl's per-CPU view).
    #[arg(long, value_enum, value_name = "VIEW", default_value_t = CpuView::Total)]
    pub cpu: CpuView,
    /// Stop after this many intervals (default: until q or Ctrl-C).
    #[arg(long, value_parser = crate::values::whole(1u64, u64::MAX))]
    pub count: Option<u64>,
    /// Results store whose runs in progress to follow.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `--cpu`: the whole machine's CPU figures, or each CPU's too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum CpuView {
    #[default]
    Total,
    Each,
}
