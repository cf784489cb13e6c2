//! The results model, at the bottom of the house: every type a stored or exported document is
//! made of, and the vocabulary those documents use (the job's options, targets, the OS's
//! device and CPU samples, the database's load profile). The serde types *are* iogauge's JSON
//! schema; [`Document`] is a result of any kind, read from JSON (older schemas upgraded) only
//! through [`Document::from_json`]. Producers (engine, probe, pg) build these types; store,
//! report, campaign and plan read them. Nothing here touches the OS, a device or a database,
//! and this crate depends on no producer: only on `stats` (histograms, counters, steady
//! state, units).

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod calib;
pub mod counter;
pub mod db;
pub mod derive;
pub mod document;
pub mod finding;
pub mod hardware;
pub mod history;
pub mod interval;
pub mod iopath;
pub mod layers;
pub mod layout;
pub mod live;
pub mod meta;
pub mod preflight;
pub mod ranks;
pub mod regrid;
pub mod run;
pub mod sched;
pub mod secret;
pub mod spec;
pub mod summary;
pub mod system;
pub mod target;

/// Sizes, durations and rates as types, parsed and formatted as users write them.
pub use iogauge_stats::units;

/// A user's text echoed back: bounded in messages, escaped on a terminal.
pub use iogauge_stats::echo;

pub use document::{DocError, Document, Histograms};
pub use meta::{Kind, Meta, SCHEMA};
