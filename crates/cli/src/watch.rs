//! `iogauge watch`: every layer on one screen, refreshed every interval — the devices in
//! iostat -x terms and the CPU from our own /proc samples, and the workload of a run in
//! progress from its live file next to the results store. `--plain` (or a stdout that is not
//! a terminal) prints one timestamped line per interval instead.

mod tui;

use crate::args::WatchArgs;
use crate::options::UsageError;
use anyhow::Context;
use iogauge_model::derive::{derive, Derived};
use iogauge_model::live::DbNow;
use iogauge_model::live::{LiveHeader, LiveInterval};
use iogauge_model::system::Snapshot;
use iogauge_pg::watch::DbWatch;
use iogauge_probe::Sampler;
use iogauge_session::stop_flag;
use iogauge_store::live::{running, LiveTail};
use iogauge_store::Store;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What one refresh shows.
pub struct Frame<'a> {
    pub timestamp: String,
    pub every: Duration,
    pub system: &'a Derived,
    pub devices: &'a [String],
    pub live: Option<&'a Follow>,
}

/// The run being followed and the intervals seen of it so far; for a database run, its
/// server as of the last look.
pub struct Follow {
    tail: LiveTail,
    pub history: Vec<LiveInterval>,
    db: Option<DbWatch>,
    pub db_now: Option<DbNow>,
    pub db_error: Option<String>,
}

impl Follow {
    pub fn header(&self) -> &LiveHeader {
        &self.tail.header
    }
}

/// Validated `watch` options.
struct Watch {
    every: Duration,
    devices: Option<Vec<String>>,
    plain: bool,
    count: Option<u64>,
    store: Option<PathBuf>,
}

pub fn watch(a: WatchArgs) -> anyhow::Result<ExitCode> {
    if a.interval < Duration::from_millis(100) || a.interval > Duration::from_secs(3600) {
        return Err(UsageError("--interval must be between 100ms and 1h".into()).into());
    }
    let w = Watch {
        every: a.interval,
        devices: (!a.devices.is_empty()).then_some(a.devices),
        plain: a.plain || !std::io::stdout().is_terminal(),
        count: a.count,
        store: Store::locate(a.store.store.as_deref()),
    };
    let sampler = Sampler::new(w.devices.clone());
    let t0 = Instant::now();
    let first = sampler.sample(0).context("sampling /proc")?;
    if let Some(want) = &w.devices {
        check_devices(want, &first)?;
    }
    let stop = stop_flag()?;
    if w.plain {
        run_plain(&w, &sampler, t0, first, &stop)
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

/// Sleeps until `at`, waking early when `stop` is raised; true if stopped.
fn sleep_until(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        let now = Instant::now();
        if now >= at {
            return false;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(50)));
    }
}

/// The devices to show: those asked for, else every device in the latest sample.
fn device_names(w: &Watch, s: &Derived) -> Vec<String> {
    match &w.devices {
        Some(d) => d.clone(),
        None => s.disks.keys().cloned().collect(),
    }
}

/// Keeps following the newest running job; picks up a new one when it ends.
fn refresh_follow(w: &Watch, follow: &mut Option<Follow>) {
    if follow.as_ref().is_some_and(|f| !f.tail.alive()) {
        *follow = None;
    }
    if follow.is_none() {
        let Some(store) = &w.store else { return };
        if let Some(path) = running(store).first() {
            if let Ok(tail) = LiveTail::open(path) {
                let (db, db_error) = match &tail.header.db {
                    Some(addr) => match DbWatch::connect(addr) {
                        Ok(d) => (Some(d), None),
                        Err(e) => (None, Some(e.to_string())),
                    },
                    None => (None, None),
                };
                *follow = Some(Follow {
                    tail,
                    history: Vec::new(),
                    db,
                    db_now: None,
                    db_error,
                });
            }
        }
    }
    if let Some(f) = follow {
        if let Some(d) = &mut f.db {
            match d.look() {
                Ok(now) => f.db_now = Some(now),
                Err(e) => {
                    // The run is ending (server stopping) or gone: stop asking.
                    f.db_error = Some(e.to_string());
                    f.db = None;
                    f.db_now = None;
                }
            }
        }
        match f.tail.poll() {
            Ok(new) => f.history.extend(new),
            Err(_) => *follow = None,
        }
    }
}

/// One refresh: the system since the previous sample, and the followed run brought up to date.
fn look(
    w: &Watch,
    sampler: &Sampler,
    t0: Instant,
    prev: &mut Snapshot,
    follow: &mut Option<Follow>,
) -> anyhow::Result<Derived> {
    let cur = sampler
        .sample(t0.elapsed().as_nanos() as u64)
        .context("sampling /proc")?;
    let d = derive(prev, &cur);
    *prev = cur;
    refresh_follow(w, follow);
    Ok(d)
}

fn timestamp() -> String {
    let t = jiff::Timestamp::now();
    t.round(jiff::Unit::Second).unwrap_or(t).to_string()
}

/// One line per interval, on stdout.
fn run_plain(
    w: &Watch,
    sampler: &Sampler,
    t0: Instant,
    mut prev: Snapshot,
    stop: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    let mut follow: Option<Follow> = None;
    let mut out = std::io::stdout().lock();
    for k in 1u64.. {
        if sleep_until(t0 + w.every * k as u32, stop) {
            break;
        }
        let d = look(w, sampler, t0, &mut prev, &mut follow)?;
        let live = follow.as_ref().map(|f| (f.header(), f.history.last()));
        let db = follow.as_ref().and_then(|f| f.db_now.as_ref());
        let line = iogauge_report::watch_line(&timestamp(), &d, &device_names(w, &d), live, db);
        writeln!(out, "{line}")
            .and_then(|_| out.flush())
            .context("writing to stdout")?;
        if w.count.is_some_and(|c| k >= c) {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}
