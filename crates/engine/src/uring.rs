//! The io_uring backend: one ring per worker thread, the targets as registered files, one
//! registered buffer per in-flight slot, `user_data` = slot index. The hot path takes no lock
//! and makes one `io_uring_enter(2)` per batch (submit and wait together).
//!
//! Latency is submission to completion: the clock is read once before a batch of SQEs is
//! queued and once after a batch of CQEs is reaped (fio reads it once per reap too).

use crate::buf::AlignedBuf;
use crate::error::EngineError;
use crate::worker::{may_issue, Clock, Pacer};
use crate::WorkerCtx;
use io_uring::{opcode, types, IoUring, Probe};
use iogauge_stats::{Direction, Phase};
use rand::SeedableRng;
use std::io;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Builds a ring of `entries` with SINGLE_ISSUER + COOP_TASKRUN (6.0+; no IPI per completion),
/// else COOP_TASKRUN (5.19+), else plain. DEFER_TASKRUN was measured too and lost: on a 2-core
/// VM, running every completion's task work in the submitting thread cost 5-15% IOPS at QD 32.
pub(crate) fn build_ring(entries: u32) -> Result<IoUring, EngineError> {
    let attempts: [fn(&mut io_uring::Builder); 3] = [
        |b| {
            b.setup_single_issuer().setup_coop_taskrun();
        },
        |b| {
            b.setup_coop_taskrun();
        },
        |_| {},
    ];
    let mut last = None;
    for set in attempts {
        let mut b = IoUring::builder();
        set(&mut b);
        match b.build(entries) {
            Ok(r) => return Ok(r),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(EngineError::UringUnavailable(e)),
        }
    }
    Err(EngineError::UringUnavailable(
        last.unwrap_or_else(|| io::Error::other("no ring")),
    ))
}

/// Checks that io_uring works here and has the opcodes iogauge uses, before any target is
/// created: a kernel with io_uring disabled (sysctl kernel.io_uring_disabled, seccomp, old
/// kernels) gets a clear error, not a failure mid-run.
pub fn probe() -> Result<(), EngineError> {
    let ring = build_ring(2)?;
    let mut p = Probe::new();
    ring.submitter()
        .register_probe(&mut p)
        .map_err(EngineError::UringSetup)?;
    for (code, name) in [
        (opcode::ReadFixed::CODE, "IORING_OP_READ_FIXED"),
        (opcode::WriteFixed::CODE, "IORING_OP_WRITE_FIXED"),
    ] {
        if !p.is_supported(code) {
            return Err(EngineError::UringOpcode(name));
        }
    }
    Ok(())
}

