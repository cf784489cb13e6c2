//! `iogauge db run`: sessions on a real database (`iogauge_db::Prepared`), the devices and
//! CPU sampled beside them by the session (`iogauge_session::measure::db`), on this process
//! or over the ranks of an MPI launcher; stored, then printed (or JSON).

use super::options::DbRunOptions;
use super::setup::with_ui;
use crate::session::conclude_with;
use iogauge_db::{Prepared, RunPlace};
use iogauge_model::{Document, Kind};
use iogauge_session::{measure, Session};
use std::process::ExitCode;

pub fn run(mut o: DbRunOptions) -> anyhow::Result<ExitCode> {
    let mut session = Session::join(o.store.as_deref(), o.label.clone(), crate::exit::say)?;
    session.set_tracing(o.trace);
    session.set_capture(o.capture);
    let team = session.team();
    if o.capture && team.ranked() {
        return Err(team.said_by_lead(
            crate::usage::UsageError(
                "--capture records one server's requests from one process; run it without mpirun, or capture each host with `iogauge capture --data-dir`".into(),
            )
            .into(),
        ));
    }
    let own_servers = measure::db::place(team, &mut o.place)?;
    let mut p = team.agreed(prepare(&o))?;
    let shared = measure::db::share(team, &mut p, own_servers)?;
    let what = format!("{}{}", p.what(), team.suffix());
    session.go_live(Kind::DbRun, what, p.server.socket());
    let finished = measure::db::run(&mut session, p, shared)?;
    conclude_with(session, finished, |d| match d {
        Document::DbRun(r) if !o.json => iogauge_report::db_run_text(r),
        d => d.to_json(),
    })
}

/// The server of `o` opened (a missing private server set up first, with the loading bar)
/// and the workload put on its data set.
pub fn prepare(o: &DbRunOptions) -> anyhow::Result<Prepared> {
    let place = RunPlace {
        engine: o.engine,
        maria_bin: o.maria_bin.as_deref(),
        place: &o.place,
        overrides: &o.overrides,
        cache_limit: o.cache_limit,
        pg_bin: o.pg_bin.as_ref(),
    };
    let stop = iogauge_session::stop_flag()?;
    let mut p = with_ui(&stop, false, |ui| {
        Prepared::new(&place, &o.workload, o.grid, ui)
    })?;
    p.num_disks = o.disks;
    Ok(p)
}
