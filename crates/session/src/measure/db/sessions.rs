//! The measuring step a database run takes alone or over ranks: the sessions with their
//! devices and CPU sampled, how the run ended, and how the ranks share it.

use crate::finish::Ending;
use crate::{sampled, Layers};
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::workload::Workload;
use iogauge_model::system::Snapshot;
use iogauge_pg::{driver, PgError, Prepared};
use iogauge_probe::Sampler;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// How the ranks share a database run.
pub struct Shared {
    /// Each rank runs the whole workload on a server of its own (`--dir PATH.{rank}`, or a
    /// `--dsn` naming one per rank); else the ranks share one server's sessions.
    pub own_servers: bool,
    /// The job's workload as asked (each rank may run a share of it): what the document
    /// records.
    pub workload: Option<Workload>,
}

/// The sessions' run with the devices under the data set (`Prepared::devices`, from its
/// preflight) and the CPU sampled on its grid.
/// `layers` is the session's tracer, started on the same devices (see [`layers`]).
pub(super) fn measure(
    p: &Prepared,
    layers: &Layers,
    stop: Arc<AtomicBool>,
    sync: driver::Sync<'_>,
) -> (Result<DbOutcome, PgError>, Vec<Snapshot>, Option<String>) {
    let devices = p.devices.clone();
    let sampler = Sampler::new((!devices.is_empty()).then_some(devices));
    let ends: Vec<Duration> = p.grid.slots().iter().map(|s| s.end).collect();
    sampled(&sampler, layers, ends, |started| p.run(stop, started, sync))
}

/// The block-layer tracer on the whole disks under the data set, unless `--no-trace`.
pub(super) fn layers(p: &Prepared, trace: bool) -> Layers {
    Layers::start(trace, &p.devices, &[])
}

/// How a run ended, from its outcome.
pub(super) fn ending(outcome: &DbOutcome) -> Ending {
    match &outcome.error {
        Some(e) => Ending::Failed(e.to_string()),
        None if outcome.interrupted => Ending::Interrupted,
        None => Ending::Complete,
    }
}
