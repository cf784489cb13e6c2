//! The log-writer stream beside a job (`run --log-bs`): one thread of its own, not one of the
//! workers, released by the job's gate with them. It writes `--log-bs` bytes sequentially
//! from the start of its region, wrapping at its end, each write followed by
//! `fdatasync(2)` — what a database's log writer does and what a commit waits on. It follows
//! the job's phases (ramp, then the measured window, the `--steady` ramp end included) and
//! counts only the measured window, into the same HDR histograms the workers use.
//!
//! Plain `pwrite(2)` and `fdatasync(2)` on the target's own descriptor: one write in flight
//! is the whole point, so a ring would add nothing but its own overhead.

use crate::error::EngineError;
use crate::pool::BufPool;
use crate::target::Target;
use crate::worker::{Gate, Pacer, PhaseBounds, Plan, RampEnd};
use iogauge_model::iopath::MemMode;
use iogauge_model::spec::{fmt_size, LogStream};
use iogauge_stats::{LatHist, Nanos, Phase};
use rand::SeedableRng;
use rand_core::RngCore;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// The first 8 bytes of every log block, followed by the write's sequence number: no two log
/// writes carry the same data (as the workers stamp theirs), and a log block is told from
/// the job's by its first bytes (as a WAL page by its header's magic).
pub const LOG_MAGIC: u64 = u64::from_le_bytes(*b"iogLOG\0\x01");

/// What the log writer did over the measured window.
#[derive(Debug, Default)]
pub struct LogOutcome {
    /// Where it wrote (`--log-target`, or the job's first target).
    pub target: PathBuf,
    /// Bytes of each write.
    pub bs: u64,
    /// Writes (each with its sync) that started in the measured window.
    pub writes: u64,
    /// From the measured window's start to the end of the last counted write.
    pub elapsed: Nanos,
    /// Latency of each write alone.
    pub write: LatHist,
    /// Latency of each `fdatasync` after its write.
    pub sync: LatHist,
}

/// Where the log writes: a target's file and a byte range of it.
pub(crate) struct LogRegion<'a> {
    file: &'a File,
    path: &'a Path,
    start: u64,
    len: u64,
    bs: u64,
    rate: Option<u64>,
}

/// The region of `log`: all of `own` (its `--log-target`, opened at `--log-size`), or the last
/// `--log-size` bytes of the job's first target, which the job's span leaves out
/// ([`crate::placement::layout`]).
pub(crate) fn region<'a>(
    log: &LogStream,
    targets: &'a [Target],
    own: Option<&'a Target>,
) -> Result<LogRegion<'a>, EngineError> {
    let t = match (own, targets.first()) {
        (Some(t), _) if !log.in_first_target() => t,
        (None, Some(t)) if log.in_first_target() => t,
        _ => {
            return Err(EngineError::Unsupported(
                "--log-target was given but not opened (or opened without --log-target); this is iogauge's bug, please report it".into(),
            ))
        }
    };
    let len = log.size.min(t.info.size);
    if len < log.bs || !t.info.writable {
        return Err(EngineError::Region {
            path: t.info.path.clone(),
            why: format!(
                "the log writer needs {} writable bytes for --log-size, and the target has {} ({}); use a larger target or a smaller --log-size",
                fmt_size(log.size),
                fmt_size(t.info.size),
                if t.info.writable { "writable" } else { "opened read-only" }
            ),
        });
    }
    Ok(LogRegion {
        file: &t.file,
        path: &t.info.path,
        start: t.info.size - len,
        len,
        bs: log.bs,
        rate: log.rate,
    })
}

/// What the log thread shares with the job.
pub(crate) struct LogCtx<'a> {
    pub region: LogRegion<'a>,
    /// The job's phases (its `ios` quota and rate are the workers', not the log's).
    pub plan: Plan,
    pub gate: &'a Gate<'a>,
    /// Raised when the job ends early (Ctrl-C, a failed worker); the log raises it when it fails.
    pub halt: &'a AtomicBool,
    /// Raised by the job once every worker has stopped (a job bounded by `--ios`).
    pub done: &'a AtomicBool,
    /// `--steady`: where the job announces the ramp's end.
    pub ramp_end: Option<&'a RampEnd>,
    pub seed: u64,
}

/// Starts the log thread in `scope`.
pub(crate) fn spawn<'scope, 'env>(
    scope: &'scope Scope<'scope, 'env>,
    ctx: LogCtx<'env>,
) -> Result<ScopedJoinHandle<'scope, Result<LogOutcome, EngineError>>, EngineError> {
    std::thread::Builder::new()
        .name("iogauge-log".into())
        .spawn_scoped(scope, move || {
            let halt = ctx.halt;
            let r = stream(ctx);
            if r.is_err() {
                halt.store(true, Ordering::Relaxed);
            }
            r
        })
        .map_err(EngineError::Thread)
}

