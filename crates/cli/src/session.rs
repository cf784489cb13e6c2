//! The terminal around a measured session (`iogauge_session` does the session itself):
//! checking the engine before anything is created, preparing targets with a pre-fill
//! progress bar, the live line of the last interval, and the exit code of how it ended.

use crate::exit_code::INTERRUPTED;
use crate::target::options::{Targets, SCRATCH_DIR};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iogauge_engine::Target;
use iogauge_model::run::IntervalReport;
use iogauge_model::spec::EngineKind;
use iogauge_model::Document;
use iogauge_session::{Ending, Finished, Session, SessionError, Stored};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

/// Checks the engine works here before anything is created.
pub fn check_engine(engine: EngineKind) -> anyhow::Result<()> {
    if engine == EngineKind::IoUring {
        iogauge_engine::probe_uring()?;
    }
    Ok(())
}

/// Opens every target, creating and pre-filling missing files (a bar on a terminal).
pub fn prepare_targets(targets: &Targets, stop: &AtomicBool) -> anyhow::Result<Vec<Target>> {
    let Targets {
        specs,
        access,
        scratch,
    } = targets;
    if *scratch {
        std::fs::create_dir_all(SCRATCH_DIR)
            .with_context(|| format!("creating ./{SCRATCH_DIR}"))?;
    }
    // Hidden until a pre-fill actually starts, and only ever drawn on a terminal.
    let bar = ProgressBar::hidden();
    bar.set_style(
        ProgressStyle::with_template(
            "pre-filling {msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .expect("static template"),
    );
    let tty = std::io::stderr().is_terminal();
    let mut out = Vec::with_capacity(specs.len());
    for spec in specs {
        bar.set_message(spec.path.display().to_string());
        bar.set_position(0);
        let mut progress = |done: u64, total: u64| {
            if tty && bar.is_hidden() {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_length(total);
            bar.set_position(done);
        };
        out.push(iogauge_engine::prepare(spec, *access, &mut progress, stop)?);
    }
    bar.finish_and_clear();
    Ok(out)
}

/// The line under a running job on a terminal: elapsed time, IOPS and p99 of the last
/// interval. Silent when stderr is not a terminal.
pub struct LiveLine(bool);

impl LiveLine {
    pub fn stderr() -> LiveLine {
        LiveLine(std::io::stderr().is_terminal())
    }

    pub fn show(&self, elapsed_s: f64, iv: &IntervalReport) {
        if self.0 {
            let line = iogauge_report::progress_line(elapsed_s, iv);
            eprint!("\r{line:<100}");
            let _ = std::io::stderr().flush();
        }
    }

    pub fn clear(&self) {
        if self.0 {
            eprint!("\r{:<100}\r", "");
        }
    }
}

/// The exit of a finished session: where the result is stored (on stderr, never a panic for
/// a closed one), then 0, 130 for Ctrl-C, or the error that ended it early (exit 1).
pub fn exit_of(stored: Result<Stored, SessionError>, ending: Ending) -> anyhow::Result<ExitCode> {
    let Stored { id, path } = stored?;
    let _ = writeln!(
        std::io::stderr(),
        "stored as run {id} in {}",
        path.display()
    );
    match ending {
        Ending::Complete => Ok(ExitCode::SUCCESS),
        Ending::Interrupted => Ok(ExitCode::from(INTERRUPTED)),
        Ending::Failed(e) => {
            anyhow::bail!("the run ended early: {e} (what ran is stored as run {id})")
        }
    }
}

/// A run's document stored, then printed as text or JSON, then the exit of how it ended
/// (see [`conclude_with`]).
pub fn conclude(session: Session, finished: Finished, json: bool) -> anyhow::Result<ExitCode> {
    use iogauge_report::{Exporter, Json, Text};
    let exporter: &dyn Exporter = if json { &Json } else { &Text };
    conclude_with(session, finished, |d| exporter.render(d))
}

/// The end of a measuring command. On the process that stores: the document stored, then
/// printed (`render`), then the exit of how it ended. On another rank of a job over ranks,
/// whose part went to rank 0: its own failure said as its own (rank 0 stores it with the
/// job), else success.
pub fn conclude_with(
    session: Session,
    finished: Finished,
    render: impl FnOnce(&Document) -> String,
) -> anyhow::Result<ExitCode> {
    match finished {
        Finished::Member {
            rank,
            error,
            warnings,
        } => {
            for w in warnings {
                eprintln!("warning: rank {rank}: {w}");
            }
            match error {
                Some(e) => Err(anyhow::anyhow!("rank {rank}: {e}")),
                None => Ok(ExitCode::SUCCESS),
            }
        }
        Finished::Lead {
            doc,
            histograms,
            ending,
        } => {
            let stored = session.finish(*doc, &histograms, render, &mut std::io::stdout());
            exit_of(stored, ending)
        }
    }
}

/// Writes `text` to stdout and flushes it: the error of either is the error.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}
