//! `iogauge replay`: a trace's recorded reads and writes issued on --target, stored as a run
//! (with the replay's pacing beside it), then printed.

pub mod args;
pub mod options;

use crate::session::{check_engine, conclude, prepare_targets, LiveLine};
use iogauge_model::Kind;
use iogauge_session::measure::replay::replay as replay_trace;
use iogauge_session::Session;
use options::ReplayOptions;
use std::process::ExitCode;

pub fn replay(opts: ReplayOptions) -> anyhow::Result<ExitCode> {
    let mut session = Session::join(opts.store.as_deref(), opts.label.clone(), crate::exit::say)?;
    session.set_tracing(opts.trace_layers);
    if session.team().ranked() {
        return Err(crate::usage::UsageError(
            "replay issues one trace from one process; run it without mpirun".into(),
        )
        .into());
    }
    check_engine(opts.spec.engine)?;
    let targets = prepare_targets(&opts.targets, session.stop())?;
    let r = opts.spec.replay.as_ref().expect("a replay's job");
    let what = format!(
        "replay of {} ({} reads and writes, {}, {})",
        r.source, r.requests, r.pace, r.map
    );
    session.go_live(Kind::Run, what, None);
    let line = LiveLine::stderr();
    let show = &mut |at, rep: &_| line.show(at, rep);
    let finished = replay_trace(&mut session, &opts.spec, &targets, &opts.trace, show)?;
    line.clear();
    conclude(session, finished, opts.json)
}
