//! What every measuring command does around its work: Ctrl-C handling, preflight of the
//! engine, preparing targets with a pre-fill progress bar, timestamps.

use crate::options::SCRATCH_DIR;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iogauge_engine::{Access, Target, TargetSpec};
use iogauge_model::spec::EngineKind;
use std::io::{IsTerminal, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A flag raised by SIGINT or SIGTERM: workers stop, partial results are kept.
pub fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("installing the Ctrl-C handler")?;
    }
    Ok(stop)
}

/// Checks the engine works here before anything is created.
pub fn check_engine(engine: EngineKind) -> anyhow::Result<()> {
    if engine == EngineKind::IoUring {
        iogauge_engine::probe_uring()?;
    }
    Ok(())
}

/// Opens every target, creating and pre-filling missing files (a bar on a terminal).
pub fn prepare_targets(
    specs: &[TargetSpec],
    access: Access,
    scratch: bool,
    stop: &AtomicBool,
) -> anyhow::Result<Vec<Target>> {
    if scratch {
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
        out.push(iogauge_engine::prepare(spec, access, &mut progress, stop)?);
    }
    bar.finish_and_clear();
    Ok(out)
}

/// Now, RFC 3339 UTC to the millisecond.
pub fn now() -> String {
    let t = jiff::Timestamp::now();
    t.round(jiff::Unit::Millisecond).unwrap_or(t).to_string()
}

/// Set by `iogauge campaign` on the runs it starts: which case and repetition a run is, so
/// the run and its place in the campaign are stored in one transaction. Not for users.
pub const CAMPAIGN_ENV: &str = "IOGAUGE_CAMPAIGN_RUN";

/// The campaign tag of this run, if `iogauge campaign` started it.
pub fn campaign_tag() -> anyhow::Result<Option<iogauge_store::CampaignTag>> {
    match std::env::var(CAMPAIGN_ENV) {
        Err(_) => Ok(None),
        Ok(v) => serde_json::from_str(&v).map(Some).with_context(|| {
            format!("${CAMPAIGN_ENV} is set by `iogauge campaign` only; unset it")
        }),
    }
}

/// How a measured run ended, for its exit code.
pub enum Ending {
    Complete,
    /// Stopped by Ctrl-C or SIGTERM: what ran is kept, exit 130.
    Interrupted,
    /// Ended early by a failure; the part that ran is kept, then this error is reported.
    Failed(String),
}

/// The one ending of every command that produces a result (`run`, `calibrate`, `db run`,
/// and so every campaign child): store the run, then print `text`, then say where it is
/// stored. Stored first, so a stdout that fails (a full disk, a reader that went away, a
/// campaign runner killed mid-run) never costs the result; a store that fails still prints
/// it, so neither failure loses it.
pub fn store_then_print(
    store: &mut iogauge_store::Store,
    run: &iogauge_store::NewRun,
    text: &str,
    ending: Ending,
) -> anyhow::Result<std::process::ExitCode> {
    use crate::exit::INTERRUPTED;
    use std::process::ExitCode;
    let id = match store.insert(run) {
        Ok(id) => id,
        Err(e) => {
            let shown = if print_stdout(text).is_ok() {
                "the result is printed on stdout but not stored"
            } else {
                "the result could be neither stored nor printed"
            };
            return Err(anyhow::Error::new(e).context(shown));
        }
    };
    let path = store.path().display();
    if let Err(e) = print_stdout(text) {
        anyhow::bail!(
            "writing the result to stdout: {e}; the run is stored as run {id} in {path}: `iogauge show {id}`"
        );
    }
    // Never a panic for a closed stderr: the result is stored and printed already.
    let _ = writeln!(std::io::stderr(), "stored as run {id} in {path}");
    match ending {
        Ending::Complete => Ok(ExitCode::SUCCESS),
        Ending::Interrupted => Ok(ExitCode::from(INTERRUPTED)),
        Ending::Failed(e) => {
            anyhow::bail!("the run ended early: {e} (what ran is stored as run {id})")
        }
    }
}

/// Writes `text` to stdout and flushes it: the error of either is the error.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}
