//! `iogauge db setup`, `reset` and `drop`, for every engine: the data set on a private server
//! (made here, on the storage under test) or on an existing server, loaded, restored and
//! removed. The engine's own steps are `iogauge_db::engine`'s; here are the flags, the
//! terminal (the preflight, the loading bar, the summary) and Ctrl-C.

use super::args::{pg_bin, SetupArgs, WhereArgs};
use crate::exit_code::INTERRUPTED;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iogauge_db::{engine, DbEngine, Setup, SetupRequest, SetupUi};
use iogauge_model::preflight::Preflight;
use iogauge_session::stop_flag;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A bar on a terminal while the schemas load.
fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        None,
        if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    if let Ok(style) =
        ProgressStyle::with_template("loading {bar:30} {pos}/{len} blocks ({per_sec}, {eta} left)")
    {
        bar.set_style(style);
    }
    bar
}

fn print_preflight(p: &Preflight) {
    print!("preflight:\n{}", iogauge_report::preflight_text(p));
}

fn note(line: &str) {
    eprintln!("{line}");
}

/// Runs `f` with a [`SetupUi`] on this terminal: the preflight on stdout (`preflight`: or
/// not at all), notes on stderr, a loading bar that is cleared when `f` returns.
pub fn with_ui<T>(stop: &Arc<AtomicBool>, preflight: bool, f: impl FnOnce(&SetupUi<'_>) -> T) -> T {
    let bar = progress_bar();
    let progress = |done: u64, all: u64| {
        bar.set_length(all);
        bar.set_position(done);
    };
    let ui = SetupUi {
        preflight: if preflight { &print_preflight } else { &|_| {} },
        note: &note,
        progress: &progress,
        stop,
    };
    let out = f(&ui);
    bar.finish_and_clear();
    out
}

/// The engine a `db` command works with, its `--mysql-bin` and the other engine's flags
/// refused by it.
fn chosen(w: &WhereArgs) -> anyhow::Result<&'static dyn DbEngine> {
    Ok(engine(w.engine()?))
}

pub fn setup(s: SetupArgs) -> anyhow::Result<ExitCode> {
    s.validate()?;
    let e = chosen(&s.place)?;
    let direct_io = s.direct_io;
    let s = s.with_direct_io();
    let overrides = s.overrides()?;
    let pg_bin = pg_bin(s.pg_bin.as_deref())?;
    let spec = s.spec();
    let r = SetupRequest {
        spec: &spec,
        overrides: &overrides,
        log_dir: s.wal_dir.as_deref(),
        targets: &s.target,
        pg_bin: pg_bin.as_ref(),
        mysql_bin: s.place.mysql_bin.as_deref(),
        direct_io,
    };
    let place = s.place.place(e.kind());
    let stop = stop_flag()?;
    let done = with_ui(&stop, true, |ui| iogauge_db::setup(e, &place, &r, ui))?;
    let ram = iogauge_probe::ram_bytes()?;
    let text = iogauge_report::db_setup_text(&done.report, &done.settings, &done.location, ram);
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// The data set of `w` back as loaded: a file-level copy where the engine keeps one, else
/// reloaded (same seed, same rows).
pub fn reset(w: WhereArgs) -> anyhow::Result<ExitCode> {
    let e = chosen(&w)?;
    let spec = engine::default_spec();
    let r = SetupRequest::bare(&spec, None, w.mysql_bin.as_deref());
    e.refuse(&r)?;
    let stop = stop_flag()?;
    let said = with_ui(&stop, false, |ui| {
        e.reset(&w.place(e.kind()), Setup { req: r, ui })
    })?;
    if stop.load(Ordering::Relaxed) {
        // Ctrl-C after the copy: the swap is not interrupted half-way.
        eprintln!(
            "error: db reset interrupted by Ctrl-C after its copy; it finished first: {said}"
        );
        return Ok(ExitCode::from(INTERRUPTED));
    }
    eprintln!("{said}");
    Ok(ExitCode::SUCCESS)
}

pub fn drop_all(w: WhereArgs) -> anyhow::Result<ExitCode> {
    let e = chosen(&w)?;
    let spec = engine::default_spec();
    let r = SetupRequest::bare(&spec, None, w.mysql_bin.as_deref());
    e.refuse(&r)?;
    // Registered so Ctrl-C cannot kill the process half-way through the removal.
    let stop = stop_flag()?;
    let what = e.drop_all(&w.place(e.kind()), &r)?;
    if stop.load(Ordering::Relaxed) {
        eprintln!(
            "error: db drop interrupted by Ctrl-C; it finished first (half removed, a server \
             would be neither usable nor gone): {what}"
        );
        return Ok(ExitCode::from(INTERRUPTED));
    }
    eprintln!("{what}");
    Ok(ExitCode::SUCCESS)
}
