//! `iogauge run`: one synthetic job from flags to a printed (or JSON) result.

use crate::exit::INTERRUPTED;
use crate::options::{RunOptions, SCRATCH_DIR};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iogauge_engine::{EngineKind, Target};
use iogauge_report::{progress_line, Exporter, Json, Text};
use iogauge_store::{IntervalReport, RunReport};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn run(opts: RunOptions) -> anyhow::Result<ExitCode> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("installing the Ctrl-C handler")?;
    }
    if opts.spec.engine == EngineKind::IoUring {
        iogauge_engine::probe_uring()?;
    }
    if opts.scratch {
        std::fs::create_dir_all(SCRATCH_DIR)
            .with_context(|| format!("creating ./{SCRATCH_DIR}"))?;
    }
    let targets = prepare_targets(&opts, &stop)?;
    let live = std::io::stderr().is_terminal();
    let mut on_interval = |iv: &iogauge_stats::Interval| {
        if live {
            let line = progress_line(iv.end.as_secs_f64(), &IntervalReport::of(iv));
            eprint!("\r{line:<100}");
            let _ = std::io::stderr().flush();
        }
    };
    let outcome = iogauge_engine::run(&opts.spec, &targets, &stop, &mut on_interval)?;
    if live {
        eprint!("\r{:<100}\r", "");
    }
    let infos = targets.into_iter().map(|t| t.info).collect();
    let mut report = RunReport::from_series(
        opts.spec,
        infos,
        outcome.started,
        &outcome.intervals,
        outcome.interrupted,
    );
    if outcome.interrupted {
        report
            .warnings
            .push("interrupted: the summary covers only the part that ran".into());
    }
    let text = if opts.json {
        Json.render(&report)
    } else {
        Text.render(&report)
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .context("writing the result to stdout")?;
    Ok(if outcome.interrupted {
        ExitCode::from(INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

fn prepare_targets(opts: &RunOptions, stop: &AtomicBool) -> anyhow::Result<Vec<Target>> {
    // Hidden until a pre-fill actually starts, and only ever drawn on a terminal.
    let bar = ProgressBar::hidden();
    bar.set_style(
        ProgressStyle::with_template(
            "pre-filling {msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .expect("static template"),
    );
    let tty = std::io::stderr().is_terminal();
    let mut out = Vec::with_capacity(opts.targets.len());
    for spec in &opts.targets {
        bar.set_message(spec.path.display().to_string());
        bar.set_position(0);
        let mut progress = |done: u64, total: u64| {
            if tty && bar.is_hidden() {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_length(total);
            bar.set_position(done);
        };
        out.push(iogauge_engine::prepare(
            spec,
            opts.access,
            &mut progress,
            stop,
        )?);
    }
    bar.finish_and_clear();
    Ok(out)
}
