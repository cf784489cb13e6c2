//! A database run as data: which engine (`engine`), the workload and its grid, the load profile's counters and
//! rates, average active sessions by wait event, reads per relation (`relations`), what the run returned (`outcome`), the
//! stored document (`report`) and what `db setup` loaded (`setup`).

pub mod aas;
pub mod engine;
pub mod outcome;
pub mod profile;
pub mod regrid;
pub mod relations;
pub mod report;
pub mod setup;
pub mod shape;
pub mod workload;
