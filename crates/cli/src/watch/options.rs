//! `watch`'s flags checked into plain data: what to watch (the refresh interval, the
//! devices, the CPU view and the store whose runs in progress to follow) and how to show it.

use super::args::{CpuView, WatchArgs};
use crate::usage::{check_interval, UsageError};
use iogauge_store::Store;
use iogauge_watch::Scope;
use std::io::IsTerminal;

/// A validated `watch`.
pub struct WatchOptions {
    pub scope: Scope,
    /// One line per interval instead of the full-screen view.
    pub plain: bool,
    /// Intervals to show before stopping (`None`: until q or Ctrl-C).
    pub count: Option<u64>,
}

impl WatchOptions {
    pub fn from_args(a: WatchArgs) -> Result<WatchOptions, UsageError> {
        Ok(WatchOptions {
            scope: Scope {
                every: check_interval(a.interval)?,
                all: a.devices == ["all"],
                devices: (!a.devices.is_empty() && a.devices != ["all"]).then_some(a.devices),
                each_cpu: a.cpu == CpuView::Each,
                store: Store::locate(a.store.store.as_deref()),
            },
            plain: a.plain || !std::io::stdout().is_terminal(),
            count: a.count,
        })
    }
}
