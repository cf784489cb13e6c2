//! The measuring step a database run takes alone or over ranks: the sessions with their
//! devices and CPU sampled, how the run ended, and how the ranks share it.

use crate::finish::Ending;
use crate::{sampled, Layers};
use iogauge_db::{driver, DbError, Prepared};
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::workload::Workload;
use iogauge_model::system::Snapshot;
use iogauge_probe::Sampler;
use iogauge_trace::FileKey;
use std::path::PathBuf;
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
) -> (Result<DbOutcome, DbError>, Vec<Snapshot>, Option<String>) {
    let devices = p.devices.clone();
    let sampler = Sampler::new((!devices.is_empty()).then_some(devices));
    let ends: Vec<Duration> = p.grid.slots().iter().map(|s| s.end).collect();
    sampled(&sampler, layers, ends, |started| p.run(stop, started, sync))
}

/// The block-layer tracer on the whole disks under the data set, unless `--no-trace`; the
/// page-cache writeback of the data set's files is the job's (see [`data_files`]).
pub(super) fn layers(p: &Prepared, trace: bool) -> Layers {
    let files = match &p.server.data_dir {
        Some(d) => data_files(&[Some(d.clone()), p.server.wal_dir()]),
        None => Vec::new(),
    };
    Layers::start(trace, &p.devices, &files)
}

/// The regular files under `dirs` (a private server's data directory and WAL directory),
/// walked once as the tracer starts, symbolic links not followed: the server, born in the
/// job's cgroup, writes them through the page cache, and a flusher thread's writeback of
/// them (tagged with the root cgroup on cgroup v1) is the job's too. Files the run makes
/// (a new relation segment) are not among them; at most `iogauge_trace::MAX_FILES`.
pub(super) fn data_files(dirs: &[Option<PathBuf>]) -> Vec<FileKey> {
    let mut out = Vec::new();
    let mut todo: Vec<PathBuf> = dirs.iter().flatten().cloned().collect();
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.path().symlink_metadata() else {
                continue;
            };
            if m.is_dir() {
                todo.push(e.path());
            } else if m.is_file() && out.len() < iogauge_trace::MAX_FILES as usize {
                out.push(FileKey::of(&m));
            }
        }
    }
    out
}

/// How a run ended, from its outcome.
pub(super) fn ending(outcome: &DbOutcome) -> Ending {
    match &outcome.error {
        Some(e) => Ending::Failed(e.to_string()),
        None if outcome.interrupted => Ending::Interrupted,
        None => Ending::Complete,
    }
}
