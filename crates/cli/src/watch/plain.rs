//! `watch --plain` (or a stdout that is not a terminal): one timestamped line per interval
//! on stdout, for logs, like collectl -oT; with `--cpu each`, one more line per CPU.

use super::follow::{look, timestamp, Follow, Shown};
use super::options::WatchOptions;
use anyhow::Context;
use iogauge_model::system::Snapshot;
use iogauge_probe::Sampler;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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

/// One line per interval, on stdout.
pub(super) fn run(
    w: &WatchOptions,
    sampler: &Sampler,
    t0: Instant,
    mut prev: Snapshot,
    stop: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    let mut follow: Option<Follow> = None;
    let mut shown = Shown::default();
    let mut out = std::io::stdout().lock();
    for k in 1u64.. {
        if sleep_until(t0 + w.every * k as u32, stop) {
            break;
        }
        let seen = look(w, sampler, t0, &mut prev, &mut follow)?;
        let d = &seen.system;
        let live = follow.as_ref().map(|f| (f.header(), f.history.last()));
        let db = follow.as_ref().and_then(|f| f.db_now.as_ref());
        let at = timestamp();
        let mut text = iogauge_report::watch_line(&at, d, &shown.names(w, d), live, db);
        text.push('\n');
        for line in iogauge_report::watch_cpu_lines(&at, seen.cpus.as_deref().unwrap_or(&[])) {
            text.push_str(&line);
            text.push('\n');
        }
        out.write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .context("writing to stdout")?;
        if w.count.is_some_and(|c| k >= c) {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}
