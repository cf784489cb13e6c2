//! The one driver loop every worker runs, whatever its backend (io_uring or psync) and
//! whether or not a layout maps its I/Os onto members: phases (ramp, then measure), the
//! `--steady` ramp end, pacing, issuing into free slots, waiting, reaping, the interval
//! clock, and a failure that halts the worker after its I/Os in flight drained.
//!
//! A slot is one outstanding logical I/O and owns one buffer of the job's pool. A logical
//! I/O becomes one piece (plain) or several (a layout: split at unit boundaries, one copy
//! per mirror side for writes), and completes when its last piece does; its latency is
//! that of the slowest piece, as a mirrored write's is. `user_data` = slot (bits 48..) |
//! member (bits 32..48) | length (bits 0..32): the slot finds the logical I/O, the member
//! its per-target counter, the length tells a short transfer.
//!
//! Latency is submission to completion: the clock is read once before a batch of I/Os is
//! queued and once after a batch of completions is reaped (fio reads it once per reap too).

use crate::backend::{Backend, Piece};
use crate::error::EngineError;
use crate::layout::MemberIo;
use crate::placement::Placement;
use crate::pool::Slots;
use crate::psync::Psync;
use crate::uring::Uring;
use crate::worker::{may_issue, Clock, Pacer, PhaseBounds, WorkerCtx};
use iogauge_stats::{Direction, Phase};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::io;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
struct Slot {
    start: Instant,
    dir: Direction,
    offset: u64,
    len: u32,
    /// Pieces still in flight.
    pending: u32,
}

/// A logical I/O whose pieces may not start yet (`--member-iops`).
#[derive(Clone, Copy)]
struct Ready {
    dir: Direction,
    target: u32,
    offset: u64,
    len: u32,
    at: Instant,
    /// A replayed request's recorded time (timed replay): its latency counts from there.
    due: Option<Instant>,
}

/// Most pieces one logical I/O can become: 1 without a layout; under one, every copy, each
/// split at every unit boundary it crosses.
pub(crate) fn max_pieces(p: Option<&Placement>, max_bs: u64) -> usize {
    p.map_or(1, |p| {
        let unit = p
            .layout
            .spec()
            .unit()
            .unwrap_or(iogauge_model::spec::MIN_ALIGN);
        p.layout.copies() as usize * (max_bs.div_ceil(unit) as usize + 1)
    })
}

/// Maps logical I/Os onto pieces: the identity without a layout.
struct Mapper<'a> {
    place: Option<&'a Placement>,
    ios: Vec<MemberIo>,
    /// Rotates balanced mirror reads over the copies.
    choose: u64,
}

impl Mapper<'_> {
    /// Appends the pieces of `op` (in slot `slot`, buffer `buf`) to `out`; returns how many.
    #[inline]
    fn map(&mut self, op: &Ready, slot: u32, buf: *mut u8, out: &mut Vec<Piece>) -> u32 {
        let Some(place) = self.place else {
            out.push(Piece {
                dir: op.dir,
                target: op.target,
                offset: op.offset,
                len: op.len,
                buf,
                slot,
                user_data: user_data(slot, op.target, op.len),
            });
            return 1;
        };
        place
            .layout
            .map(op.dir, op.offset, op.len, self.choose, &mut self.ios);
        // Each copy covers the logical range in order: its pieces' place in the buffer is
        // the running sum of that copy's piece lengths.
        let mut at_in_buf = [0usize; 4];
        for m in &self.ios {
            let within = &mut at_in_buf[m.copy as usize];
            out.push(Piece {
                dir: op.dir,
                target: m.member,
                offset: place.starts[m.member as usize] + m.offset,
                len: m.len,
                // SAFETY: pieces of one copy add up to op.len, at most the buffer's length.
                buf: unsafe { buf.add(*within) },
                slot,
                user_data: user_data(slot, m.member, m.len),
            });
            *within += m.len as usize;
        }
        self.ios.len() as u32
    }

    /// When the pieces of a new logical I/O may start (`--member-iops`), reserving them.
    fn reserve(&mut self, op: &crate::offsets::Op, t0: Instant, now: Instant) -> Instant {
        self.choose = self.choose.wrapping_add(1);
        let Some(th) = self.place.and_then(|p| p.throttle.as_ref()) else {
            return now;
        };
        let place = self.place.expect("a throttle has a layout");
        place
            .layout
            .map(op.dir, op.offset, op.len, self.choose, &mut self.ios);
        let now_ns = now.saturating_duration_since(t0).as_nanos() as u64;
        let start = self
            .ios
            .iter()
            .map(|m| th.reserve(m.member as usize, now_ns))
            .max()
            .unwrap_or(now_ns);
        t0 + Duration::from_nanos(start)
    }
}

