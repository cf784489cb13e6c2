//! `iogauge db run`: sessions on a real PostgreSQL, with the devices and CPU sampled on the
//! same grid from the moment the sessions start; stored, then printed (or JSON).

use super::options::DbRunOptions;
use super::preflight;
use super::setup::setup_first;
use crate::session::exit_of;
use iogauge_model::db::report::{DbContext, DbServer};
use iogauge_model::{Document, Kind};
use iogauge_pg::{data_set, db_document, driver, RunPlace, RunServer};
use iogauge_probe::Sampler;
use iogauge_session::{sampled, Ending, Session};
use std::process::ExitCode;
use std::time::Duration;

pub fn run(o: DbRunOptions) -> anyhow::Result<ExitCode> {
    let mut session = Session::begin(o.store.as_deref())?;
    let place = RunPlace {
        place: &o.place,
        overrides: &o.overrides,
        cache_limit: o.cache_limit,
        pg_bin: o.pg_bin.as_ref(),
    };
    let mut server =
        RunServer::prepare(&place, |dir| setup_first(dir, &o.pg_set, o.pg_bin.as_ref()))?;
    let (schemas, blocks) = server.data_set()?;
    let workload = o.workload(schemas, blocks);
    let settings = server.settings()?;
    let (data, ram_note) = data_set(
        schemas,
        blocks,
        &settings,
        iogauge_probe::ram_bytes()?,
        o.cache_limit.is_some(),
    );
    // Only a private cluster's storage is known: a server by DSN may be on another host.
    let targets = match &server.data_dir {
        Some(d) => preflight::targets(&server.placement()?, d, server.wal_dir().as_deref()),
        None => Vec::new(),
    };
    let preflight = (!targets.is_empty()).then(|| preflight::preflight(&targets));
    let (devices, disks) = preflight::devices(&targets);
    let what = format!("{:?} on {}", workload.mode, server.location);
    session.go_live(Kind::DbRun, what, server.socket());
    let sampler = Sampler::new((!devices.is_empty()).then_some(devices));
    let ends: Vec<Duration> = o.grid.slots().iter().map(|s| s.end).collect();
    let stop = session.stop().clone();
    let (outcome, samples, sample_error) = sampled(&sampler, &ends, |started| {
        driver::run(&server.cfg, &workload, &o.grid, stop, started)
    });
    let outcome = outcome?;
    let mut warnings = std::mem::take(&mut server.warnings);
    warnings.extend(preflight.iter().flat_map(|p| p.warnings.iter().cloned()));
    warnings.extend(ram_note.into_iter().chain(sample_error));
    let ctx = DbContext {
        server: DbServer {
            private: server.is_private(),
            version: String::new(),
            location: server.location.clone(),
            cache_limit: o.cache_limit,
            settings,
        },
        workload,
        grid: o.grid,
        data_set: data,
        disks,
        samples,
        preflight,
    };
    let (mut report, histograms) = db_document(&outcome, ctx, warnings)?;
    // Stop the private server before printing: a clean shutdown is part of the run.
    report.warnings.extend(server.stop());
    let ending = match &outcome.error {
        Some(e) => Ending::Failed(e.to_string()),
        None if outcome.interrupted => Ending::Interrupted,
        None => Ending::Complete,
    };
    let json = o.json;
    let render = |d: &Document| match d {
        Document::DbRun(r) if !json => iogauge_report::db_run_text(r),
        d => d.to_json(),
    };
    let stored = session.finish(report.into(), &histograms, render, &mut std::io::stdout());
    exit_of(stored, ending)
}
