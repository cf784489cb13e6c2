//! The io_uring backend under a layout (`--layout`): each logical I/O is mapped to member
//! I/Os ([`crate::layout::Layout::map`]) — split at allocation-unit boundaries, one copy for
//! a read, every live copy for a write — and completes when its last member I/O does; its
//! latency is that of the slowest copy, as a mirrored write's is. Member I/Os are counted
//! per target, and `--member-iops` spaces them per member through a shared token bucket.
//!
//! Kept apart from `uring.rs` so the plain path stays as lean as it is measured to be.
//! `user_data` = op slot (bits 48..) | member (bits 32..48) | length (bits 0..32): the slot
//! finds the logical I/O, the member its counter, the length tells a short transfer.

use crate::buf::AlignedBuf;
use crate::error::EngineError;
use crate::job::Placement;
use crate::layout::MemberIo;
use crate::uring::{build_ring, enter};
use crate::worker::{may_issue, Clock, Pacer};
use crate::WorkerCtx;
use io_uring::{opcode, types};
use iogauge_stats::{Direction, Phase};
use rand::SeedableRng;
use std::io;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
struct Slot {
    start: Instant,
    dir: Direction,
    offset: u64,
    len: u32,
    /// Member I/Os still in flight.
    pending: u32,
}

/// A logical I/O whose member I/Os may not start yet (`--member-iops`).
struct Deferred {
    dir: Direction,
    offset: u64,
    len: u32,
    at: Instant,
}

/// Most member I/Os one logical I/O can become: every copy, each split at every unit
/// boundary it crosses.
fn max_pieces(p: &Placement, max_bs: u64) -> usize {
    let unit = p.layout.spec().unit().unwrap_or(crate::spec::MIN_ALIGN);
    p.layout.copies() as usize * (max_bs.div_ceil(unit) as usize + 1)
}