/// A timed replay submits the requests due within this of the first one together (a
/// submission costs more than a microsecond here; bursts the kernel dispatched from a plugged
/// list come well under one apart).
const BATCH: Duration = Duration::from_micros(2);

/// A timed replay spins, rather than sleeps, to a request due sooner than this.
const SPIN: Duration = Duration::from_micros(200);

#[inline]
fn user_data(slot: u32, member: u32, len: u32) -> u64 {
    u64::from(slot) << 48 | u64::from(member) << 32 | u64::from(len)
}

/// One worker thread: fills its buffers, sets up its backend, waits at the gate with the
/// others (even when its setup failed, so nobody waits forever), then drives.
pub(crate) fn worker(mut ctx: WorkerCtx<'_>) -> Result<(), EngineError> {
    let qd = ctx.qd as usize;
    let bufs = ctx.pool.slots(ctx.id * qd, qd);
    bufs.fill_random(&mut Xoshiro256PlusPlus::seed_from_u64(
        ctx.spec.seed ^ ctx.id as u64,
    ));
    let targets = ctx.targets;
    if ctx.script.is_some() {
        timer_slack_off();
    }
    match ctx.uring {
        Some(choice) => {
            let entries = qd * max_pieces(ctx.placement, ctx.spec.bs.max());
            let setup = Uring::new(entries as u32, targets, &bufs, choice);
            let Some(t0) = ctx.gate.wait() else {
                return Ok(()); // the job could not start every worker
            };
            let mut ring = setup?;
            drive(&mut ctx, &mut ring, &bufs, t0)
        }
        None => {
            let Some(t0) = ctx.gate.wait() else {
                return Ok(());
            };
            drive(&mut ctx, &mut Psync::new(targets), &bufs, t0)
        }
    }
}

/// A worker's I/Os: its slots (one outstanding logical I/O each), which are free, how many
/// are in flight, the first failure, and the pieces of the next submission.
struct InFlight<'a> {
    slots: Vec<Slot>,
    free: Vec<u32>,
    inflight: usize,
    failure: Option<EngineError>,
    mapper: Mapper<'a>,
    batch: Vec<Piece>,
    /// Members of the layout (0 without one): per-member counts are kept only with one.
    members: usize,
}

/// What one phase (ramp or measured window) has issued, and what waits to be.
struct PhaseState {
    issued: u64,
    /// A replay's script has no more requests.
    exhausted: bool,
    /// A logical I/O whose pieces may not start yet (`--member-iops`).
    deferred: Option<Ready>,
    pacer: Option<Pacer>,
}

impl<'a> InFlight<'a> {
    fn new(ctx: &WorkerCtx<'a>, qd: usize, t0: Instant) -> Self {
        let max_bs = ctx.spec.bs.max();
        let slot = Slot {
            start: t0,
            dir: Direction::Read,
            offset: 0,
            len: 0,
            pending: 0,
        };
        InFlight {
            slots: vec![slot; qd],
            free: (0..qd as u32).rev().collect(),
            inflight: 0,
            failure: None,
            mapper: Mapper {
                place: ctx.placement,
                ios: Vec::with_capacity(max_pieces(ctx.placement, max_bs)),
                choose: ctx.id as u64,
            },
            batch: Vec::with_capacity(qd * max_pieces(ctx.placement, max_bs)),
            members: ctx.placement.map_or(0, |p| p.layout.members()),
        }
    }

