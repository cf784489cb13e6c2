//! `iogauge run`: one synthetic job from flags to a stored, then printed (or JSON), result —
//! on this process, or over the ranks of an MPI launcher (the session shares the job).

pub mod args;
pub mod options;

use crate::session::{check_engine, conclude, prepare_targets, LiveLine};
use iogauge_model::Kind;
use iogauge_report::job_line;
use iogauge_session::{measure, Session};
use options::RunOptions;
use std::process::ExitCode;

pub fn run(mut opts: RunOptions) -> anyhow::Result<ExitCode> {
    let mut session = Session::join(opts.store.as_deref(), opts.label.clone(), crate::exit::say)?;
    session.set_tracing(opts.trace);
    let team = session.team();
    let slice = measure::run::place(
        team,
        &mut opts.targets.specs,
        &mut opts.spec,
        opts.shared_offsets,
    )?;
    team.agreed(check_engine(opts.spec.engine))?;
    let targets = team.in_turn(|| prepare_targets(&opts.targets, session.stop()))?;
    let what = format!("{}{}", job_line(&opts.spec), team.suffix());
    session.go_live(Kind::Run, what, None);
    let line = LiveLine::stderr();
    let show = &mut |at, rep: &_| line.show(at, rep);
    let finished = measure::run::run(&mut session, &opts.spec, &targets, slice, show)?;
    line.clear();
    conclude(session, finished, opts.json)
}
