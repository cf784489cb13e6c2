//! The campaign runner behind `iogauge campaign FILE.toml`: a campaign's plan run one
//! `iogauge` child process per run (the same command line a user would type, so every flag is
//! checked as usual), each stored by the child together with its case and repetition in one
//! transaction; the file's hooks around them; a rerun resuming where the last one stopped;
//! one runner per campaign and store at a time (the store's [`CampaignLock`]); and, at the
//! end or for `report` / `export` / `compare`, the campaign gathered back from the store
//! (`iogauge_report::gather`, which reads results back for the renderers too).
//!
//! Beneath the binary and beside the session pipeline: the pure campaign crate (the file, the
//! plan, digests and statistics) stays free of processes and the store; this crate is where
//! they meet. Nothing here prints: the caller hears how it goes through [`Progress`] and
//! turns the [`Outcome`] into text and an exit code.
//!
//! [`CampaignLock`]: iogauge_store::CampaignLock

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod child;
mod error;
mod hooks;
mod machine;
mod pending;
mod run;

pub use child::INTERRUPTED_EXIT;
pub use error::RunnerError;
pub use pending::{pending, Pending};
pub use run::{End, Outcome, Progress, Runner};
