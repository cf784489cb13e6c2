//! `iogauge run`: one synthetic job from flags to a stored, then printed (or JSON), result.

use crate::options::RunOptions;
use crate::session::{check_engine, now, prepare_targets, stop_flag, store_then_print, Ending};
use iogauge_model::live::{LiveHeader, LiveInterval};
use iogauge_model::run::{IntervalReport, RunReport, SteadyWaitReport};
use iogauge_model::Document;
use iogauge_report::{progress_line, Exporter, Json, Text};
use iogauge_store::live::LiveWriter;
use iogauge_store::{NewRun, Store};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

pub fn run(opts: RunOptions) -> anyhow::Result<ExitCode> {
    let stop = stop_flag()?;
    let tag = crate::session::campaign_tag()?;
    check_engine(opts.spec.engine)?;
    let mut store = Store::open_resolved(opts.store.as_deref())?;
    let targets = prepare_targets(&opts.targets, opts.access, opts.scratch, &stop)?;
    let live = std::io::stderr().is_terminal();
    // What `iogauge watch` follows; a run that cannot publish it still runs.
    let mut feed = LiveWriter::create(
        store.path(),
        &LiveHeader {
            pid: std::process::id(),
            kind: "run".into(),
            what: iogauge_report::job_line(&opts.spec),
            started_at: now(),
            db: None,
        },
    );
    let mut feed_error = None;
    let mut on_interval = |iv: &iogauge_stats::Interval| {
        let rep = IntervalReport::of(iv);
        if let Ok(f) = &mut feed {
            let line = LiveInterval {
                elapsed_s: iv.end.as_secs_f64(),
                interval: rep.clone(),
            };
            if let Err(e) = f.push(&line) {
                feed_error.get_or_insert(format!("live view for `iogauge watch` stopped: {e}"));
            }
        }
        if live {
            let line = progress_line(iv.end.as_secs_f64(), &rep);
            eprint!("\r{line:<100}");
            let _ = std::io::stderr().flush();
        }
    };
    let outcome = iogauge_engine::run(&opts.spec, &targets, &stop, &mut on_interval)?;
    if live {
        eprint!("\r{:<100}\r", "");
    }
    let ended = now();
    let disks = iogauge_engine::disks_of(&targets);
    let infos = targets.into_iter().map(|t| t.info).collect();
    let mut report = RunReport::from_series(
        opts.spec,
        infos,
        outcome.started,
        &outcome.intervals,
        outcome.interrupted,
    )
    .with_samples(&outcome.intervals, outcome.samples, &disks);
    report.warnings.extend(outcome.io_path.warnings());
    report.options.io_path = Some(outcome.io_path);
    if let Some(e) = outcome.sample_error {
        report.warnings.push(e);
    }
    match feed {
        Err(e) => report
            .warnings
            .push(format!("no live view for `iogauge watch`: {e}")),
        Ok(f) => drop(f),
    }
    report.warnings.extend(feed_error);
    if let Some(w) = &outcome.steady_wait {
        let wait = SteadyWaitReport::of(w, report.options.interval);
        if !wait.reached && !outcome.interrupted {
            report.warnings.push(format!(
                "steady state was not reached within --steady-timeout {:.0} s; the measured window started anyway",
                wait.measured_from_s
            ));
        }
        report.steady_wait = Some(wait);
    }
    if outcome.interrupted {
        report
            .warnings
            .push("interrupted: the summary covers only the part that ran".into());
    }
    let (total, _) = iogauge_stats::measured_totals(&outcome.intervals);
    let mut lat = total.read.lat.clone();
    lat += &total.write.lat;
    let mut histograms = vec![
        ("read".to_string(), total.read.lat.encode()?),
        ("write".to_string(), total.write.lat.encode()?),
    ];
    // Per interval too, so `show --interval` can re-render exact percentiles later.
    histograms.extend(iogauge_model::regrid::interval_histograms(
        &outcome.intervals,
    )?);
    report.meta.ended_at = Some(ended);
    let text = if opts.json {
        Json.render(&report)
    } else {
        Text.render(&report)
    };
    let document = Document::from(report);
    let run = NewRun {
        document: &document,
        histograms: &histograms,
        campaign: tag.as_ref(),
    };
    let ending = if outcome.interrupted {
        Ending::Interrupted
    } else {
        Ending::Complete
    };
    store_then_print(&mut store, &run, &text, ending)
}
