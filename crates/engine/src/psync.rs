//! The psync backend: each thread issues one pread(2)/pwrite(2) at a time, so a worker with
//! `--qd N` becomes N threads (the same number of outstanding I/Os as io_uring at QD N).
//! The fallback where io_uring is unavailable, and the reference the io_uring path is checked
//! against.

use crate::buf::AlignedBuf;
use crate::error::EngineError;
use crate::worker::{may_issue, Clock, Pacer};
use crate::WorkerCtx;
use iogauge_stats::{Direction, Phase};
use rand::SeedableRng;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;
use std::time::Instant;

pub(crate) fn run(mut ctx: WorkerCtx<'_>) -> Result<(), EngineError> {
    let mut buf = AlignedBuf::new(ctx.spec.bs.max() as usize);
    buf.fill_random(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(
        ctx.spec.seed ^ ctx.id as u64,
    ));
    let t0 = ctx.gate.wait();
    let tx = ctx.tx.clone();
    let mut clock = Clock::new(ctx.id, t0, ctx.plan.every, &tx);
    for mut bounds in ctx.plan.phases(t0) {
        if let Some(r) = ctx.ramp_end {
            r.apply(&mut bounds, t0, ctx.plan.time);
        }
        clock.begin(&bounds);
        let mut pacer = ctx.plan.rate.map(|r| Pacer::new(r, bounds.start));
        let mut issued = 0u64;
        let mut now = Instant::now();
        loop {
            if let Some(r) = ctx.ramp_end {
                if bounds.phase == Phase::Ramp && r.apply(&mut bounds, t0, None) {
                    clock.set_deadline(bounds.deadline);
                }
            }
            if !may_issue(&bounds, now, issued, ctx.halt.load(Ordering::Relaxed)) {
                break;
            }
            if let Some(p) = &mut pacer {
                if let Some(w) = p.wait_for(now) {
                    std::thread::sleep(w);
                    now = Instant::now();
                    continue;
                }
                p.take(now);
            }
            let op = ctx.gen.next_op();
            let len = op.len as usize;
            let file = &ctx.targets[op.target as usize].file;
            let start = Instant::now();
            let res = match op.dir {
                Direction::Read => file.read_at(&mut buf.as_mut_slice()[..len], op.offset),
                Direction::Write => {
                    buf.as_mut_slice()[..8].copy_from_slice(&(op.offset ^ issued).to_ne_bytes());
                    file.write_at(&buf.as_slice()[..len], op.offset)
                }
            };
            now = Instant::now();
            issued += 1;
            clock.tick(now);
            let path = || ctx.targets[op.target as usize].info.path.clone();
            match res {
                Ok(n) if n == len => clock.record(
                    op.dir,
                    len as u64,
                    now.saturating_duration_since(start).as_nanos() as u64,
                ),
                Ok(n) => {
                    clock.finish(now);
                    return Err(EngineError::Short {
                        path: path(),
                        dir: op.dir.name(),
                        offset: op.offset,
                        len: op.len,
                        got: n as u32,
                    });
                }
                Err(source) => {
                    clock.finish(now);
                    return Err(EngineError::Io {
                        path: path(),
                        dir: op.dir.name(),
                        offset: op.offset,
                        len: op.len,
                        source,
                    });
                }
            }
        }
        clock.finish(now);
    }
    Ok(())
}
