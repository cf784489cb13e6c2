//! The SQLite results store: one row per finished run (the `iogauge history` view, like
//! Oracle's DBA_RSRC_IO_CALIBRATE) with the run's JSON document and its HDR histograms as
//! blobs. Documents go in and come out typed (`iogauge_model::Document`): the store writes
//! their JSON and reads it back through the model's reader, which upgrades older schemas.
//!
//! Each run goes in with one transaction, so a crash or Ctrl-C mid-campaign leaves only whole
//! runs behind. The transactions go through a rollback journal, not a write-ahead log (why:
//! `store::rollback_journal`): a connection holds a lock only while it reads or commits, so
//! `iogauge history` reads while a run measures with its store open, and a busy timeout lets
//! a commit and a read, or two commits, queue instead of failing. Readers read through a
//! read-only connection and leave nothing beside the store (`readonly`).
//!
//! A store is marked with `PRAGMA application_id` and versioned with `PRAGMA user_version`.
//! Any other file (another program's database, a text file) is refused before SQLite opens it:
//! its header is read as plain bytes first, because SQLite can change files even when asked only
//! to read (a read-only connection leaves `-wal` and `-shm` files beside a WAL database; a
//! read-write one rolls back a hot journal or checkpoints a WAL on close).

mod campaign;
mod connection;
mod create;
mod error;
mod locate;
mod readonly;
mod runs;
mod schema;
mod store;
mod traces;
mod vet;
pub use campaign::{CampaignRow, CampaignRunRow, CampaignTag};
pub use error::StoreError;
pub use runs::{NewRun, StoredRun};
pub use store::Store;
pub use traces::TraceRow;

#[cfg(test)]
mod tests;
