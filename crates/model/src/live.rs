//! The live feed of a run in progress, as `iogauge watch` reads it: a header naming the
//! job (and, for a database run, its private server's socket, never a DSN), then one line
//! per finished interval; and what one look at a database shows. The files are written and
//! read by `iogauge_store::live`; the database is read by `iogauge_db::watch`.

use crate::db::profile::LoadRates;
use crate::run::IntervalReport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The first line of a live file: what is running.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveHeader {
    pub pid: u32,
    /// `run`, `calibrate`, `db run`.
    pub kind: String,
    /// One line describing the job, as its summary's first line.
    pub what: String,
    pub started_at: String,
    /// A database run's private server, for the database panel (never a DSN: no passwords).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db: Option<SocketAddr>,
}

/// Every further line: one finished interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveInterval {
    /// Seconds from the job's start to the end of the interval.
    pub elapsed_s: f64,
    pub interval: IntervalReport,
    /// Over MPI ranks: how many ranks' counts the interval holds, and the slowest and
    /// fastest of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<LiveRanks>,
}

/// Over MPI ranks, one live interval: the ranks whose counts reached rank 0 in time (a
/// later one is left out of the live view, never of the result) of the job's, and the
/// slowest and fastest of them by IOPS.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveRanks {
    pub heard: u32,
    pub of: u32,
    pub slowest: RankRate,
    pub fastest: RankRate,
}

/// One rank's IOPS in an interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankRate {
    pub rank: u32,
    pub iops: f64,
}

/// Where a private cluster listens (no password: unix socket, peer authentication), as a
/// run publishes it for `watch`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketAddr {
    /// PostgreSQL's (`.s.PGSQL.PORT` in `socket_dir`) or MariaDB's (`mysqld.sock` there).
    #[serde(default)]
    pub engine: crate::db::engine::Engine,
    pub socket_dir: PathBuf,
    pub port: u16,
    pub user: String,
    pub dbname: String,
}

/// One look at the database.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DbNow {
    /// Rates since the previous look; `None` on the first.
    pub rates: Option<LoadRates>,
    /// Test sessions active at this instant, by wait event ("CPU" when not waiting).
    pub active: BTreeMap<String, u32>,
}
