//! `iogauge db run`: sessions on a real PostgreSQL, with the devices and CPU sampled on the
//! same grid from the moment the sessions start; stored, then printed (or JSON). The steps
//! (`iogauge_pg::Prepared`, and [`measure`] for the device sampling around the sessions) are
//! separate so that a run over MPI ranks (`crate::mpi::db`) takes the same ones.

use super::options::DbRunOptions;
use super::setup::setup_first;
use crate::session::exit_of;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::DbReport;
use iogauge_model::system::Snapshot;
use iogauge_model::{Document, Histograms, Kind};
use iogauge_pg::{driver, PgError, Prepared, RunPlace};
use iogauge_probe::Sampler;
use iogauge_session::{sampled, Ending, Session};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub fn run(o: DbRunOptions) -> anyhow::Result<ExitCode> {
    let mut session = Session::begin(o.store.as_deref())?;
    session.set_label(o.label.clone());
    let mut p = prepare(&o)?;
    session.go_live(Kind::DbRun, p.what(), p.server.socket());
    let stop = session.stop().clone();
    let nothing = driver::Sync {
        ready: &mut || true,
        tick: &mut || {},
    };
    let (outcome, samples, sample_error) = measure(&p, stop, nothing);
    // The run ends with its sessions: the server's shutdown after them is not measured.
    let ended_at = iogauge_session::now();
    let mut outcome = outcome.map_err(|e| p.not_started(e))?;
    p.explain(&mut outcome);
    let (mut report, histograms) = p.document(&outcome, samples, sample_error)?;
    report.meta.ended_at = Some(ended_at);
    // Stopped before printing: its shutdown's warnings belong to the run.
    report
        .warnings
        .extend(p.stop_server(outcome.error.is_some()));
    finish(session, report, &histograms, o.json, ending(&outcome))
}

/// The server of `o` opened (a missing private cluster set up first, with the loading bar)
/// and the workload put on its data set.
pub fn prepare(o: &DbRunOptions) -> anyhow::Result<Prepared> {
    let place = RunPlace {
        place: &o.place,
        overrides: &o.overrides,
        cache_limit: o.cache_limit,
        pg_bin: o.pg_bin.as_ref(),
    };
    let setup = |dir: &std::path::Path| setup_first(dir, &o.pg_set, o.pg_bin.as_ref());
    Ok(Prepared::new(&place, &o.workload, o.grid, setup)?)
}

/// The sessions' run with the devices under the data set (`Prepared::devices`, from its
/// preflight) and the CPU sampled on its grid.
pub fn measure(
    p: &Prepared,
    stop: Arc<AtomicBool>,
    sync: driver::Sync<'_>,
) -> (Result<DbOutcome, PgError>, Vec<Snapshot>, Option<String>) {
    let devices = p.devices.clone();
    let sampler = Sampler::new((!devices.is_empty()).then_some(devices));
    let ends: Vec<Duration> = p.grid.slots().iter().map(|s| s.end).collect();
    sampled(&sampler, ends, |started| p.run(stop, started, sync))
}

/// How a run ended, from its outcome.
pub fn ending(outcome: &DbOutcome) -> Ending {
    match &outcome.error {
        Some(e) => Ending::Failed(e.to_string()),
        None if outcome.interrupted => Ending::Interrupted,
        None => Ending::Complete,
    }
}

/// Stores the document, then prints it (text or JSON).
pub fn finish(
    session: Session,
    report: DbReport,
    histograms: &Histograms,
    json: bool,
    ending: Ending,
) -> anyhow::Result<ExitCode> {
    let render = |d: &Document| match d {
        Document::DbRun(r) if !json => iogauge_report::db_run_text(r),
        d => d.to_json(),
    };
    let stored = session.finish(report.into(), histograms, render, &mut std::io::stdout());
    exit_of(stored, ending)
}
