//! The data set's shape, whichever engine holds it: how many schemas, how many rows (one per
//! block or page) each, the seed that places them, and the padding an update rewrites (its
//! redo stress). Each engine lays it out in its own way (`postgres::schema`,
//! `mariadb::schema`).

use crate::error::DbError;
use iogauge_model::db::setup::LoadReport;
use iogauge_model::db::workload::RedoStress;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Padding columns `p1..p5`, each this many ASCII characters.
pub const PAD_COLS: usize = 5;
pub const PAD_LEN: usize = 120;

/// What to create.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaSpec {
    pub schemas: u32,
    /// Rows, hence 8 KiB heap blocks, per schema.
    pub blocks_per_schema: u64,
    /// Tables loaded at once (one connection each).
    pub load_parallel: u32,
    /// Seed of the key shuffle: the same seed gives the same row placement.
    pub seed: u64,
    /// Tablespaces the schemas are spread over, schema N on the ((N − 1) mod len)-th; empty:
    /// the database's default.
    #[serde(default)]
    pub tablespaces: Vec<String>,
}

impl SchemaSpec {
    /// The tablespace of `schema`, if the schemas are spread over some.
    pub(crate) fn tablespace_of(&self, schema: u32) -> Option<&str> {
        let n = self.tablespaces.len();
        (n > 0).then(|| self.tablespaces[(schema as usize - 1) % n].as_str())
    }
}

/// Padding columns an update sets.
pub(crate) fn pad_cols(redo: RedoStress) -> usize {
    match redo {
        RedoStress::None => 0,
        RedoStress::Lite => 1,
        RedoStress::Heavy => PAD_COLS,
    }
}

/// A data set loaded afresh, whichever engine's: iogauge's schemas dropped on the `admin`
/// connection, `load` (the engine's loaders), then `finish` (indexes, checks, the report). A
/// stop or a failure drops what was made, best effort (the server may be why it failed); a
/// stop is the error then, whatever the loaders saw of it.
pub(crate) fn load_afresh<A>(
    admin: &mut A,
    drop_all: impl Fn(&mut A) -> Result<(), DbError>,
    load: impl FnOnce() -> Result<(), DbError>,
    finish: impl FnOnce(&mut A) -> Result<LoadReport, DbError>,
    stop: &AtomicBool,
) -> Result<LoadReport, DbError> {
    let t = Instant::now();
    let stopped = || DbError::interrupted("loading the schemas");
    drop_all(admin)?;
    let loaded = load().and_then(|()| {
        if stop.load(Ordering::Relaxed) {
            return Err(stopped());
        }
        finish(admin)
    });
    match loaded {
        Ok(mut report) => {
            report.elapsed_s = t.elapsed().as_secs_f64();
            Ok(report)
        }
        Err(e) => {
            let e = if stop.load(Ordering::Relaxed) {
                stopped()
            } else {
                e
            };
            let _ = drop_all(admin);
            Err(e)
        }
    }
}
