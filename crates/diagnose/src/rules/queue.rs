//! **OS queue** — blktrace's btt splits a request's life into Q2D (queued → issued to the
//! driver) and D2C (issued → completed: the device); when Q2D rivals D2C, the time goes in
//! Linux's request queue, not in the device (nr_requests, the scheduler, a submitter deeper
//! than the device's queue). Read from the block-layer tracer's stages (`Derived::layers`);
//! without the tracer this rule says nothing (iostat's await mixes queue and device).
//!
//! Fires for a traced device under the targets when, in a direction with requests, either
//! - the queue time is ≥ half its device time and the queue's share (below) is ≥ 20%: the
//!   scheduler holds requests the device could take; or
//! - the time before the queue is ≥ the queue's and the device's together, its share ≥ 20%,
//!   and the device's requests are all in use ([`in_flight`](crate::view::LayerWindow::in_flight)
//!   ≥ 75% of `nr_requests`): bios wait for a free request (btt's Q2G), the submitter is
//!   deeper than the queue. The same wait with requests to spare is a throttle (cgroup
//!   limit, writeback throttling: [`super::throttle`]).
//!
//! Impact = the waiting time ÷ the application's latency (a run), or ÷ (pre-queue + queue +
//! device) for other results (no per-I/O application latency to divide by); for a database
//! run, × the share of DB time its sessions waited on that direction (reads: data-file
//! reads; writes: data-file writes and the log at commit, either engine's events): a queue
//! of writes no session waited on — the page cleaner's, another process's — explains none
//! of it (seen: 23 writes/s queued 0.5 ms beside a MariaDB read-only run, "35%"). A buffered
//! run's writes likewise (their writeback waits in no write's latency: "42%" before), and its
//! reads × the share of them that reached the device.
//!
//! Ground truth: 32 synchronous readers on a loop device with `nr_requests` 4 over a
//! read-IOPS-throttled loop device (`diagnose::io::queue_bound`); the queue-time branch is
//! unit-tested on constructed layers.

use crate::made::{ev, ratio, Made};
use crate::view::{Stages, Whole};
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const VS_DEVICE: f64 = 0.5;
pub const SHARE: f64 = 0.2;
/// The share of `nr_requests` in use at which the queue counts as full.
pub const FULL: f64 = 0.75;

/// The device `name`'s requests in use and its `nr_requests`, when its queue is full.
pub(crate) fn full(w: &Whole, name: &str) -> Option<(f64, u32)> {
    let l = w.layers.get(name)?;
    let nr = l.nr_requests?;
    let used = l.in_flight();
    (nr > 0 && used >= FULL * f64::from(nr)).then_some((used, nr))
}

/// The traced devices under the targets, each direction with requests: (name, "read"/"write",
/// its stages, the share of time its `part` explains).
pub(crate) fn stages_with_share(
    w: &Whole,
    part: fn(&Stages) -> f64,
) -> Vec<(&str, &'static str, Stages, f64)> {
    let app = w.work.map(|k| (k.read.lat_us, k.write.lat_us));
    let mut v = Vec::new();
    for (name, l) in &w.layers {
        if !(w.bottom.contains(name) || w.entry.contains(name)) {
            continue;
        }
        for (dir, s, app_us) in [
            ("read", l.read, app.map(|a| a.0)),
            ("write", l.write, app.map(|a| a.1)),
        ] {
            if s.req_s <= 0.0 {
                continue;
            }
            let below = match app_us {
                Some(a) if a > 0.0 => a.max(s.total_us()),
                _ => s.total_us(),
            };
            let waited = w.db_waits.map_or(1.0, |d| match dir {
                "read" => d.read,
                _ => d.write,
            });
            // A buffered run's writes land in the page cache: their writeback's time is in
            // no write's latency. Its reads wait only when they miss: for the share of the
            // workload's reads that reached the device.
            let sync = w.work.filter(|k| !k.direct).map_or(1.0, |k| match dir {
                "read" => ratio(s.req_s, k.read.iops).min(1.0),
                _ => 0.0,
            });
            v.push((
                name.as_str(),
                dir,
                s,
                ratio(part(&s), below) * waited * sync,
            ));
        }
    }
    v
}

