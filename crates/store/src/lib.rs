//! The SQLite results store: typed documents (`iogauge_model::Document`) in, typed documents
//! out, each run with its histograms in one transaction; campaigns and their runs; the
//! per-store campaign lock; and the live feed files `iogauge watch` follows.

mod db;
pub mod live;
mod lock;

pub use db::{CampaignRow, CampaignRunRow, CampaignTag, NewRun, Store, StoreError, StoredRun};
pub use lock::{lock_path, CampaignLock};
