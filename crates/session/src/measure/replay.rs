//! `iogauge replay`: a trace's recorded reads and writes issued on the targets, timed (open
//! loop, at their recorded times, or scaled) or as fast as the depth allows, recorded like
//! any run (devices, CPU, the per-layer split, findings) with the replay's own figures: how
//! many went and how late. The trace's devices and offsets are mapped onto the targets here
//! ([`ReplayMap`]); flushes and discards are not issued and are counted as skipped.

use super::capture;
use super::Finished;
use crate::finish::Ending;
use crate::traces::Trace;
use crate::{JobSampler, Session};
use iogauge_engine::document::run_document;
use iogauge_engine::replay::{Script, ScriptOp};
use iogauge_engine::Target;
use iogauge_iolog::{Fidelity, Op, Request};
use iogauge_model::run::IntervalReport;
use iogauge_model::spec::{BlockShare, BlockSplit, JobSpec, Pace, Replay, ReplayMap};
use iogauge_model::Document;
use iogauge_stats::{Direction, Interval};
use iogauge_trace::capture::CaptureFilter;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Slots of a timed replay at least: the device's queue, not the replay's, should limit how
/// many recorded requests are in flight.
const TIMED_SLOTS: u32 = 256;
/// A timed replay's buffers at most (slots × the longest request).
const TIMED_MEMORY: u64 = 256 << 20;

/// The job that replays `trace` as `pace` says onto targets mapped by `map`: `base`'s I/O
/// setup and interval, one io_uring worker, the recorded reads and writes as its I/O count,
/// their sizes as its block split. `depth`: `--depth` for a fast replay (default: the
/// recorded mean of requests in flight, at least 1).
pub fn job_of(
    trace: &Trace,
    mut base: JobSpec,
    pace: Pace,
    map: ReplayMap,
) -> Result<JobSpec, String> {
    let s = &trace.summary;
    let requests = s.reads + s.writes;
    if requests == 0 {
        return Err(format!(
            "{}: no reads or writes to replay ({} requests: {} flushes, {} discards)",
            trace.name(),
            s.requests,
            s.flushes,
            s.discards
        ));
    }
    let max_len = u64::from(trace.max_len).max(512);
    base.rw = iogauge_model::spec::RwMode::RandRw;
    base.read_pct = (s.read_share.unwrap_or(0.0) * 100.0).round() as u8;
    base.bs = split_of(s, max_len);
    base.workers = 1;
    base.qd = match pace {
        Pace::Fast { depth } => depth,
        Pace::Timed { .. } => {
            let seen = u32::from(s.in_flight_max.unwrap_or(0)) * 4;
            let most = (TIMED_MEMORY / max_len).max(1) as u32;
            seen.max(TIMED_SLOTS).min(most)
        }
    };
    if let Pace::Timed { .. } = pace {
        // Requests due together go in one submission, which the kernel plugs as it did
        // the recorded bursts; one submission each would space them out.
        base.io.submit_batch = 0;
    }
    base.time = None;
    base.ios = Some(requests);
    base.ramp = Duration::ZERO;
    base.rate_iops = None;
    base.steady = None;
    base.replay = Some(Replay {
        source: trace.name(),
        format: trace.format.into(),
        pace,
        map,
        requests,
        skipped: s.flushes + s.discards,
    });
    Ok(base)
}

/// The recorded depth a fast replay keeps by default: the mean of requests in flight when
/// each was issued (itself included), rounded, at least 1; 1 when the trace does not say.
pub fn recorded_depth(trace: &Trace) -> u32 {
    trace
        .summary
        .in_flight_mean
        .map_or(1, |m| (m.round() as u32).clamp(1, 4096))
}

/// The trace's sizes as a block split (shares of its reads and writes, in whole percent;
/// the longest request is always in it, so the buffers hold it).
fn split_of(s: &iogauge_iolog::Summary, max_len: u64) -> BlockSplit {
    let total: u64 = s.sizes.iter().map(|c| c.requests).sum::<u64>().max(1);
    let mut shares: Vec<BlockShare> = s
        .sizes
        .iter()
        .filter(|c| c.size.0 > 0)
        .map(|c| BlockShare {
            bs: c.size.0,
            pct: (c.requests * 100 / total) as u8,
        })
        .filter(|b| b.pct > 0)
        .collect();
    if !shares.iter().any(|b| b.bs >= max_len) {
        shares.push(BlockShare {
            bs: max_len,
            pct: 0,
        });
    }
    BlockSplit(shares)
}

