//! iogauge's synthetic I/O engine: prepares targets (creating and pre-filling files it owns),
//! generates offsets, and drives them through io_uring or psync workers that record every
//! I/O's latency into their own histograms and merge at interval boundaries.
//!
//! The engine never prints: progress and results go to callbacks and return values.

pub mod calibrate;
mod driver;
mod error;
pub mod iopath;
mod job;
pub mod layout;
pub mod marker;
pub mod offsets;
pub mod pool;
mod psync;
pub mod target;
mod uring;
mod worker;

pub use error::EngineError;
pub use job::{devices_of, disks_of, layout, placement, run, JobOutcome, Placement};
pub use target::{prepare, Access, Target, TargetError, TargetSpec};
pub use uring::probe as probe_uring;

use iogauge_model::spec::JobSpec;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;

/// Everything one worker thread needs; built by `job::run`, consumed by a backend.
pub(crate) struct WorkerCtx<'a> {
    pub id: usize,
    pub spec: &'a JobSpec,
    pub targets: &'a [Target],
    pub gen: offsets::OpGen,
    pub plan: worker::Plan,
    /// Outstanding I/Os for this worker: its slots `id * qd ..` of the pool.
    pub qd: u32,
    /// The job's buffers.
    pub pool: &'a pool::BufPool,
    /// io_uring's setup, or `None` for psync.
    pub uring: Option<uring::UringChoice>,
    pub gate: &'a worker::Gate,
    pub halt: &'a AtomicBool,
    /// `--layout`: how logical I/Os become member I/Os (io_uring only).
    pub placement: Option<&'a job::Placement>,
    /// `--steady`: where the job announces the ramp's end.
    pub ramp_end: Option<&'a worker::RampEnd>,
    pub tx: Sender<worker::Msg>,
}