pub fn check(_doc: &Document, w: &Whole) -> Vec<Finding> {
    let scheduler = stages_with_share(w, |s| s.queue_us)
        .into_iter()
        .filter(|(_, _, s, share)| s.queue_us >= VS_DEVICE * s.device_us && *share >= SHARE)
        .max_by(|a, b| a.3.total_cmp(&b.3));
    let no_request = held_before(w, true);
    match (scheduler, no_request) {
        (Some(a), Some(b)) if b.3 > a.3 => vec![waiting_for_requests(w, b)],
        (Some(a), _) => vec![queued(a)],
        (None, Some(b)) => vec![waiting_for_requests(w, b)],
        (None, None) => Vec::new(),
    }
}

pub(crate) type Candidate<'a> = (&'a str, &'static str, Stages, f64);

/// The traced direction whose time before the queue is largest among those where it is ≥ the
/// queue's and the device's together and ≥ 20% of the I/O time, on a device whose queue is
/// [`full`] (`full_queue`: the wait is for a free request, this rule's) or not (a throttle,
/// [`super::throttle`]'s).
pub(crate) fn held_before(w: &Whole, full_queue: bool) -> Option<Candidate<'_>> {
    stages_with_share(w, |s| s.pre_us)
        .into_iter()
        .filter(|(name, _, s, share)| {
            s.pre_us >= s.queue_us + s.device_us
                && *share >= SHARE
                && full(w, name).is_some() == full_queue
        })
        .max_by(|a, b| a.3.total_cmp(&b.3))
}

fn queued((name, dir, s, share): Candidate) -> Finding {
    Made {
        rule: "os-queue",
        layer: Layer::OsQueue,
        title: format!(
            "{name}'s {dir}s wait in Linux's request queue: {:.0} µs queued for {:.0} µs in the device ({:.0}% of the I/O time)",
            s.queue_us,
            s.device_us,
            share * 100.0
        ),
        impact: share,
        evidence: vec![
            ev(format!("{name} {dir} queue time (insert → issue)"), s.queue_us, "µs"),
            ev(format!("{name} {dir} device time (D2C)"), s.device_us, "µs"),
            ev("queue ÷ device time", ratio(s.queue_us, s.device_us), "×"),
            ev(format!("{name} {dir} requests"), s.req_s, "/s"),
        ],
        next: "the device has room the queue does not give it: check nr_requests and the scheduler (/sys/block/DEV/queue/), or lower the outstanding I/Os to what the device serves",
        source: "blktrace/btt: Q2D (queue) vs D2C (device) per request; USE method's saturation",
    }
    .into()
}

fn waiting_for_requests(w: &Whole, (name, dir, s, share): Candidate) -> Finding {
    let (used, nr) = full(w, name).unwrap_or_default();
    Made {
        rule: "os-queue-full",
        layer: Layer::OsQueue,
        title: format!(
            "{name}'s {dir}s wait for a free request: all {nr} of its queue's requests are in use, {:.0} µs waited before the queue for {:.0} µs in it and the device ({:.0}% of the I/O time)",
            s.pre_us,
            s.queue_us + s.device_us,
            share * 100.0
        ),
        impact: share,
        evidence: vec![
            ev(format!("{name} {dir} time before the queue (Q2G)"), s.pre_us, "µs"),
            ev(format!("{name} {dir} queue + device time"), s.queue_us + s.device_us, "µs"),
            ev(format!("{name} requests in use (Little's law)"), used, ""),
            ev(format!("{name} nr_requests"), f64::from(nr), ""),
            ev(format!("{name} {dir} requests"), s.req_s, "/s"),
        ],
        next: "more I/Os are outstanding than the queue holds: the device serves its nr_requests and the rest wait in the kernel; lower the outstanding I/Os, or raise /sys/block/DEV/queue/nr_requests if the device has room (its latency does not rise with depth)",
        source: "blktrace/btt: Q2G (waiting for a request) vs Q2D and D2C; Little's law on the queue's requests",
    }
    .into()
}
