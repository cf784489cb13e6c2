//! The full-screen view on the terminal (ratatui on crossterm): the terminal set up and
//! restored, the keys read between refreshes (`q`, Esc or Ctrl-C quits), each refresh drawn
//! by `iogauge_report::watch_screen`.

use anyhow::Context;
use iogauge_report::{watch_screen, LiveRun, WatchScreen};
use iogauge_watch::{Follow, Watcher};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub(super) fn run(
    watcher: &mut Watcher,
    count: Option<u64>,
    stop: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    let mut terminal = ratatui::try_init()
        .context("starting the full-screen view (use --plain on this terminal)")?;
    let result = event_loop(&mut terminal, watcher, count, stop);
    let restored = ratatui::try_restore().context("restoring the terminal");
    result.and_then(|code| restored.map(|_| code))
}

/// Waits for the next tick, handling keys; true when the user quits.
fn wait_tick(at: Instant, stop: &AtomicBool) -> anyhow::Result<bool> {
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let now = Instant::now();
        if now >= at {
            return Ok(false);
        }
        let left = (at - now).min(Duration::from_millis(100));
        if event::poll(left).context("reading the keyboard")? {
            if let Event::Key(k) = event::read().context("reading the keyboard")? {
                let ctrl_c =
                    k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                if k.kind == KeyEventKind::Press
                    && (ctrl_c || matches!(k.code, KeyCode::Char('q') | KeyCode::Esc))
                {
                    return Ok(true);
                }
            }
        }
    }
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    watcher: &mut Watcher,
    count: Option<u64>,
    stop: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    for k in 1u64.. {
        if wait_tick(watcher.due(k), stop)? {
            break;
        }
        let seen = watcher.look().context("sampling /proc")?;
        let screen = WatchScreen {
            timestamp: &seen.timestamp,
            every: watcher.scope().every,
            system: &seen.system,
            cpus: seen.cpus.as_deref(),
            devices: &seen.devices,
            live: watcher.following().map(live_run),
        };
        terminal
            .draw(|f| watch_screen(f, &screen))
            .context("drawing the view")?;
        if count.is_some_and(|c| k >= c) {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The followed run, as the view draws it.
fn live_run(f: &Follow) -> LiveRun<'_> {
    LiveRun {
        header: f.header(),
        history: &f.history,
        db_now: f.db_now.as_ref(),
        db_error: f.db_error.as_deref(),
    }
}
