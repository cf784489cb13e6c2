//! What a backend is to the driver loop: it queues pieces (one I/O on one target each),
//! hands them over and waits, and reports completions. io_uring (`crate::uring`) and psync
//! threads (`crate::psync`) implement it.

use crate::error::EngineError;
use iogauge_stats::Direction;
use std::time::Duration;

/// One I/O on one target, as a backend issues it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    pub dir: Direction,
    pub target: u32,
    pub offset: u64,
    pub len: u32,
    pub buf: *mut u8,
    /// The slot's index among the worker's buffers (the registered buffer's index).
    pub slot: u32,
    pub user_data: u64,
}

/// How a backend moves pieces: queue a batch, hand it over and wait, collect completions.
pub(crate) trait Backend {
    /// Queues the pieces (io_uring: SQEs; psync: performs them one by one).
    fn queue(&mut self, batch: &[Piece]);
    /// Submits what is queued and waits for at least one completion, or until `limit`.
    fn wait(&mut self, limit: Option<Duration>) -> Result<(), EngineError>;
    /// Calls `f(user_data, result)` for every completion collected so far (`result` is the
    /// byte count, or a negative errno).
    fn reap(&mut self, f: impl FnMut(u64, i32));
}