/// The log thread: its buffer, the gate (passed even when the buffer could not be had, so
/// nobody waits forever), then each phase of the job's plan.
fn stream(ctx: LogCtx<'_>) -> Result<LogOutcome, EngineError> {
    let r = &ctx.region;
    let pool = BufPool::new(1, r.bs as usize, MemMode::Page);
    let mut out = LogOutcome {
        target: r.path.to_path_buf(),
        bs: r.bs,
        ..LogOutcome::default()
    };
    let Some(t0) = ctx.gate.wait() else {
        return Ok(out); // the job could not start every thread
    };
    let pool = pool.map_err(|source| EngineError::Memory {
        bytes: r.bs,
        source,
    })?;
    // SAFETY: the pool's one buffer (at least `bs` bytes, page-aligned for O_DIRECT) is this
    // thread's alone; no I/O is in flight on it outside `Writer::once`'s synchronous calls.
    let buf = unsafe { std::slice::from_raw_parts_mut(pool.ptr(0), r.bs as usize) };
    rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(ctx.seed).fill_bytes(buf);
    let mut w = Writer {
        region: r,
        buf,
        pos: 0,
        seq: 0,
    };
    for mut bounds in ctx.plan.phases(t0) {
        if let Some(end) = ctx.ramp_end {
            end.apply(&mut bounds, t0, ctx.plan.time);
        }
        phase(&ctx, &mut w, &mut bounds, t0, &mut out)?;
    }
    Ok(out)
}

/// One phase: write and sync back to back (or paced by `--log-rate`) until its deadline, the
/// job's halt or its end; in the measured window, count what started in it.
fn phase(
    ctx: &LogCtx<'_>,
    w: &mut Writer<'_>,
    b: &mut PhaseBounds,
    t0: Instant,
    out: &mut LogOutcome,
) -> Result<(), EngineError> {
    let mut pacer = ctx.region.rate.map(|r| Pacer::new(r as f64, b.start));
    loop {
        if let (Some(end), Phase::Ramp) = (ctx.ramp_end, b.phase) {
            end.apply(b, t0, None);
        }
        let now = Instant::now();
        let over = b.deadline.is_some_and(|d| now >= d);
        if over || ctx.halt.load(Ordering::Relaxed) || ctx.done.load(Ordering::Relaxed) {
            return Ok(());
        }
        if let Some(p) = &mut pacer {
            if let Some(wait) = p.wait_for(now) {
                // Short naps, so a deadline or a halt is seen in time.
                std::thread::sleep(wait.min(Duration::from_millis(20)));
                continue;
            }
            p.take(now);
        }
        let (write_ns, sync_ns, end) = w.once()?;
        if b.phase == Phase::Measure && now >= b.start {
            out.write.record(write_ns);
            out.sync.record(sync_ns);
            out.writes += 1;
            out.elapsed = Nanos::from_duration(end.saturating_duration_since(b.start));
        }
    }
}

/// The log's position in its region and the next write's sequence number.
struct Writer<'a> {
    region: &'a LogRegion<'a>,
    buf: &'a mut [u8],
    pos: u64,
    seq: u64,
}

impl Writer<'_> {
    /// One write at the log's position, then `fdatasync`; each one's latency in ns and when
    /// the sync returned. The position moves one block on, back to the start at the end.
    fn once(&mut self) -> Result<(u64, u64, Instant), EngineError> {
        let r = self.region;
        let offset = r.start + self.pos;
        self.buf[..8].copy_from_slice(&LOG_MAGIC.to_le_bytes());
        self.buf[8..16].copy_from_slice(&self.seq.to_le_bytes());
        let fail = |dir: &'static str, source: io::Error| EngineError::Io {
            path: r.path.to_path_buf(),
            dir,
            offset,
            len: r.bs as u32,
            source,
        };
        let t = Instant::now();
        let n = r
            .file
            .write_at(self.buf, offset)
            .map_err(|e| fail("log write", e))?;
        let written = Instant::now();
        if n as u64 != r.bs {
            return Err(EngineError::Short {
                path: r.path.to_path_buf(),
                dir: "log write",
                offset,
                len: r.bs as u32,
                got: n as u32,
            });
        }
        r.file.sync_data().map_err(|e| fail("log fdatasync", e))?;
        let synced = Instant::now();
        self.seq += 1;
        self.pos += r.bs;
        if self.pos + r.bs > r.len {
            self.pos = 0;
        }
        let ns = |a: Instant, b: Instant| b.saturating_duration_since(a).as_nanos() as u64;
        Ok((ns(t, written), ns(written, synced), synced))
    }
}
