//! **OS queue** — blktrace's btt splits a request's life into Q2D (queued → issued to the
//! driver) and D2C (issued → completed: the device); when Q2D rivals D2C, the time goes in
//! Linux's request queue, not in the device (nr_requests, the scheduler, a submitter deeper
//! than the device's queue). Read from the block-layer tracer's stages (`Derived::layers`);
//! without the tracer this rule says nothing (iostat's await mixes queue and device).
//!
//! Fires for a traced device under the targets when, in a direction with requests, the queue
//! time is ≥ half its device time and the queue's share (below) is ≥ 20%.
//! Impact = queue time ÷ the application's latency (a run), or queue time ÷ (pre-queue +
//! queue + device) for other results (no per-I/O application latency to divide by).
//!
//! Ground truth (at merge with the tracer): `nr_requests` lowered on a loop device under a
//! deep queue; unit-tested here on constructed layers.

use crate::made::{ev, ratio, Made};
use crate::view::{Stages, Whole};
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const VS_DEVICE: f64 = 0.5;
pub const SHARE: f64 = 0.2;

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
            v.push((name.as_str(), dir, s, ratio(part(&s), below)));
        }
    }
    v
}

pub fn check(_doc: &Document, w: &Whole) -> Vec<Finding> {
    let Some((name, dir, s, share)) = stages_with_share(w, |s| s.queue_us)
        .into_iter()
        .filter(|(_, _, s, share)| s.queue_us >= VS_DEVICE * s.device_us && *share >= SHARE)
        .max_by(|a, b| a.3.total_cmp(&b.3))
    else {
        return Vec::new();
    };
    vec![Made {
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
    .into()]
}
