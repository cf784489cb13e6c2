//! `run --like DB_RUN_ID`: the db run a job replays and the shape of its device I/O
//! ([`crate::db::shape`] derives it and turns it into a job).

use crate::db::engine::Engine;
use serde::{Deserialize, Serialize};

/// `run --like ID`: the stored db run replayed and the shape taken from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Like {
    pub run: i64,
    pub shape: IoShape,
    /// The db run's database (its pages' size and its name in the text); PostgreSQL in
    /// documents from before MariaDB, and left out of the JSON for it.
    #[serde(default, skip_serializing_if = "Engine::is_postgres")]
    pub engine: Engine,
}

/// The I/O a db run asked of its storage over the measured window: the reads its data disks
/// completed (summed over the disks) and the data pages the database wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoShape {
    pub reads_s: f64,
    /// The database's data pages written per second (PostgreSQL's buffers; shapes stored
    /// before the log writer: the disks' writes, journal and WAL included).
    pub writes_s: f64,
    /// The disks' mean read size (iostat's rareq-sz) and the page written (8 KiB PostgreSQL,
    /// 16 KiB InnoDB), KiB.
    pub read_kib: f64,
    pub write_kib: f64,
    /// Requests in flight on average (iostat's aqu-sz, summed over the disks).
    pub depth: f64,
    /// The database's log stream (PostgreSQL's WAL writes and syncs), replayed beside the
    /// data I/O as a log writer; `None` without updates (a read-only run) and in shapes
    /// stored before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogShape>,
    /// Device reads per session operation (reads/s over the sessions' operations/s): an
    /// operation waits for that many reads in a row, which is how a replay's read latency is
    /// put beside the db run's per operation; `None` in shapes stored before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_per_op: Option<f64>,
    /// InnoDB's doublewrite over the window: every page written went to the doublewrite area
    /// first, in large sequential writes, which the job does not replay (one random write
    /// size); named in the text so the replay's writes are not read as all the disks got.
    /// `None` for PostgreSQL, without it, and in shapes stored before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doublewrite: Option<Doublewrite>,
}

/// The doublewrite's pages and write calls per second.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Doublewrite {
    pub pages_s: f64,
    pub writes_s: f64,
}

/// The WAL stream of a db run over its measured window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogShape {
    /// WAL writes per second and their mean size (`wal_write`, `wal_bytes / wal_write`).
    pub writes_s: f64,
    pub write_kib: f64,
    /// Commits per WAL sync: how many commits one sync served (group commit), so a replay's
    /// syncs count as that many commits.
    pub commits_per_sync: f64,
    /// Commits per session operation (the share of operations that update); 0 in shapes
    /// stored before it.
    #[serde(default)]
    pub commits_per_op: f64,
    /// The log was the db run's load: its sessions spent most of their time waiting for the
    /// WAL (a redo test), so how fast the log goes is the measure.
    #[serde(default)]
    pub is_load: bool,
}