/// Where recorded requests land: each target's size and the alignment O_DIRECT needs on it.
#[derive(Clone, Debug)]
struct Room {
    size: u64,
    align: u64,
}

/// The logical block of the disk under a target (`queue/logical_block_size`), else 4 KiB.
fn alignment(t: &Target) -> u64 {
    let Some(dev) = &t.info.device else {
        return 4096;
    };
    ["queue", "../queue"]
        .iter()
        .find_map(|q| {
            std::fs::read_to_string(format!("/sys/class/block/{dev}/{q}/logical_block_size"))
                .ok()?
                .trim()
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(4096)
}

/// A recorded read or write on the targets: device `d` on target 0 (modulo) or `d mod n`
/// (devices), its offset modulo what the target holds past its length, aligned down, its
/// length rounded up to the alignment; `None` for a flush or discard, or a request longer
/// than its target.
fn mapped(r: &Request, rooms: &[Room], map: ReplayMap) -> Option<ScriptOp> {
    let dir = match r.op {
        Op::Read => Direction::Read,
        Op::Write => Direction::Write,
        Op::Flush | Op::Discard => return None,
    };
    let target = match map {
        ReplayMap::Modulo => 0,
        ReplayMap::Devices => usize::from(r.device) % rooms.len(),
    };
    let room = &rooms[target];
    let len = u64::from(r.len).div_ceil(room.align) * room.align;
    if len == 0 || len > room.size {
        return None;
    }
    let span = room.size - len + 1;
    let offset = r.offset % span / room.align * room.align;
    Some(ScriptOp {
        at: Duration::from_nanos(r.at_ns),
        dir,
        target: target as u32,
        offset,
        len: len as u32,
    })
}

/// The replay's own requests on the disks under `targets`, captured while it runs (its
/// process's and its cgroup's), or why they cannot be.
fn own_requests(targets: &[Target]) -> Result<capture::Running, String> {
    let disks = capture::disks_of(targets.iter().map(|t| t.info.path.as_path()))?;
    let plan = capture::CapturePlan {
        disks,
        filter: CaptureFilter {
            cgroups: crate::layers::job_cgroups(),
            pids: vec![std::process::id()],
            files: Vec::new(),
        },
        kept: "the replay's own requests".into(),
        follow: Vec::new(),
        time: None,
        ring_bytes: iogauge_trace::capture::RING_BYTES,
    };
    capture::start(&plan).map_err(|e| format!("{e:#}"))
}

/// `s` over `span_ns`, the time from its first request to its last: a capture's duration
/// holds the idle time before and after, a replay's own requests are timed from its first.
fn over_span(mut s: iogauge_iolog::Summary, span_ns: u64) -> iogauge_iolog::Summary {
    if span_ns > 0 {
        s.duration_s = span_ns as f64 / 1e9;
        s.iops = Some(iogauge_stats::Iops::per(s.reads + s.writes, s.duration_s));
    }
    s
}

/// Runs the replay of `trace` by `spec` (from [`job_of`]) on `targets` alone, and returns
/// the document to store.
pub fn replay(
    session: &mut Session,
    spec: &JobSpec,
    targets: &[Target],
    trace: &Trace,
    show: &mut dyn FnMut(f64, &IntervalReport),
) -> anyhow::Result<Finished> {
    let stop = session.stop().clone();
    let replay = spec.replay.as_ref().expect("a replay's job");
    let rooms: Vec<Room> = targets
        .iter()
        .map(|t| Room {
            size: t.info.size,
            align: alignment(t),
        })
        .collect();
    let (map, pace) = (replay.map, replay.pace);
    let requests = trace.requests();
    let broken = requests.error();
    let ops = requests.filter_map(move |r| mapped(&r, &rooms, map));
    let script = Script {
        ops: Box::new(ops),
        pace,
    };
    let preflight = iogauge_probe::preflight(
        &targets
            .iter()
            .map(|t| (t.info.path.clone(), t.info.size))
            .collect::<Vec<_>>(),
    );
    let sampler = JobSampler::of(targets, session.tracing());
    // Started after the sampler, which put the job in its own cgroup; whatever --no-trace
    // says (which turns off the per-layer split only): a replay is judged on its own
    // requests, and capturing them costs a timed replay nothing measurable, where the
    // per-layer tracer's reading delays its submissions on a small machine (issue 48's
    // note).
    let own = own_requests(targets);
    let ended = AtomicBool::new(false);
    let ((outcome, recorded), replayed) = std::thread::scope(|scope| {
        let watching = own
            .map(|running| scope.spawn(|| running.summarise(&ended, |first, last| last - first)));
        let out = sampler.run(spec, |started| {
            let on_interval = &mut |iv: &Interval| {
                let (mut rep, at) = (IntervalReport::of(iv), iv.end.as_secs_f64());
                rep.system = sampler.live_system(iv);
                session.publish(&rep, at);
                show(at, &rep);
            };
            iogauge_engine::replay_telling(spec, targets, script, &stop, on_interval, started)
        });
        ended.store(true, Ordering::Relaxed);
        let replayed = watching.map(|h| {
            h.join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
                .map_err(|e| format!("{e:#}"))
        });
        (out, replayed.and_then(|r| r))
    });
    let (mut report, histograms) = run_document(spec.clone(), targets, outcome?, recorded)?;
    report.preflight = Some(preflight);
    if let Some(rp) = &mut report.replay {
        let original = over_span(trace.summary.clone(), trace.span_ns);
        match replayed {
            Ok((summary, dropped)) => {
                if dropped > 0 {
                    report.warnings.push(format!(
                        "{dropped} of the replay's own requests were not captured (the capture's ring was full): its figures on the disks miss them"
                    ));
                }
                rp.fidelity = Some(Fidelity::between(&original, &summary));
                rp.replayed = Some(Box::new(summary));
            }
            Err(why) => rp.replayed_unknown = Some(why),
        }
        rp.recorded = Some(Box::new(original));
    }
    if let Some(why) = broken.lock().ok().and_then(|mut e| e.take()) {
        report.warnings.push(format!(
            "the trace stopped being readable during the replay ({why}): only its requests before that went"
        ));
    }
    if let Some(rp) = &report.replay {
        if let Some(late) = rp.late.filter(|&l| l > 0) {
            report.warnings.push(format!(
                "{late} of {} recorded requests went more than {} ms after their time: the targets (or this machine) did not keep the recorded pace, and their latency includes the wait",
                rp.issued,
                rp.late_after_ms.unwrap_or_default()
            ));
        }
    }
    let mut doc = Document::from(report);
    doc.warnings_mut().extend(sampler.layers_warning());
    let ending = Ending::of(&doc);
    Ok(Finished::lead(doc, histograms, ending))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogauge_iolog::Flags;

    fn req(op: Op, device: u16, offset: u64, len: u32) -> Request {
        Request {
            at_ns: 5,
            device,
            offset,
            len,
            op,
            flags: Flags::NONE,
            issuer: Request::UNKNOWN_ISSUER,
            in_flight: 0,
        }
    }

    #[test]
    fn requests_land_modulo_the_target_aligned_and_whole() {
        let rooms = [
            Room {
                size: 1 << 20,
                align: 4096,
            },
            Room {
                size: 2 << 20,
                align: 512,
            },
        ];
        let m = |r| mapped(&r, &rooms, ReplayMap::Devices);
        // Inside the first target: as recorded.
        let op = m(req(Op::Read, 0, 8192, 4096)).unwrap();
        assert_eq!((op.target, op.offset, op.len), (0, 8192, 4096));
        // Past its end: modulo, aligned down, never past the end.
        let op = m(req(Op::Write, 2, (5 << 20) + 1536, 1024)).unwrap();
        assert_eq!(op.target, 0, "device 2 of 2 targets");
        assert_eq!(op.len, 4096, "rounded up to the 4 KiB alignment");
        assert_eq!(op.offset % 4096, 0);
        assert!(op.offset + u64::from(op.len) <= 1 << 20);
        // Device 1 on target 1, 512-aligned.
        let op = m(req(Op::Read, 1, 3 << 20, 512)).unwrap();
        assert_eq!(op.target, 1);
        assert!(op.offset + 512 <= 2 << 20 && op.offset % 512 == 0);
        // Flushes, discards and requests longer than the target are not issued.
        assert!(m(req(Op::Flush, 0, 0, 0)).is_none());
        assert!(m(req(Op::Discard, 0, 0, 4096)).is_none());
        assert!(m(req(Op::Read, 0, 0, 2 << 20)).is_none());
        // Modulo: every device on the first target.
        let op = mapped(&req(Op::Read, 1, 0, 4096), &rooms, ReplayMap::Modulo).unwrap();
        assert_eq!(op.target, 0);
    }
}
