//! The SQLite results store: typed documents (`iogauge_model::Document`) in, typed documents
//! out, each run with its histograms in one transaction; campaigns and their runs; the
//! per-store campaign lock; and the live feed files `iogauge watch` follows.

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod live;
mod lock;
mod names;
mod sqlite;

pub use lock::{lock_path, CampaignLock};
pub use sqlite::{
    CampaignRow, CampaignRunRow, CampaignTag, NewRun, Store, StoreError, StoredRun, TraceRow,
};
