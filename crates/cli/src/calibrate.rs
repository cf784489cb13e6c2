//! `iogauge calibrate`: preflight, the three steps, figures and verdicts, stored, then printed.

pub mod args;
pub mod options;

use crate::session::{check_engine, conclude_with, prepare_targets, print_stdout};
use anyhow::Context;
use iogauge_model::calib::{CalibrationReport, Point};
use iogauge_model::Document;
use iogauge_report::{calibration_body, calibration_head, point_line};
use iogauge_session::{measure, Session};
use options::CalibrateOptions;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

pub fn calibrate(mut opts: CalibrateOptions) -> anyhow::Result<ExitCode> {
    // The store opens first: a bad --store fails before minutes of measuring.
    let mut session = Session::join(opts.store.as_deref(), opts.label.clone(), crate::exit::say)?;
    session.set_tracing(opts.trace);
    let team = session.team();
    let job = measure::calibrate::place(team, &mut opts.targets.specs, &mut opts.spec)?;
    team.agreed(check_engine(opts.spec.setup.engine))?;
    let targets = team.in_turn(|| prepare_targets(&opts.targets, session.stop()))?;
    let (ctx, note) = team.agreed(measure::calibrate::context(&opts.spec, &targets))?;
    if let Some(n) = note {
        eprintln!("note: {n}");
    }
    let (mut head, mut point) = shown(opts.json);
    let show = measure::calibrate::Show {
        head: &mut head,
        point: &mut point,
    };
    let finished = measure::calibrate::calibrate(&mut session, &targets, ctx, job, show)?;
    // Only the process that stores writes the matrix files.
    let matrix = match finished.document() {
        Some(Document::Calibration(c)) => Some(c.matrix.clone()),
        _ => None,
    };
    let code = conclude_with(session, finished, |d| match d {
        Document::Calibration(c) if !opts.json => calibration_body(c),
        d => d.to_json(),
    })?;
    if let (Some(dir), Some(matrix)) = (&opts.csv, matrix) {
        write_csv(dir, &matrix)?;
        eprintln!("matrix written to {}", dir.display());
    }
    Ok(code)
}

/// What the calibration shows as it goes: its head on stdout before any I/O (the user sees a
/// degraded array before waiting; nothing is measured yet, so a stdout that cannot take it
/// loses nothing), unless `json`; each point on stderr when it is a terminal.
fn shown(
    json: bool,
) -> (
    impl FnMut(&CalibrationReport) -> anyhow::Result<()>,
    impl FnMut(&Point),
) {
    let live = std::io::stderr().is_terminal();
    let head = move |head: &CalibrationReport| match json {
        true => Ok(()),
        false => print_stdout(&calibration_head(head))
            .context("writing the result to stdout (nothing was measured)"),
    };
    let point = move |p: &Point| {
        if live {
            eprintln!("  {}", point_line(p));
        }
    };
    (head, point)
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