/// Submits what is queued and waits for one completion, or until `wait_limit` (a paced or
/// throttled worker's next issue time). Interruptions and timeouts are not errors; a ring
/// that fails is (nothing more will complete).
pub(crate) fn enter(
    submitter: &io_uring::Submitter<'_>,
    wait_limit: Option<std::time::Duration>,
) -> Result<(), EngineError> {
    let r = match wait_limit {
        Some(w) => {
            let ts = types::Timespec::from(w);
            let args = types::SubmitArgs::new().timespec(&ts);
            submitter.submit_with_args(1, &args)
        }
        None => submitter.submit_and_wait(1),
    };
    match r {
        Ok(_) => Ok(()),
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

#[derive(Clone, Copy)]
struct Slot {
    start: Instant,
    dir: Direction,
    target: u32,
    offset: u64,
    len: u32,
}

/// Runs one io_uring worker to the end of its plan.
pub(crate) fn run(mut ctx: WorkerCtx<'_>) -> Result<(), EngineError> {
    let qd = ctx.qd as usize;
    let max_bs = ctx.spec.bs.max() as usize;
    // Buffers are declared before the ring so the ring is dropped (and the kernel lets go of
    // the registered pages) first.
    let mut bufs = AlignedBuf::new(qd * max_bs);
    let setup = (|| {
        let ring = build_ring(ctx.qd.max(1))?;
        let fds: Vec<i32> = ctx.targets.iter().map(|t| t.file.as_raw_fd()).collect();
        ring.submitter()
            .register_files(&fds)
            .map_err(EngineError::UringSetup)?;
        bufs.fill_random(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(
            ctx.spec.seed ^ ctx.id as u64,
        ));
        let base = bufs.as_mut_ptr();
        let iovecs: Vec<libc::iovec> = (0..qd)
            .map(|i| libc::iovec {
                // SAFETY: i * max_bs + max_bs <= qd * max_bs = the buffer's length.
                iov_base: unsafe { base.add(i * max_bs) }.cast(),
                iov_len: max_bs,
            })
            .collect();
        // SAFETY: the iovecs point into `bufs`, which outlives the ring (declared before it,
        // so dropped after it) and is never reallocated.
        unsafe { ring.submitter().register_buffers(&iovecs) }.map_err(EngineError::UringSetup)?;
        Ok(ring)
    })();
    let t0 = ctx.gate.wait();
    let mut ring = setup?;
    let base = bufs.as_mut_ptr();
    let tx = ctx.tx.clone();
    let mut clock = Clock::new(ctx.id, t0, ctx.plan.every, &tx);
    let mut slots = vec![
        Slot {
            start: t0,
            dir: Direction::Read,
            target: 0,
            offset: 0,
            len: 0
        };
        qd
    ];
    let mut free: Vec<u32> = (0..qd as u32).rev().collect();
    let mut failure: Option<EngineError> = None;
    let (submitter, mut sq, mut cq) = ring.split();

    for mut bounds in ctx.plan.phases(t0) {
        if let Some(r) = ctx.ramp_end {
            r.apply(&mut bounds, t0, ctx.plan.time);
        }
        clock.begin(&bounds);
        let mut pacer = ctx.plan.rate.map(|r| Pacer::new(r, bounds.start));
        let mut issued = 0u64;
        let mut inflight = 0usize;
        let mut now = Instant::now();
        loop {
            if let Some(r) = ctx.ramp_end {
                if bounds.phase == Phase::Ramp && r.apply(&mut bounds, t0, None) {
                    clock.set_deadline(bounds.deadline);
                }
            }
            let halt = failure.is_some() || ctx.halt.load(Ordering::Relaxed);
            let issuing = may_issue(&bounds, now, issued, halt);
            let mut wait_limit = None;
            if issuing && !free.is_empty() {
                // Learn which SQEs the kernel consumed in the last io_uring_enter.
                sq.sync();
                let t_sub = Instant::now();
                while let Some(&slot) = free.last() {
                    if !may_issue(&bounds, t_sub, issued, false) {
                        break;
                    }
                    if let Some(p) = &mut pacer {
                        if let Some(w) = p.wait_for(t_sub) {
                            wait_limit = Some(w);
                            break;
                        }
                        p.take(t_sub);
                    }
                    free.pop();
                    let op = ctx.gen.next_op();
                    // SAFETY: slot < qd, so the slot's buffer lies inside `bufs`.
                    let buf = unsafe { base.add(slot as usize * max_bs) };
                    let fd = types::Fixed(op.target);
                    let sqe = match op.dir {
                        Direction::Read => opcode::ReadFixed::new(fd, buf, op.len, slot as u16)
                            .offset(op.offset)
                            .build(),
                        Direction::Write => {
                            // Stamp the offset into the block so no two writes carry the same
                            // data (defeats deduplication, as fio's scramble_buffers does).
                            // SAFETY: the slot is free, so the kernel is not using its buffer.
                            unsafe { buf.cast::<u64>().write_unaligned(op.offset ^ issued) };
                            opcode::WriteFixed::new(fd, buf, op.len, slot as u16)
                                .offset(op.offset)
                                .build()
                        }
                    }
                    .user_data(u64::from(slot));
                    slots[slot as usize] = Slot {
                        start: t_sub,
                        dir: op.dir,
                        target: op.target,
                        offset: op.offset,
                        len: op.len,
                    };
                    // SAFETY: the SQ has `qd` entries and at most `qd` I/Os are ever queued or
                    // in flight; the buffer stays valid until the CQE comes back.
                    unsafe { sq.push(&sqe) }.expect("SQ sized for every slot");
                    issued += 1;
                    inflight += 1;
                }
                sq.sync();
            }
            if inflight == 0 {
                if !issuing {
                    break;
                }
                // Paced and nothing in flight: sleep until the next I/O is due.
                if let Some(w) = wait_limit {
                    std::thread::sleep(w);
                }
                now = Instant::now();
                continue;
            }
            enter(&submitter, wait_limit)?;
            now = Instant::now();
            clock.tick(now);
            cq.sync();
            for cqe in &mut cq {
                let slot = cqe.user_data() as u32;
                let s = slots[slot as usize];
                free.push(slot);
                inflight -= 1;
                let res = cqe.result();
                if res == s.len as i32 {
                    let lat = now.saturating_duration_since(s.start).as_nanos() as u64;
                    clock.record(s.dir, u64::from(s.len), lat);
                } else if failure.is_none() {
                    failure = Some(io_failure(&ctx, s, res));
                }
            }
        }
        clock.finish(now);
    }
    drop(tx);
    // Let go of the targets now: a ring is torn down asynchronously after close, and until
    // then its registered files stay open (and a block device opened O_EXCL stays claimed).
    let _ = submitter.unregister_files();
    let _ = submitter.unregister_buffers();
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn io_failure(ctx: &WorkerCtx<'_>, s: Slot, res: i32) -> EngineError {
    let path = ctx.targets[s.target as usize].info.path.clone();
    let dir = s.dir.name();
    if res < 0 {
        EngineError::Io {
            path,
            dir,
            offset: s.offset,
            len: s.len,
            source: io::Error::from_raw_os_error(-res),
        }
    } else {
        EngineError::Short {
            path,
            dir,
            offset: s.offset,
            len: s.len,
            got: res as u32,
        }
    }
}
