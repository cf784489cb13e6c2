//! The results model, at the bottom of the house: every type a stored or exported document is
//! made of, and the vocabulary those documents use (the job's options, targets, the OS's
//! device and CPU samples, the database's load profile). The serde types *are* iogauge's JSON
//! schema. Producers (engine, probe, pg) build these types; store, report, campaign and plan
//! read them. Nothing here touches the OS, a device or a database, and this crate depends on
//! no producer: only on `stats` (histograms, counters, steady state, units).

pub mod calib;
pub mod db;
pub mod iopath;
pub mod layout;
pub mod spec;
pub mod system;
pub mod target;
pub mod units;