pub(crate) fn run(mut ctx: WorkerCtx<'_>) -> Result<(), EngineError> {
    let place = ctx.placement.expect("layout worker without a layout");
    let qd = ctx.qd as usize;
    let max_bs = ctx.spec.bs.max() as usize;
    let pieces = max_pieces(place, max_bs as u64);
    let entries = (qd * pieces).clamp(1, 32768) as u32;
    let mut bufs = AlignedBuf::new(qd * max_bs);
    let setup = (|| {
        let ring = build_ring(entries)?;
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
        // SAFETY: the iovecs point into `bufs`, which outlives the ring and is never moved.
        unsafe { ring.submitter().register_buffers(&iovecs) }.map_err(EngineError::UringSetup)?;
        Ok(ring)
    })();
    let t0 = ctx.gate.wait();
    let mut ring = setup?;
    let base = bufs.as_mut_ptr();
    let tx = ctx.tx.clone();
    let members = ctx.targets.len();
    let mut clock = Clock::new(ctx.id, t0, ctx.plan.every, &tx).with_members(members);
    let mut slots = vec![
        Slot {
            start: t0,
            dir: Direction::Read,
            offset: 0,
            len: 0,
            pending: 0,
        };
        qd
    ];
    let mut free: Vec<u32> = (0..qd as u32).rev().collect();
    let mut failure: Option<EngineError> = None;
    let mut ios: Vec<MemberIo> = Vec::with_capacity(pieces);
    let mut deferred: Option<Deferred> = None;
    let mut choose = ctx.id as u64;
    let (submitter, mut sq, mut cq) = ring.split();
    let since_t0 = |t: Instant| t.saturating_duration_since(t0).as_nanos() as u64;

    for mut bounds in ctx.plan.phases(t0) {
        if let Some(r) = ctx.ramp_end {
            r.apply(&mut bounds, t0, ctx.plan.time);
        }
        clock.begin(&bounds);
        let mut pacer = ctx.plan.rate.map(|r| Pacer::new(r, bounds.start));
        let mut issued = 0u64;
        let mut inflight = 0usize;
        let mut now = Instant::now();
        deferred = None;
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
                sq.sync();
                let t_sub = Instant::now();
                while let Some(&slot) = free.last() {
                    if !may_issue(&bounds, t_sub, issued, false) {
                        break;
                    }
                    let op = match deferred.take() {
                        Some(d) => d,
                        None => {
                            if let Some(p) = &mut pacer {
                                if let Some(w) = p.wait_for(t_sub) {
                                    wait_limit = Some(w);
                                    break;
                                }
                                p.take(t_sub);
                            }
                            let op = ctx.gen.next_op();
                            let mut at = t_sub;
                            if let Some(th) = &place.throttle {
                                choose = choose.wrapping_add(1);
                                place
                                    .layout
                                    .map(op.dir, op.offset, op.len, choose, &mut ios);
                                let now_ns = since_t0(t_sub);
                                let start = ios
                                    .iter()
                                    .map(|m| th.reserve(m.member as usize, now_ns))
                                    .max()
                                    .unwrap_or(now_ns);
                                at = t0 + Duration::from_nanos(start);
                            }
                            Deferred {
                                dir: op.dir,
                                offset: op.offset,
                                len: op.len,
                                at,
                            }
                        }
                    };
                    if op.at > t_sub {
                        wait_limit = Some(op.at - t_sub);
                        deferred = Some(op);
                        break;
                    }
                    if place.throttle.is_none() {
                        choose = choose.wrapping_add(1);
                        place
                            .layout
                            .map(op.dir, op.offset, op.len, choose, &mut ios);
                    } else {
                        // Mapped when reserved; map again (same `choose`) in case a deferred
                        // op's vector was reused since.
                        place
                            .layout
                            .map(op.dir, op.offset, op.len, choose, &mut ios);
                    }
                    free.pop();
                    // SAFETY: slot < qd, so the slot's buffer lies inside `bufs`.
                    let buf = unsafe { base.add(slot as usize * max_bs) };
                    if op.dir == Direction::Write {
                        // SAFETY: the slot is free: the kernel is not using its buffer.
                        unsafe { buf.cast::<u64>().write_unaligned(op.offset ^ issued) };
                    }
                    // Each copy covers the logical range in order: its pieces' place in the
                    // buffer is the running sum of that copy's piece lengths.
                    let mut at_in_buf = [0usize; 4];
                    for m in &ios {
                        let within = &mut at_in_buf[m.copy as usize];
                        // SAFETY: pieces of one copy add up to op.len <= max_bs.
                        let piece = unsafe { buf.add(*within) };
                        *within += m.len as usize;
                        let fd = types::Fixed(m.member);
                        let off = place.starts[m.member as usize] + m.offset;
                        let sqe = match op.dir {
                            Direction::Read => {
                                opcode::ReadFixed::new(fd, piece, m.len, slot as u16)
                                    .offset(off)
                                    .build()
                            }
                            Direction::Write => {
                                opcode::WriteFixed::new(fd, piece, m.len, slot as u16)
                                    .offset(off)
                                    .build()
                            }
                        }
                        .user_data(
                            u64::from(slot) << 48 | u64::from(m.member) << 32 | u64::from(m.len),
                        );
                        // SAFETY: the SQ holds qd × max pieces entries and at most that many
                        // member I/Os are queued or in flight; the buffer outlives the I/O.
                        unsafe { sq.push(&sqe) }.expect("SQ sized for every piece");
                    }
                    slots[slot as usize] = Slot {
                        start: t_sub,
                        dir: op.dir,
                        offset: op.offset,
                        len: op.len,
                        pending: ios.len() as u32,
                    };
                    issued += 1;
                    inflight += 1;
                    if ios.is_empty() {
                        // Every copy degraded cannot happen (Layout::new refuses it); count
                        // the I/O as done rather than leave the slot pending forever.
                        inflight -= 1;
                        free.push(slot);
                    }
                }
                sq.sync();
            }
            if inflight == 0 {
                if !issuing {
                    break;
                }
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
                let ud = cqe.user_data();
                let (slot, member, len) =
                    ((ud >> 48) as usize, (ud >> 32 & 0xffff) as usize, ud as u32);
                let s = &mut slots[slot];
                let res = cqe.result();
                if res != len as i32 && failure.is_none() {
                    failure = Some(io_failure(&ctx, member, s, res));
                }
                clock.record_member(member, s.dir);
                s.pending -= 1;
                if s.pending == 0 {
                    let s = *s;
                    free.push(slot as u32);
                    inflight -= 1;
                    let lat = now.saturating_duration_since(s.start).as_nanos() as u64;
                    clock.record(s.dir, u64::from(s.len), lat);
                }
            }
        }
        clock.finish(now);
    }
    let _ = deferred;
    drop(tx);
    let _ = submitter.unregister_files();
    let _ = submitter.unregister_buffers();
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn io_failure(ctx: &WorkerCtx<'_>, member: usize, s: &Slot, res: i32) -> EngineError {
    let path = ctx.targets[member].info.path.clone();
    if res < 0 {
        EngineError::Io {
            path,
            dir: s.dir.name(),
            offset: s.offset,
            len: s.len,
            source: io::Error::from_raw_os_error(-res),
        }
    } else {
        EngineError::Short {
            path,
            dir: s.dir.name(),
            offset: s.offset,
            len: s.len,
            got: res as u32,
        }
    }
}
