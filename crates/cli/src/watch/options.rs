//! `watch`'s flags checked into plain data: the refresh interval, the devices, the output
//! and the store whose runs in progress to follow.

use super::args::{CpuView, WatchArgs};
use crate::usage::{check_interval, UsageError};
use iogauge_store::Store;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// A validated `watch`.
pub struct WatchOptions {
    pub every: Duration,
    /// Devices by kernel name; `None`: the whole disks (and stacked devices) of /sys/block,
    /// shown as `shown` says.
    pub devices: Option<Vec<String>>,
    /// With `devices` `None`: every one that has done I/O since boot (`--devices all`), or
    /// only those that do I/O while watch runs (the default).
    pub all: bool,
    /// One line per interval instead of the full-screen view.
    pub plain: bool,
    /// The machine's CPU figures only, or each CPU's too.
    pub cpu: CpuView,
    /// Intervals to show before stopping (`None`: until q or Ctrl-C).
    pub count: Option<u64>,
    /// The results store (when there is one) beside which runs in progress are found.
    pub store: Option<PathBuf>,
}

impl WatchOptions {
    pub fn from_args(a: WatchArgs) -> Result<WatchOptions, UsageError> {
        Ok(WatchOptions {
            every: check_interval(a.interval)?,
            all: a.devices == ["all"],
            devices: (!a.devices.is_empty() && a.devices != ["all"]).then_some(a.devices),
            plain: a.plain || !std::io::stdout().is_terminal(),
            cpu: a.cpu,
            count: a.count,
            store: Store::locate(a.store.store.as_deref()),
        })
    }
}
