//! `iogauge run`: one synthetic job from flags to a stored, then printed (or JSON), result —
//! on this process, or over the ranks of an MPI launcher (the session shares the job).

pub mod args;
mod log;
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
    if opts.spec.log.is_some() && team.size() > 1 {
        // Each rank's log would need a target of its own and a merge of its own: not done.
        return Err(team.said_by_lead(
            crate::usage::UsageError(format!(
                "--log-bs runs one log writer in one process, not over {} MPI ranks; run it without mpirun (or -np 1), or drop --log-bs",
                team.size()
            ))
            .into(),
        ));
    }
    let slice = measure::run::place(
        team,
        &mut opts.targets.specs,
        &mut opts.spec,
        opts.shared_offsets,
    )?;
    team.agreed(check_engine(opts.spec.engine))?;
    let targets = team.in_turn(|| prepare_targets(&opts.targets, session.stop()))?;
    let log = (opts.log_target.as_ref())
        .map(|t| prepare_targets(t, session.stop()))
        .transpose()?;
    let what = format!("{}{}", job_line(&opts.spec), team.suffix());
    session.go_live(Kind::Run, what, None);
    let line = LiveLine::stderr();
    let show = &mut |at, rep: &_| line.show(at, rep);
    let log = log.as_ref().and_then(|l| l.first());
    let over = measure::run::Over {
        region: slice,
        keep_series: opts.keep_rank_series,
    };
    let finished = measure::run::run(&mut session, &opts.spec, &targets, log, over, show)?;
    line.clear();
    conclude(session, finished, opts.json)
}
