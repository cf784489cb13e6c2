//! **Throttled before the queue** — time an I/O spends after the application submitted it
//! and before the block layer queued it: a cgroup I/O limit (blk-throttle, io.max), writeback
//! throttling, bio splitting. btt's Q2G/G2I stages before Q2D; cgroup v1's
//! `blkio.throttle.*` and v2's `io.max` hold bios exactly there.
//!
//! - With the block-layer tracer: a traced device whose pre-queue time is ≥ the rest of the
//!   request's time below it (queue + device) and ≥ 20% of the I/O time. Impact = pre-queue
//!   time ÷ the application's latency (run) or ÷ (pre + queue + device).
//! - Without it, or when the traced stages show nothing (blk-throttle holds a bio before
//!   `block_bio_queue`, so its time is in no stage), for a run only, honest about what it
//!   cannot see: the application's latency
//!   ≥ 10× the devices' await (plus the traced time before their queues, when traced) and
//!   ≥ 2 ms above it (smaller gaps come from a VM disk's
//!   stalls and a loaded machine's scheduling delays: a mirror:3 run on this shared VM drew
//!   the finding at the first thresholds, 3× and 0.5 ms), the devices completed at least half the
//!   workload's I/Os (not a cache), and the CPU cannot be the limit ([`super::cpu::plausible`]
//!   at 80%: else the time above the devices may be the CPU's). The finding says a limit above the devices is *likely* and
//!   names the tracer as the way to tell. Impact = (application latency − await) ÷
//!   application latency. Not beside a log writer (`run --log-bs`): its syncs' cache flushes
//!   hold the job's requests above the queue with no limit at all.
//!
//! Ground truth: a stripe over two loop devices, one with cgroup v1
//! `blkio.throttle.read_iops_device` (`diagnose::member_throttled`); the traced scenario
//! (a read-IOPS limit on the target's device) comes with the tracer.

use super::queue::held_before;
use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const ABOVE_AWAIT: f64 = 10.0;
pub const MIN_GAP_US: f64 = 2000.0;
pub const CPU_QUIET_PCT: f64 = 80.0;
const SOURCE: &str =
    "blktrace/btt: time before the request queue (Q2G, G2I); cgroup blkio throttling";
const NEXT: &str = "look for a cgroup I/O limit on the workload or the device (io.max, blkio.throttle.*), writeback throttling (wbt_lat_usec) or a VM/cloud IOPS cap; the device itself is not the limit";

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    if !w.layers.is_empty() {
        let seen = traced(w);
        if !seen.is_empty() {
            return seen;
        }
        // blk-throttle holds a bio before `block_bio_queue` fires, so its time is in no
        // traced stage: the devices' await against the application's latency still shows it.
    }
    match doc {
        // A log writer's syncs flush the device's cache, and the job's requests wait behind
        // each flush: time above the queue that no limit makes, while the workload's figures
        // leave the log's I/O out. The untraced inference does not hold there.
        Document::Run(r) if r.log.is_none() => untraced(w).into_iter().collect(),
        _ => Vec::new(),
    }
}

fn traced(w: &Whole) -> Vec<Finding> {
    // With every request in use the wait is for one ([`super::queue`]).
    let Some((name, dir, s, share)) = held_before(w, false) else {
        return Vec::new();
    };
    vec![Made {
        rule: "throttled",
        layer: Layer::Throttle,
        title: format!(
            "{name}'s {dir}s are held before the request queue: {:.0} µs there for {:.0} µs queued and in the device ({:.0}% of the I/O time)",
            s.pre_us,
            s.queue_us + s.device_us,
            share * 100.0
        ),
        impact: share,
        evidence: vec![
            ev(format!("{name} {dir} time before the queue"), s.pre_us, "µs"),
            ev(format!("{name} {dir} queue time"), s.queue_us, "µs"),
            ev(format!("{name} {dir} device time"), s.device_us, "µs"),
            ev(format!("{name} {dir} requests"), s.req_s, "/s"),
        ],
        next: NEXT,
        source: SOURCE,
    }
    .into()]
}

fn untraced(w: &Whole) -> Option<Finding> {
    let k = w.work?;
    let app_us = k.lat_us();
    // Time the tracer saw before the queues is below the application too, though not in
    // await: a full queue's waiters (io_uring's io-wq threads asleep for a request) are
    // [`super::queue`]'s, not a limit above the queue.
    let pre_us = w.entry_pre_queue_us();
    let await_us = w.entry_await_ms()? * 1e3 + pre_us;
    let dev_ios: f64 = w.entry_rates().iter().map(|d| d.r_s + d.w_s).sum();
    let busiest = w.busiest_cpu().map_or(0.0, |(_, c)| c.working());
    if app_us < ABOVE_AWAIT * await_us
        || app_us - await_us < MIN_GAP_US
        || dev_ios < 0.5 * (k.read.iops + k.write.iops)
        || super::cpu::plausible(w, CPU_QUIET_PCT)
    {
        return None;
    }
    let share = ratio(app_us - await_us, app_us);
    Some(
        Made {
            rule: "throttled",
            layer: Layer::Throttle,
            title: format!(
                "I/Os spent {:.0}% of their time above the devices' queues, neither the devices nor the CPU limiting them: likely held by a limit before the queue (a cgroup I/O limit); the block-layer tracer would split it",
                share * 100.0
            ),
            impact: share,
            evidence: vec![
                ev("application latency", app_us / 1e3, "ms"),
                ev("devices' await (queue and device)", (await_us - pre_us) / 1e3, "ms"),
                ev("time before the devices' queues (traced)", pre_us / 1e3, "ms"),
                ev("busiest CPU busy", busiest, "%"),
                ev("device I/Os per workload I/O", ratio(dev_ios, k.read.iops + k.write.iops), "×"),
            ],
            next: NEXT,
            source: SOURCE,
        }
        .into(),
    )
}
