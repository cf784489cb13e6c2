//! The psync backend: each thread issues one pread(2)/pwrite(2) at a time, so a worker with
//! `--qd N` becomes N threads (the same number of outstanding I/Os as io_uring at QD N).
//! The fallback where io_uring is unavailable, and the reference the io_uring path is checked
//! against. It runs the same driver loop as io_uring: `queue` performs the I/O.

use crate::backend::{Backend, Piece};
use crate::error::EngineError;
use crate::target::Target;
use iogauge_stats::Direction;
use std::os::unix::fs::FileExt;
use std::time::Duration;

pub(crate) struct Psync<'a> {
    targets: &'a [Target],
    done: Vec<(u64, i32)>,
}

impl<'a> Psync<'a> {
    pub fn new(targets: &'a [Target]) -> Self {
        Psync {
            targets,
            done: Vec::with_capacity(1),
        }
    }
}

impl Backend for Psync<'_> {
    fn queue(&mut self, batch: &[Piece]) {
        for p in batch {
            let file = &self.targets[p.target as usize].file;
            let len = p.len as usize;
            let res = match p.dir {
                Direction::Read => {
                    // SAFETY: the piece's buffer is the worker's own slot of at least `len`
                    // bytes, and nothing else uses it while the I/O runs.
                    let b = unsafe { std::slice::from_raw_parts_mut(p.buf, len) };
                    file.read_at(b, p.offset)
                }
                Direction::Write => {
                    // SAFETY: as above.
                    let b = unsafe { std::slice::from_raw_parts(p.buf, len) };
                    file.write_at(b, p.offset)
                }
            };
            let res = match res {
                Ok(n) => n as i32,
                Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
            };
            self.done.push((p.user_data, res));
        }
    }

    fn wait(&mut self, _limit: Option<Duration>) -> Result<(), EngineError> {
        // Every queued I/O has already completed.
        Ok(())
    }

    fn reap(&mut self, mut f: impl FnMut(u64, i32)) {
        for (ud, res) in self.done.drain(..) {
            f(ud, res);
        }
    }
}
