//! `iogauge calibrate`: preflight, the three steps, figures and verdicts, stored, then printed.

use crate::options::CalibrateOptions;
use crate::session::{
    check_engine, now, prepare_targets, print_stdout, stop_flag, store_then_print, Ending,
};
use anyhow::Context;
use iogauge_engine::calibrate::{calibrate as run_steps, verdicts, EngineProber};
use iogauge_model::calib::CalibrationReport;
use iogauge_model::Document;
use iogauge_report::{calibration_body, calibration_head, point_line};
use iogauge_store::{NewRun, Store};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

pub fn calibrate(opts: CalibrateOptions) -> anyhow::Result<ExitCode> {
    let stop = stop_flag()?;
    let tag = crate::session::campaign_tag()?;
    check_engine(opts.spec.engine)?;
    // Open the store first: a bad --store fails before minutes of measuring.
    let mut store = Store::open_resolved(opts.store.as_deref())?;
    let targets = prepare_targets(&opts.targets, opts.access, opts.scratch, &stop)?;
    let space = iogauge_engine::calibrate::tested_bytes(&opts.spec, &targets)?;
    let span: u64 = space.iter().sum();
    if let Some(cache) = opts.spec.cache_size.filter(|c| *c > span) {
        // The engine caps each flush to the span (reading more re-reads the same blocks).
        eprintln!(
            "note: --cache-size {} is larger than the tested span ({}): the flush before each point reads the span instead; a cache that holds the whole span serves the points from memory, so test a span larger than the cache",
            iogauge_model::units::fmt_size(cache),
            iogauge_model::units::fmt_size(span)
        );
    }
    let facts: Vec<_> = targets
        .iter()
        .zip(&space)
        .map(|(t, b)| (t.info.path.clone(), *b))
        .collect();
    let preflight = iogauge_probe::preflight(&facts);
    let start_time = now();
    let infos: Vec<_> = targets.iter().map(|t| t.info.clone()).collect();

    // The head goes out before any I/O: the user sees a degraded array before waiting.
    let io_uring = match iogauge_engine::probe_uring() {
        Ok(()) => "supported (READ_FIXED, WRITE_FIXED)".to_string(),
        Err(e) => format!("unavailable: {e}"),
    };
    let mut empty = CalibrationReport::new(
        opts.spec.clone(),
        preflight.clone(),
        infos.clone(),
        &Default::default(),
        vec![],
        start_time.clone(),
        String::new(),
    );
    empty.io_uring = io_uring.clone();
    if !opts.json {
        // Nothing is measured yet: a stdout that cannot take the head stops here, losing nothing.
        print_stdout(&calibration_head(&empty))
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
        stop: &stop,
        on_point: &mut on_point,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        runs: 0,
    };
    let outcome = run_steps(&mut prober, &opts.spec)?;
    let rotational = preflight
        .targets
        .iter()
        .filter_map(|t| t.rotational)
        .reduce(|a, b| a || b);
    let says = verdicts(&outcome, &opts.spec, rotational);
    let mut report = CalibrationReport::new(
        opts.spec.clone(),
        preflight,
        infos,
        &outcome,
        says,
        start_time,
        now(),
    );
    report.io_uring = io_uring;
    record_io_path(&mut report, &outcome);
    if let Some(l) = &opts.spec.layout {
        for d in &l.degraded {
            // CALIBRATE_IO once "measured" one disk of a silently degraded mirror: say it.
            report.warnings.push(format!(
                "DEGRADED: {d} is treated as failed under --layout {}: reads go to its partners and its writes are dropped, so this calibrates a degraded array",
                l.spec
            ));
        }
    }

    let histograms: Vec<(String, Vec<u8>)> = outcome
        .measured
        .iter()
        .enumerate()
        .map(|(i, m)| {
            Ok((
                format!("{i}:{:?}:{}", m.point.step, m.point.outstanding),
                m.hist.encode()?,
            ))
        })
        .collect::<Result<_, iogauge_stats::HistError>>()?;
    let interrupted = report.meta.interrupted;
    let csv = opts.csv.as_ref().map(|dir| (dir, report.clone()));
    let document = Document::from(report);
    let text = match (&document, opts.json) {
        (_, true) => document.to_json(),
        (Document::Calibration(r), false) => calibration_body(r),
        _ => unreachable!("a calibration"),
    };
    let run = NewRun {
        document: &document,
        histograms: &histograms,
        campaign: tag.as_ref(),
    };
    let ending = if interrupted {
        Ending::Interrupted
    } else {
        Ending::Complete
    };
    let code = store_then_print(&mut store, &run, &text, ending)?;
    if let Some((dir, report)) = &csv {
        write_csv(dir, report)?;
        eprintln!("matrix written to {}", dir.display());
    }
    Ok(code)
}

/// The points' memory and I/O path: the first point's in `options.io_path`, its warnings,
/// and a warning for any point whose buffers were on other memory (results not comparable).
fn record_io_path(report: &mut CalibrationReport, outcome: &iogauge_model::calib::Outcome) {
    let mut paths = outcome.measured.iter().filter_map(|m| m.io_path.as_ref());
    let Some(first) = paths.next() else {
        return;
    };
    report.warnings.extend(first.warnings());
    for p in paths {
        if p.memory.mem != first.memory.mem || p.fixed_bufs != first.fixed_bufs {
            report.warnings.push(format!(
                "not every point ran on the same memory: one ran on {}; compare its figures with care",
                p.line()
            ));
            break;
        }
    }
    report.options.io_path = Some(first.clone());
}

/// Writes ORION's matrix files into `dir` (created if missing), never replacing a file.
fn write_csv(dir: &std::path::Path, report: &CalibrationReport) -> anyhow::Result<()> {
    if !dir.is_dir() {
        std::fs::create_dir(dir)
            .with_context(|| format!("--csv {}: creating the directory", dir.display()))?;
    }
    for (name, text) in iogauge_report::matrix_csv(&report.matrix) {
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
