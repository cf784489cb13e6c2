//! `run --like DB_RUN_ID`: the db run a job replays and the shape of its device I/O
//! ([`crate::db::shape`] derives it and turns it into a job).

use serde::{Deserialize, Serialize};

/// `run --like ID`: the stored db run replayed and the shape taken from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Like {
    pub run: i64,
    pub shape: IoShape,
}

/// What a db run's data disks completed over the measured window, summed over the disks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoShape {
    pub reads_s: f64,
    pub writes_s: f64,
    /// Mean request sizes (iostat's rareq-sz, wareq-sz), KiB.
    pub read_kib: f64,
    pub write_kib: f64,
    /// Requests in flight on average (iostat's aqu-sz, summed over the disks).
    pub depth: f64,
}
