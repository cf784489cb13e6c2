//! `iogauge run`: one synthetic job from flags to a stored, then printed (or JSON), result.

pub mod args;
pub mod options;

use crate::session::{check_engine, finish_run, prepare_targets, LiveLine};
use iogauge_engine::document::run_document;
use iogauge_model::run::IntervalReport;
use iogauge_model::{Document, Kind};
use iogauge_report::job_line;
use iogauge_session::{Ending, Session};
use options::RunOptions;
use std::process::ExitCode;

pub fn run(opts: RunOptions) -> anyhow::Result<ExitCode> {
    let mut session = Session::begin(opts.store.as_deref())?;
    session.set_label(opts.label.clone());
    check_engine(opts.spec.engine)?;
    let targets = prepare_targets(&opts.targets, session.stop())?;
    session.go_live(Kind::Run, job_line(&opts.spec), None);
    let line = LiveLine::stderr();
    let stop = session.stop().clone();
    let outcome = iogauge_engine::run(&opts.spec, &targets, &stop, &mut |iv| {
        let (rep, at) = (IntervalReport::of(iv), iv.end.as_secs_f64());
        session.publish(&rep, at);
        line.show(at, &rep);
    })?;
    line.clear();
    let (report, histograms) = run_document(opts.spec, &targets, outcome)?;
    let doc = Document::from(report);
    let ending = Ending::of(&doc);
    finish_run(session, doc, &histograms, opts.json, ending)
}
