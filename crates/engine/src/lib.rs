//! iogauge's synthetic I/O engine: prepares targets (creating and pre-filling files it owns),
//! generates offsets, and drives them through io_uring or psync workers that record every
//! I/O's latency into their own histograms and merge at interval boundaries.
//!
//! The engine never prints: progress and results go to callbacks and return values.

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod backend;
pub mod calibrate;
pub mod document;
mod driver;
mod error;
pub mod iopath;
mod job;
pub mod layout;
pub mod logwriter;
pub mod marker;
pub mod offsets;
mod placement;
pub mod pool;
mod psync;
pub mod replay;
pub mod target;
mod uring;
mod worker;

pub use error::EngineError;
pub use job::{devices, grid, replay_telling, run, run_telling, JobOutcome};
pub use placement::{check_planned, layout, placement, Member, Placement, Planned};
pub use target::{prepare, Access, Target, TargetError, TargetSpec};
pub use uring::probe as probe_uring;
