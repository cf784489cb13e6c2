//! The integration tests: one binary, one module per area, each running the real `iogauge`
//! binary in temporary directories. Tests of every area run side by side, so each takes a
//! guard of the gate in [`common`] first (shared, heavy or exclusive).

mod common;

mod benches;
mod blockdev;
mod calibrate;
mod campaign;
mod compare;
mod completions;
mod db;
mod diagnose;
mod docs;
mod errors;
mod hostile;
mod io_path;
mod layers;
mod layout;
mod logwriter;
mod mpi;
mod plan;
mod reach;
mod readme;
mod replay;
mod report;
mod run;
mod steady;
mod storage;
mod uring_disabled;
mod watch;