    /// Fills free slots with new I/Os into `batch` while the phase may issue; returns how
    /// long to wait at most when pacing or a member throttle holds the next one back.
    #[inline]
    fn issue(
        &mut self,
        ctx: &mut WorkerCtx<'_>,
        bufs: &Slots<'_>,
        bounds: &PhaseBounds,
        t0: Instant,
        ph: &mut PhaseState,
    ) -> Option<Duration> {
        self.batch.clear();
        let t_sub = Instant::now();
        // What may go now: what is due; once a replayed request is in, what is due within
        // BATCH of it too. Recorded bursts (a plugged list the kernel dispatched back to
        // back) stay bursts, where a submission each would space them by a system call's
        // cost; submitted together, the kernel plugs them alike.
        let mut limit = t_sub;
        let mut batch_open = false;
        while let Some(&slot) = self.free.last() {
            if !may_issue(bounds, t_sub, ph.issued, false) {
                break;
            }
            let op = match ph.deferred.take() {
                Some(d) => d,
                None if ctx.script.is_some() => {
                    let cursor = ctx.script.as_deref_mut().expect("just checked");
                    let Some((op, due)) = cursor.next(bounds.start) else {
                        ph.exhausted = true;
                        break;
                    };
                    Ready {
                        dir: op.dir,
                        target: op.target,
                        offset: op.offset,
                        len: op.len,
                        at: due.unwrap_or(t_sub),
                        due,
                    }
                }
                None => {
                    if let Some(p) = &mut ph.pacer {
                        if let Some(w) = p.wait_for(t_sub) {
                            return Some(w);
                        }
                        p.take(t_sub);
                    }
                    let op = ctx.gen.next_op();
                    Ready {
                        dir: op.dir,
                        target: op.target,
                        offset: op.offset,
                        len: op.len,
                        at: self.mapper.reserve(&op, t0, t_sub),
                        due: None,
                    }
                }
            };
            if op.at > limit {
                ph.deferred = Some(op);
                return Some(op.at - t_sub);
            }
            self.free.pop();
            let buf = bufs.ptr(slot as usize);
            if op.dir == Direction::Write {
                // Stamp the offset into the block so no two writes carry the same data
                // (defeats deduplication, as fio's scramble_buffers does).
                // SAFETY: the slot is free, so no I/O is using its buffer.
                unsafe { buf.cast::<u64>().write_unaligned(op.offset ^ ph.issued) };
            }
            let pieces = self.mapper.map(&op, slot, buf, &mut self.batch);
            if let Some(cursor) = ctx.script.as_deref_mut() {
                cursor.issued(op.due, t_sub);
                if let (Some(due), false) = (op.due, batch_open) {
                    batch_open = true;
                    limit = limit.max(due + BATCH);
                }
            }
            self.slots[slot as usize] = Slot {
                start: op.due.unwrap_or(t_sub),
                dir: op.dir,
                offset: op.offset,
                len: op.len,
                pending: pieces,
            };
            ph.issued += 1;
            if pieces == 0 {
                // Every copy degraded cannot happen (Layout::new refuses it); count the I/O
                // as done rather than leave the slot pending forever.
                self.free.push(slot);
            } else {
                self.inflight += 1;
            }
        }
        None
    }

    /// One completed piece: a logical I/O completes with its last piece, its latency that of
    /// the slowest (as a mirrored write's is); a short or failed piece is the failure.
    #[inline]
    fn complete(
        &mut self,
        ud: u64,
        res: i32,
        now: Instant,
        clock: &mut Clock<'_>,
        ctx: &WorkerCtx<'_>,
    ) {
        let (slot, member, len) = ((ud >> 48) as usize, (ud >> 32 & 0xffff) as usize, ud as u32);
        let s = &mut self.slots[slot];
        if res != len as i32 && self.failure.is_none() {
            self.failure = Some(io_failure(ctx, member, s, res));
        }
        if self.members > 0 {
            clock.record_member(member, s.dir);
        }
        s.pending -= 1;
        if s.pending == 0 {
            self.free.push(slot as u32);
            self.inflight -= 1;
            let lat = now.saturating_duration_since(s.start).as_nanos() as u64;
            clock.record(s.dir, u64::from(s.len), lat);
        }
    }
}

