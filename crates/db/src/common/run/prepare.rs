//! A `db run` made ready: its server — a private cluster opened (set up on first use,
//! reconfigured, put in a memory cgroup, started) or an existing server by DSN — what
//! iogauge loaded on it, the workload on that data set, and the storage under a private
//! cluster with its preflight; and what follows the sessions' run: the document's context and
//! warnings, a failure explained by the server's own log, and the server's shutdown at the
//! end, which is part of the run.

use super::document::{data_set, db_document};
use super::preflight;
use super::server::RunPlace;
use super::server::RunServer;
use crate::common::workload::drive::Sync;
use crate::common::workload::spec::WorkloadSpec;
use crate::engine::SetupUi;
use crate::engines::engine;
use crate::error::{chain_text, DbError};
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::{DataSet, DbContext, DbReport, DbServer, Setting};
use iogauge_model::db::workload::{Grid, Workload};
use iogauge_model::preflight::Preflight;
use iogauge_model::system::Snapshot;
use iogauge_model::Histograms;
use iogauge_stats::HistError;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// A server ready to run on: the workload on its data set, its settings, and the storage
/// under a private cluster with its preflight.
pub struct Prepared {
    pub server: RunServer,
    pub workload: Workload,
    pub grid: Grid,
    /// `--cache-limit`, for the document.
    pub cache_limit: Option<u64>,
    pub settings: Vec<Setting>,
    pub data: DataSet,
    pub notes: Vec<String>,
    pub preflight: Option<Preflight>,
    /// The devices to sample: each target's device and the disks under it.
    pub devices: Vec<String>,
    pub disks: Vec<String>,
    /// `db run --disks`: the disks behind the data for the figures per disk (`None`: as
    /// many as `disks`).
    pub num_disks: Option<u32>,
    pub write_disks: Vec<String>,
}

impl Prepared {
    /// The server of `place` opened (through its engine's `open_for_run`: a missing private
    /// server is set up first, with `ui`'s progress), `spec` put on the data set found there, on
    /// `grid`.
    pub fn new(
        place: &RunPlace<'_>,
        spec: &WorkloadSpec,
        grid: Grid,
        ui: &SetupUi<'_>,
    ) -> Result<Prepared, DbError> {
        let server = engine(place.engine).open_for_run(place, ui)?;
        let (schemas, blocks) = server.data_set()?;
        let workload = spec.workload(schemas, blocks);
        let settings = server.settings()?;
        let (data, ram_note) = data_set(
            place.engine,
            schemas,
            blocks,
            &settings,
            iogauge_probe::ram_bytes()?,
            place.cache_limit.is_some(),
        );
        // Only a private cluster's storage is known: a server by DSN may be on another host.
        let targets = match &server.data_dir {
            Some(d) => preflight::targets(&server.placement()?, d, server.wal_dir().as_deref()),
            None => Vec::new(),
        };
        let direct = preflight::reads_direct(&settings);
        let preflight = (!targets.is_empty()).then(|| preflight::preflight(&targets, direct));
        let preflight::DbDevices {
            sampled: devices,
            disks,
            write_disks,
        } = preflight
            .as_ref()
            .map(preflight::devices)
            .unwrap_or_default();
        let notes = ram_note
            .into_iter()
            .chain(server.read_path_notes(&settings))
            .collect();
        Ok(Prepared {
            server,
            workload,
            grid,
            cache_limit: place.cache_limit,
            settings,
            data,
            notes,
            preflight,
            devices,
            disks,
            num_disks: None,
            write_disks,
        })
    }

    /// What the live line and `watch` say the run is.
    pub fn what(&self) -> String {
        format!("{:?} on {}", self.workload.mode, self.server.location)
    }

    /// The sessions' run (see [`RunServer::run`]); `started` gets t0, where the caller's
    /// samplers start.
    pub fn run<'a>(
        &'a self,
        stop: Arc<AtomicBool>,
        started: impl FnOnce(Instant) + Send + 'a,
        sync: Sync<'_>,
    ) -> Result<DbOutcome, DbError> {
        self.server
            .run(&self.workload, &self.grid, stop, started, sync)
    }

    /// The run's document and histograms (the server still up: see `stop_server`).
    pub fn document(
        &mut self,
        outcome: &DbOutcome,
        samples: Vec<Snapshot>,
        sample_error: Option<String>,
    ) -> Result<(DbReport, Histograms), HistError> {
        let mut warnings = std::mem::take(&mut self.server.warnings);
        warnings.extend(
            self.preflight
                .iter()
                .flat_map(|p| p.warnings.iter().cloned()),
        );
        warnings.extend(self.notes.iter().cloned().chain(sample_error));
        db_document(outcome, self.context(samples), warnings)
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
    pub fn not_started(&mut self, e: DbError) -> DbError {
        let Some(why) = self.server.failure() else {
            return e;
        };
        let _ = self.server.stop(true);
        DbError::Server {
            server: self.server.location.clone(),
            why: format!("{why} (before the sessions started: {})", chain_text(&e)),
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
    pub fn context(&self, samples: Vec<Snapshot>) -> DbContext {
        DbContext {
            server: DbServer {
                engine: self.server.engine,
                private: self.server.is_private(),
                version: String::new(),
                location: self.server.location.clone(),
                cache_limit: self.cache_limit,
                settings: self.settings.clone(),
            },
            workload: self.workload.clone(),
            grid: self.grid,
            data_set: self.data.clone(),
            disks: self.disks.clone(),
            num_disks: self.num_disks,
            write_disks: self.write_disks.clone(),
            samples,
            preflight: self.preflight.clone(),
        }
    }
}
