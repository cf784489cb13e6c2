//! The measured-session pipeline (DESIGN's `Recorder`), the same for every producer of a
//! result (`run`, `calibrate`, `db run`, and so every campaign child):
//!
//! 1. [`Session::begin`]: the stop flag raised by Ctrl-C, SIGTERM or SIGHUP, the campaign tag a
//!    campaign runner hands its child, and the results store opened before anything is
//!    measured (a bad `--store` fails first);
//! 2. [`Session::go_live`] / [`Session::publish`]: the live feed `iogauge watch` follows;
//! 3. [`sampled`]: the one device and CPU sampler (`iogauge_probe::sample_grid`) on the
//!    producer's interval grid, from the moment the producer says it started, with the
//!    block-layer tracer's counters ([`Layers`]) in every snapshot;
//! 4. [`Session::finish`]: the document stored, then printed, then where it is stored said;
//!    the caller turns the [`Ending`] into an exit code.
//!
//! The producers themselves (the engine, PostgreSQL's sessions) and the summaries they build
//! (`iogauge_engine::document`, `iogauge_model::db::report`) stay in their crates: a session
//! only records and finishes. Nothing here writes to the terminal; the caller hands in where
//! the result goes.

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod error;
mod finish;
mod layers;
mod live;
pub mod measure;
pub mod ranks;
mod recorder;
mod sampled;
mod signal;
pub mod traces;

pub use error::SessionError;
pub use finish::{Ending, Stored};
pub use layers::{enter_job, leave_job, Layers};
pub use measure::Finished;
pub use recorder::{now, Session};
pub use sampled::{sampled, JobSampler};
pub use signal::{campaign_tag, stop_flag, CAMPAIGN_ENV};
