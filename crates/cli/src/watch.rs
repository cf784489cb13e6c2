//! `iogauge watch`: every layer on one screen, refreshed every interval — the devices in
//! iostat -x terms and the CPU from our own /proc samples, and the workload of a run in
//! progress from its live file next to the results store. `--plain` (or a stdout that is not
//! a terminal) prints one timestamped line per interval instead.

pub mod args;
mod follow;
pub mod options;
mod plain;
mod tui;

use crate::usage::UsageError;
use anyhow::Context;
use iogauge_model::system::Snapshot;
use iogauge_probe::Sampler;
use iogauge_session::stop_flag;
use options::WatchOptions;
use std::process::ExitCode;
use std::time::Instant;

pub fn watch(w: WatchOptions) -> anyhow::Result<ExitCode> {
    let sampler = Sampler::new(w.devices.clone());
    let t0 = Instant::now();
    let first = sampler.sample(0).context("sampling /proc")?;
    if let Some(want) = &w.devices {
        check_devices(want, &first)?;
    }
    let stop = stop_flag()?;
    if w.plain {
        plain::run(&w, &sampler, t0, first, &stop)
    } else {
        tui::run(&w, &sampler, t0, first, &stop)
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