/// Runs one worker to the end of its plan on `backend`, with `bufs` as its slots' buffers.
/// `t0` is the job's time zero (the gate has been passed).
pub(crate) fn drive<B: Backend>(
    ctx: &mut WorkerCtx<'_>,
    backend: &mut B,
    bufs: &Slots<'_>,
    t0: Instant,
) -> Result<(), EngineError> {
    let tx = ctx.tx.clone();
    let mut io = InFlight::new(ctx, bufs.count(), t0);
    let mut clock = Clock::new(ctx.id, t0, ctx.plan.every, &tx).with_members(io.members);
    for mut bounds in ctx.plan.phases(t0) {
        if let Some(r) = ctx.ramp_end {
            r.apply(&mut bounds, t0, ctx.plan.time);
        }
        clock.begin(&bounds);
        let mut ph = PhaseState {
            issued: 0,
            exhausted: false,
            deferred: None,
            pacer: ctx.plan.rate.map(|r| Pacer::new(r, bounds.start)),
        };
        let mut now = Instant::now();
        loop {
            if let Some(r) = ctx.ramp_end {
                if bounds.phase == Phase::Ramp && r.apply(&mut bounds, t0, None) {
                    clock.set_deadline(bounds.deadline);
                }
            }
            let halt = io.failure.is_some() || ctx.halt.load(Ordering::Relaxed);
            let issuing = may_issue(&bounds, now, ph.issued, halt) && !ph.exhausted;
            let mut wait_limit = None;
            // What a timed replay's wait counts from (the submission below takes µs).
            let asked = ctx.script.is_some().then(Instant::now);
            if issuing && !io.free.is_empty() {
                wait_limit = io.issue(ctx, bufs, &bounds, t0, &mut ph);
                backend.queue(&io.batch);
            }
            // A timed replay's next request due within SPIN: submit what is queued and spin
            // to its time (a sleep's wake-up takes tens of µs here, and recorded requests
            // come µs apart).
            let spin = ctx.script.is_some() && wait_limit.is_some_and(|w| w < SPIN);
            // ... and wakes from a longer wait half a SPIN early, to spin the rest.
            if ctx.script.is_some() && !spin {
                wait_limit = wait_limit.map(|w| w - SPIN / 2);
            }

            if io.inflight == 0 || spin {
                if !issuing && io.inflight == 0 {
                    break;
                }
                if let Some(w) = wait_limit {
                    if spin {
                        if io.inflight > 0 {
                            backend.wait(Some(Duration::ZERO))?;
                        }
                        let until = asked.unwrap_or(now) + w;
                        while Instant::now() < until {
                            std::hint::spin_loop();
                        }
                    } else {
                        // Paced and nothing in flight: sleep until the next I/O is due.
                        std::thread::sleep(w);
                    }
                }
                now = Instant::now();
                if io.inflight == 0 {
                    continue;
                }
                clock.tick(now);
                backend.reap(|ud, res| io.complete(ud, res, now, &mut clock, ctx));
                continue;
            }
            backend.wait(wait_limit)?;
            now = Instant::now();
            clock.tick(now);
            backend.reap(|ud, res| io.complete(ud, res, now, &mut clock, ctx));
        }
        clock.finish(now);
    }
    match io.failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Timers of this thread fire when due, not up to the default 50 µs later (`prctl(2)`
/// `PR_SET_TIMERSLACK`): a timed replay's waits are for requests recorded microseconds apart.
fn timer_slack_off() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer and touches only this thread's slack; a
    // refusal leaves the default slack, which only blurs the timing.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

fn io_failure(ctx: &WorkerCtx<'_>, member: usize, s: &Slot, res: i32) -> EngineError {
    // Under a layout the error names the member and the logical offset; without one the
    // member is the target and the offset its own.
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
