//! `iogauge calibrate`: preflight, the three steps, figures and verdicts, stored, then printed.

pub mod args;
pub mod options;

use crate::session::{check_engine, exit_of, prepare_targets, print_stdout};
use anyhow::Context;
use iogauge_engine::calibrate::{self, calibration_document, EngineProber};
use iogauge_model::units::fmt_size;
use iogauge_model::Document;
use iogauge_report::{calibration_body, calibration_head, point_line};
use iogauge_session::{Ending, Session};
use options::CalibrateOptions;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

pub fn calibrate(opts: CalibrateOptions) -> anyhow::Result<ExitCode> {
    // The store opens first: a bad --store fails before minutes of measuring.
    let mut session = Session::begin(opts.store.as_deref())?;
    session.set_label(opts.label.clone());
    check_engine(opts.spec.setup.engine)?;
    let targets = prepare_targets(&opts.targets, session.stop())?;
    let ctx = context(&opts, &targets)?;
    if !opts.json {
        // The head goes out before any I/O: the user sees a degraded array before waiting;
        // nothing is measured yet, so a stdout that cannot take it loses nothing.
        print_stdout(&calibration_head(&calibrate::head(&ctx)))
            .context("writing the result to stdout (nothing was measured)")?;
    }
    let live = std::io::stderr().is_terminal();
    let mut on_point = |p: &iogauge_model::calib::Point| {
        if live {
            eprintln!("  {}", point_line(p));
        }
    };
    let mut prober = EngineProber {
        targets: &targets,
        spec: &opts.spec,
        stop: session.stop(),
        on_point: &mut on_point,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        runs: 0,
    };
    let outcome = calibrate::calibrate(&mut prober, &opts.spec)?;
    let (report, histograms) = calibration_document(ctx, &outcome)?;
    let ending = Ending::of_meta(&report.meta);
    finish(session, report, &histograms, &opts, ending)
}

/// Stores the calibration, then prints its body (the head went out before the first point)
/// or its JSON, then writes the matrix files.
pub fn finish(
    session: Session,
    report: iogauge_model::calib::CalibrationReport,
    histograms: &iogauge_model::Histograms,
    opts: &CalibrateOptions,
    ending: Ending,
) -> anyhow::Result<ExitCode> {
    let matrix = report.matrix.clone();
    let json = opts.json;
    let stored = session.finish(
        Document::from(report),
        histograms,
        |d| match d {
            Document::Calibration(c) if !json => calibration_body(c),
            d => d.to_json(),
        },
        &mut std::io::stdout(),
    );
    let code = exit_of(stored, ending)?;
    if let Some(dir) = &opts.csv {
        write_csv(dir, &matrix)?;
        eprintln!("matrix written to {}", dir.display());
    }
    Ok(code)
}

/// What the calibration runs on: the spec, the preflight of the tested span, the targets.
pub fn context(
    opts: &CalibrateOptions,
    targets: &[iogauge_engine::Target],
) -> anyhow::Result<calibrate::Context> {
    let space = calibrate::tested_bytes(&opts.spec, targets)?;
    let span: u64 = space.iter().sum();
    if let Some(cache) = opts.spec.cache_size.filter(|c| *c > span) {
        // The engine caps each flush to the span (reading more re-reads the same blocks).
        eprintln!(
            "note: --cache-size {} is larger than the tested span ({}): the flush before each point reads the span instead; a cache that holds the whole span serves the points from memory, so test a span larger than the cache",
            fmt_size(cache),
            fmt_size(span)
        );
    }
    let facts: Vec<_> = targets
        .iter()
        .zip(&space)
        .map(|(t, b)| (t.info.path.clone(), *b))
        .collect();
    Ok(calibrate::Context {
        spec: opts.spec.clone(),
        preflight: iogauge_probe::preflight(&facts),
        targets: targets.iter().map(|t| t.info.clone()).collect(),
        io_uring: match iogauge_engine::probe_uring() {
            Ok(()) => "supported (READ_FIXED, WRITE_FIXED)".to_string(),
            Err(e) => format!("unavailable: {e}"),
        },
        started_at: iogauge_session::now(),
    })
}

/// Writes ORION's matrix files into `dir` (created if missing), never replacing a file.
fn write_csv(dir: &std::path::Path, matrix: &[iogauge_model::calib::Cell]) -> anyhow::Result<()> {
    if !dir.is_dir() {
        std::fs::create_dir(dir)
            .with_context(|| format!("--csv {}: creating the directory", dir.display()))?;
    }
    for (name, text) in iogauge_report::matrix_csv(matrix) {
        let path = dir.join(name);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("--csv: creating {}", path.display()))?;
        f.write_all(text.as_bytes())
            .with_context(|| format!("--csv: writing {}", path.display()))?;
    }
    Ok(())
}
