//! The io_uring backend: one ring per worker thread with the setup flags the job chose, the
//! targets as registered files, the worker's pool buffers registered where the job chose
//! so. The hot path takes no lock and makes one `io_uring_enter(2)` per batch (submit and
//! wait together).

use crate::backend::{Backend, Piece};
use crate::error::EngineError;
use crate::pool::Slots;
use crate::target::Target;
use io_uring::{opcode, squeue, types, IoUring, Probe};
use iogauge_model::iopath::RingSetup;
use iogauge_stats::Direction;
use std::os::unix::io::{AsRawFd, RawFd};
use std::time::Duration;

/// Checks that io_uring works here and has the opcodes iogauge uses, before any target is
/// created: a kernel with io_uring disabled (sysctl kernel.io_uring_disabled, seccomp, old
/// kernels) gets a clear error, not a failure mid-run.
pub fn probe() -> Result<(), EngineError> {
    let ring = IoUring::new(2).map_err(EngineError::UringUnavailable)?;
    let mut p = Probe::new();
    ring.submitter()
        .register_probe(&mut p)
        .map_err(EngineError::UringSetup)?;
    for (code, name) in [
        (opcode::ReadFixed::CODE, "IORING_OP_READ_FIXED"),
        (opcode::WriteFixed::CODE, "IORING_OP_WRITE_FIXED"),
        (opcode::Read::CODE, "IORING_OP_READ"),
        (opcode::Write::CODE, "IORING_OP_WRITE"),
    ] {
        if !p.is_supported(code) {
            return Err(EngineError::UringOpcode(name));
        }
    }
    Ok(())
}

/// How the job runs io_uring: decided once for all workers (see [`crate::iopath`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct UringChoice {
    /// A concrete flag set the kernel accepts (never `Auto`).
    pub ring: RingSetup,
    pub fixed_bufs: bool,
    pub fixed_files: bool,
    /// SQEs per `io_uring_enter(2)` submission (fio's `iodepth_batch_submit`); 0 = every
    /// queued SQE with the next wait.
    pub submit_batch: u32,
}

/// One worker's ring.
pub(crate) struct Uring {
    ring: IoUring,
    choice: UringChoice,
    fds: Vec<RawFd>,
}

impl Uring {
    /// A ring of `entries` SQEs over `targets`, with `bufs` registered if the job chose so.
    /// The buffers must outlive the ring (the pool outlives every worker).
    pub fn new(
        entries: u32,
        targets: &[Target],
        bufs: &Slots<'_>,
        choice: UringChoice,
    ) -> Result<Uring, EngineError> {
        let mut b = IoUring::builder();
        crate::iopath::apply(choice.ring, &mut b);
        let ring = b
            .build(entries.clamp(1, 32768))
            .map_err(EngineError::UringSetup)?;
        let fds: Vec<RawFd> = targets.iter().map(|t| t.file.as_raw_fd()).collect();
        if choice.fixed_files {
            ring.submitter()
                .register_files(&fds)
                .map_err(EngineError::UringSetup)?;
        }
        if choice.fixed_bufs {
            let iovecs = bufs.iovecs();
            // SAFETY: the iovecs point into the job's pool, which outlives every worker's
            // ring and is never moved or unmapped while they run.
            unsafe { ring.submitter().register_buffers(&iovecs) }
                .map_err(EngineError::UringSetup)?;
        }
        Ok(Uring { ring, choice, fds })
    }
}

/// The SQE of one piece on the chosen path.
#[inline]
fn sqe(choice: UringChoice, fds: &[RawFd], p: &Piece) -> squeue::Entry {
    macro_rules! rw {
        ($fd:expr) => {
            match (p.dir, choice.fixed_bufs) {
                (Direction::Read, true) => opcode::ReadFixed::new($fd, p.buf, p.len, p.slot as u16)
                    .offset(p.offset)
                    .build(),
                (Direction::Read, false) => opcode::Read::new($fd, p.buf, p.len)
                    .offset(p.offset)
                    .build(),
                (Direction::Write, true) => {
                    opcode::WriteFixed::new($fd, p.buf, p.len, p.slot as u16)
                        .offset(p.offset)
                        .build()
                }
                (Direction::Write, false) => opcode::Write::new($fd, p.buf, p.len)
                    .offset(p.offset)
                    .build(),
            }
        };
    }
    let e = if choice.fixed_files {
        rw!(types::Fixed(p.target))
    } else {
        rw!(types::Fd(fds[p.target as usize]))
    };
    e.user_data(p.user_data)
}

impl Backend for Uring {
    #[inline]
    fn queue(&mut self, batch: &[Piece]) {
        let (choice, fds) = (self.choice, &self.fds);
        let every = choice.submit_batch as usize;
        let last = batch.len().saturating_sub(1);
        for (i, p) in batch.iter().enumerate() {
            // SAFETY: the SQ holds an entry for every piece of every slot and at most that
            // many are queued or in flight; each buffer stays valid until its CQE is reaped.
            unsafe { self.ring.submission().push(&sqe(choice, fds, p)) }
                .expect("SQ sized for every piece");
            // Hand over every `every` SQEs at once; the rest go with the wait's enter. A
            // failed submit leaves them queued for that enter, which reports the error.
            if every > 0 && i < last && (i + 1) % every == 0 {
                let _ = self.ring.submit();
            }
        }
    }

    fn wait(&mut self, limit: Option<Duration>) -> Result<(), EngineError> {
        let submitter = self.ring.submitter();
        let r = match limit {
            Some(w) => {
                let ts = types::Timespec::from(w);
                let args = types::SubmitArgs::new().timespec(&ts);
                submitter.submit_with_args(1, &args)
            }
            None => submitter.submit_and_wait(1),
        };
        match r {
            Ok(_) => Ok(()),
            // Interruptions and timeouts are not errors; a ring that fails is (nothing more
            // will complete).
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR | libc::ETIME | libc::EBUSY | libc::EAGAIN)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(EngineError::UringSetup(e)),
        }
    }

    #[inline]
    fn reap(&mut self, mut f: impl FnMut(u64, i32)) {
        for cqe in self.ring.completion() {
            f(cqe.user_data(), cqe.result());
        }
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        // Let go of the targets now: a ring is torn down asynchronously after close, and
        // until then its registered files stay open (and a block device opened O_EXCL
        // stays claimed).
        let s = self.ring.submitter();
        if self.choice.fixed_files {
            let _ = s.unregister_files();
        }
        if self.choice.fixed_bufs {
            let _ = s.unregister_buffers();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_finds_the_opcodes_here() {
        probe().expect("io_uring with READ/WRITE(_FIXED) on this kernel");
    }
}
