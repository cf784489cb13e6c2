//! `iogauge watch`: every layer on one screen, refreshed every interval — the devices in
//! iostat -x terms and the CPU from our own /proc samples, and the workload of a run in
//! progress from its live file next to the results store (`iogauge_watch` sees them,
//! `iogauge_report` draws them). `--plain` (or a stdout that is not a terminal) prints one
//! timestamped line per interval instead.

pub mod args;
pub mod options;
mod plain;
mod tui;

use crate::usage::UsageError;
use anyhow::Context;
use iogauge_model::system::Snapshot;
use iogauge_probe::Sampler;
use iogauge_session::stop_flag;
use iogauge_watch::Watcher;
use options::WatchOptions;
use std::process::ExitCode;

pub fn watch(w: WatchOptions) -> anyhow::Result<ExitCode> {
    let WatchOptions {
        scope,
        plain,
        count,
    } = w;
    let mut watcher = Watcher::start(scope).context("sampling /proc")?;
    if let Some(want) = &watcher.scope().devices {
        check_devices(want, watcher.latest())?;
    }
    let stop = stop_flag()?;
    if plain {
        plain::run(&mut watcher, count, &stop)
    } else {
        tui::run(&mut watcher, count, &stop)
    }
}

/// Every name given to --devices must be a device in /proc/diskstats.
fn check_devices(want: &[String], first: &Snapshot) -> anyhow::Result<()> {
    let all = Sampler::new(None).sample(0).context("sampling /proc")?;
    for name in want {
        if !first.disks.iter().any(|d| &d.name == name) {
            let present: Vec<&str> = all.disks.iter().map(|d| d.name.as_str()).collect();
            return Err(UsageError(format!(
                "--devices: no block device '{name}' in /proc/diskstats; whole disks with I/O here: {}",
                present.join(", ")
            ))
            .into());
        }
    }
    Ok(())
}
