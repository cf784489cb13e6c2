//! `watch --plain` (or a stdout that is not a terminal): one timestamped line per interval
//! on stdout, for logs, like collectl -oT; with `--cpu each`, one more line per CPU.

use anyhow::Context;
use iogauge_watch::Watcher;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

/// One line per interval, on stdout.
pub(super) fn run(
    watcher: &mut Watcher,
    count: Option<u64>,
    stop: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    for k in 1u64.. {
        if watcher.sleep_until(k, stop) {
            break;
        }
        let seen = watcher.look().context("sampling /proc")?;
        let follow = watcher.following();
        let live = follow.map(|f| (f.header(), f.history.last()));
        let db = follow.and_then(|f| f.db_now.as_ref());
        let at = &seen.timestamp;
        let mut text = iogauge_report::watch_line(at, &seen.system, &seen.devices, live, db);
        text.push('\n');
        for line in iogauge_report::watch_cpu_lines(at, seen.cpus.as_deref().unwrap_or(&[])) {
            text.push_str(&line);
            text.push('\n');
        }
        out.write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .context("writing to stdout")?;
        if count.is_some_and(|c| k >= c) {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}
