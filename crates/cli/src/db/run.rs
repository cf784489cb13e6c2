//! `iogauge db run`: sessions on a real PostgreSQL, with the devices and CPU sampled on the
//! same grid from the moment the sessions start; stored, then printed (or JSON). The steps
//! are separate so that a run over MPI ranks (`crate::mpi::db`) takes the same ones.

use super::options::DbRunOptions;
use super::preflight;
use super::setup::setup_first;
use crate::session::exit_of;
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::{DataSet, DbContext, DbReport, DbServer, Setting};
use iogauge_model::db::workload::Workload;
use iogauge_model::preflight::Preflight;
use iogauge_model::system::Snapshot;
use iogauge_model::{Document, Histograms, Kind};
use iogauge_pg::{data_set, db_document, driver, PgError, RunPlace, RunServer};
use iogauge_probe::Sampler;
use iogauge_session::{sampled, Ending, Session};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub fn run(o: DbRunOptions) -> anyhow::Result<ExitCode> {
    let mut session = Session::begin(o.store.as_deref())?;
    session.set_label(o.label.clone());
    let mut p = Prepared::new(&o)?;
    session.go_live(Kind::DbRun, p.what(), p.server.socket());
    let stop = session.stop().clone();
    let nothing = driver::Sync {
        ready: &mut || true,
        tick: &mut || {},
    };
    let (outcome, samples, sample_error) = p.measure(&o, stop, nothing);
    // The run ends with its sessions: the server's shutdown after them is not measured.
    let ended_at = iogauge_session::now();
    let mut outcome = outcome.map_err(|e| p.not_started(e))?;
    p.explain(&mut outcome);
    let (mut report, histograms) = p.document(&o, &outcome, samples, sample_error)?;
    report.meta.ended_at = Some(ended_at);
    // Stopped before printing: its shutdown's warnings belong to the run.
    report
        .warnings
        .extend(p.stop_server(outcome.error.is_some()));
    finish(session, report, &histograms, o.json, ending(&outcome))
}

/// A server ready to run on: the workload on its data set, its settings, and the storage
/// under a private cluster with its preflight.
pub struct Prepared {
    pub server: RunServer,
    pub workload: Workload,
    pub settings: Vec<Setting>,
    pub data: DataSet,
    pub notes: Vec<String>,
    pub preflight: Option<Preflight>,
    pub devices: Vec<String>,
    pub disks: Vec<String>,
}

impl Prepared {
    pub fn new(o: &DbRunOptions) -> anyhow::Result<Prepared> {
        let place = RunPlace {
            place: &o.place,
            overrides: &o.overrides,
            cache_limit: o.cache_limit,
            pg_bin: o.pg_bin.as_ref(),
        };
        let server =
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
        let (devices, disks) = preflight
            .as_ref()
            .map(preflight::devices)
            .unwrap_or_default();
        Ok(Prepared {
            server,
            workload,
            settings,
            data,
            notes: ram_note.into_iter().collect(),
            preflight,
            devices,
            disks,
        })
    }

    /// What the live line and `watch` say the run is.
    pub fn what(&self) -> String {
        format!("{:?} on {}", self.workload.mode, self.server.location)
    }

    /// The sessions' run with the devices sampled on its grid.
    pub fn measure(
        &self,
        o: &DbRunOptions,
        stop: Arc<AtomicBool>,
        sync: driver::Sync<'_>,
    ) -> (Result<DbOutcome, PgError>, Vec<Snapshot>, Option<String>) {
        let devices = self.devices.clone();
        let sampler = Sampler::new((!devices.is_empty()).then_some(devices));
        let ends: Vec<Duration> = o.grid.slots().iter().map(|s| s.end).collect();
        sampled(&sampler, ends, |started| {
            driver::run_synced(
                &self.server.cfg,
                &self.workload,
                &o.grid,
                stop,
                started,
                sync,
            )
        })
    }

    /// The run's document and histograms (the server still up: see `stop_server`).
    pub fn document(
        &mut self,
        o: &DbRunOptions,
        outcome: &DbOutcome,
        samples: Vec<Snapshot>,
        sample_error: Option<String>,
    ) -> anyhow::Result<(DbReport, Histograms)> {
        let mut warnings = std::mem::take(&mut self.server.warnings);
        warnings.extend(
            self.preflight
                .iter()
                .flat_map(|p| p.warnings.iter().cloned()),
        );
        warnings.extend(self.notes.iter().cloned().chain(sample_error));
        Ok(db_document(outcome, self.context(o, samples), warnings)?)
    }

    /// Stops a private server (a clean shutdown is part of the run; an immediate one when
    /// the run is `lost`): what went wrong, if anything, as warnings for the document.
    pub fn stop_server(&mut self, lost: bool) -> Vec<String> {
        self.server.stop(lost).into_iter().collect()
    }

    /// The sessions never started (`e`): when a private server failed meanwhile, that
    /// failure is the error — the server's, with its log's lines since it started, exit 1 —
    /// rather than what a session saw of it (a refused connection reads as a wrong DSN), and
    /// the server is stopped at once.
    pub fn not_started(&mut self, e: PgError) -> PgError {
        let Some(why) = self.server.failure() else {
            return e;
        };
        let _ = self.server.stop(true);
        PgError::Server {
            server: self.server.location.clone(),
            why: format!(
                "{why} (before the sessions started: {})",
                iogauge_pg::chain_text(&e)
            ),
        }
    }

    /// A run a failure ended: the private server's own account of it, when it failed, goes
    /// with the error the document keeps (a session only sees its connection close).
    pub fn explain(&mut self, outcome: &mut DbOutcome) {
        if let Some(e) = outcome.error.as_mut() {
            if let Some(why) = self.server.failure() {
                e.push_str(&format!("; {why}"));
            }
        }
    }

    /// What the document is built on besides the outcome.
    pub fn context(&self, o: &DbRunOptions, samples: Vec<Snapshot>) -> DbContext {
        DbContext {
            server: DbServer {
                private: self.server.is_private(),
                version: String::new(),
                location: self.server.location.clone(),
                cache_limit: o.cache_limit,
                settings: self.settings.clone(),
            },
            workload: self.workload.clone(),
            grid: o.grid,
            data_set: self.data.clone(),
            disks: self.disks.clone(),
            samples,
            preflight: self.preflight.clone(),
        }
    }
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
