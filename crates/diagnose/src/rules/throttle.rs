//! **Throttled before the queue** — time an I/O spends after the application submitted it
//! and before the block layer queued it: a cgroup I/O limit (blk-throttle, io.max), writeback
//! throttling, bio splitting. btt's Q2G/G2I stages before Q2D; cgroup v1's
//! `blkio.throttle.*` and v2's `io.max` hold bios exactly there.
//!
//! - **A limit read, and reached** (a run): the cgroup I/O limits that apply to the job were
//!   read at its start (`Preflight::io_limits`: its cgroup and every one above it). The
//!   tightest limit on a sampled device that the device did ≥ 85% of (its reads or writes
//!   a second, or bytes) is the limit, said with certainty, naming the file, the cgroup and
//!   the value. Impact, for a device the targets sit on: the time above its queue ÷ the
//!   application's latency ((latency − await − the traced time before the queue) ÷
//!   latency: blk-throttle holds a bio before any block stage); for a device further down
//!   (a loop device's backing device): the targets' devices' await ÷ the latency (the
//!   limit's wait is their device time).
//! - With the block-layer tracer: a traced device whose pre-queue time is ≥ the rest of the
//!   request's time below it (queue + device) and ≥ 20% of the I/O time, with requests to
//!   spare (a full queue is [`super::queue`]'s). Impact = pre-queue time ÷ the application's
//!   latency (run) or ÷ (pre + queue + device). Its evidence says what was read: the queue's
//!   `wbt_lat_usec`, and whether a cgroup limit applies to the job on that device; with
//!   neither (reads, or wbt off, and no limit), the title says the cause is not known.
//! - Only where the limits were not read (results from before iogauge read them, a
//!   database's server), for a run: the application's latency ≥ 10× the devices' await
//!   (plus the traced time before their queues) and ≥ 2 ms above it (smaller gaps come from a
//!   VM disk's stalls and scheduling), the devices completed at least half the workload's
//!   I/Os (not a cache), and the CPU cannot be the limit ([`super::cpu::plausible`] at 80%).
//!   Said as *likely*, naming what would tell. Impact = (latency − await) ÷ latency. Not
//!   beside a log writer (`run --log-bs`): its syncs' cache flushes hold the job's requests
//!   above the queue with no limit at all. With the limits read and none reached, the time
//!   above the queues is not called a throttle: nothing says it is one.
//!
//! Ground truth: `diagnose::io::throttled` (a read-IOPS limit on the target's loop device)
//! and `diagnose::io::member_throttled` (a stripe over two loop devices, one limited), both
//! cgroup v1 `blkio.throttle.read_iops_device` in the root cgroup, the limit named.

use super::queue::held_before;
use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::derive::DiskRates;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::preflight::limits::{IoLimit, IoLimits, Limited};
use iogauge_model::preflight::{BlockDev, Preflight};
use iogauge_model::Document;

pub const ABOVE_AWAIT: f64 = 10.0;
pub const MIN_GAP_US: f64 = 2000.0;
pub const CPU_QUIET_PCT: f64 = 80.0;
/// The share of a limit a device's rate reaches at which the limit is what held it.
pub const REACHED: f64 = 0.85;
const SOURCE: &str =
    "blktrace/btt: time before the request queue (Q2G, G2I); cgroup blkio throttling";
const LIMIT_SOURCE: &str = "the job's cgroup limits (cgroup v1 blkio.throttle.*, v2 io.max), read at its start, against what the device did";
const NEXT: &str = "look for a cgroup I/O limit on the workload or the device (io.max, blkio.throttle.*), writeback throttling (wbt_lat_usec) or a VM/cloud IOPS cap; the device itself is not the limit";
const LIMIT_NEXT: &str = "the job's cgroup caps the device: raise or lift the limit (v1: echo 'MAJ:MIN 0' > the file; v2: MAJ:MIN riops=max in io.max) or measure outside that cgroup; the device itself is not the limit";

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    let pre = doc.preflight();
    let limits = pre.and_then(|p| p.io_limits.as_ref());
    if let (Document::Run(_), Some(l)) = (doc, limits) {
        if let Some(f) = reached(w, l) {
            return vec![f];
        }
    }
    if !w.layers.is_empty() {
        let seen = traced(w, pre);
        if !seen.is_empty() {
            return seen;
        }
        // blk-throttle holds a bio before `block_bio_queue` fires, so its time is in no
        // traced stage: the devices' await against the application's latency still shows it.
    }
    match doc {
        // A log writer's syncs flush the device's cache, and the job's requests wait behind
        // each flush: time above the queue that no limit makes, while the workload's figures
        // leave the log's I/O out. The untraced inference does not hold there. With the
        // limits read, none of which the run reached, there is nothing to infer.
        Document::Run(r) if r.log.is_none() && limits.is_none() => {
            untraced(w).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// What `d` did of what `what` limits: requests or bytes a second.
fn done(d: &DiskRates, what: Limited) -> f64 {
    match what {
        Limited::ReadIops => d.r_s,
        Limited::WriteIops => d.w_s,
        Limited::ReadBps => d.r_mb_s * 1_048_576.0,
        Limited::WriteBps => d.w_mb_s * 1_048_576.0,
    }
}

/// The recorded limit a sampled device reached, as a certain finding (a run only).
fn reached(w: &Whole, limits: &IoLimits) -> Option<Finding> {
    let k = w.work?;
    let app_us = k.lat_us();
    let await_us = w.entry_await_ms().unwrap_or(0.0) * 1e3;
    let pre_us = w.entry_pre_queue_us();
    let (l, did, share) = w
        .disks
        .iter()
        .flat_map(|(name, d)| {
            Limited::ALL.into_iter().filter_map(move |what| {
                let l = limits.tightest(name, what)?;
                let did = done(d, what);
                (l.value > 0 && did >= REACHED * l.value as f64).then_some((l, did))
            })
        })
        .map(|(l, did)| {
            let share = if w.entry.contains(&l.device) || w.entry.is_empty() {
                ratio(app_us - await_us - pre_us, app_us)
            } else {
                ratio(await_us, app_us)
            };
            (l, did, share.clamp(0.0, 1.0))
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    Some(named(l, did, share, limits, (app_us, await_us, pre_us)))
}

fn named(
    l: &IoLimit,
    did: f64,
    share: f64,
    limits: &IoLimits,
    (app_us, await_us, pre_us): (f64, f64, f64),
) -> Finding {
    let file = l
        .file
        .file_name()
        .map_or(String::new(), |f| f.to_string_lossy().into_owned());
    let key = if file == "io.max" {
        format!("io.max {}", l.what.v2_key())
    } else {
        file
    };
    // The job's own cgroup in the hierarchy the file belongs to.
    let hierarchy = if key.starts_with("io.max") {
        &limits.v2
    } else {
        &limits.v1
    };
    let job = hierarchy.clone().unwrap_or_else(|| l.cgroup.clone());
    let whose = if job == l.cgroup {
        format!("this job's cgroup {job}")
    } else {
        format!("this job's cgroup {job} (set on {})", l.cgroup)
    };
    let unit = l.what.unit();
    Made {
        rule: "throttled",
        layer: Layer::Throttle,
        title: format!(
            "{key} limits {} to {} {unit} for {whose}; the run did {did:.0}: {:.0}% of the I/O time waited for the limit",
            l.device,
            l.value,
            share * 100.0
        ),
        impact: share,
        evidence: vec![
            ev(format!("{} limit ({})", l.device, l.file.display()), l.value as f64, unit),
            ev(format!("{} done", l.device), did, unit),
            ev("application latency", app_us / 1e3, "ms"),
            ev("devices' await (queue and device)", await_us / 1e3, "ms"),
            ev("time before the devices' queues (traced)", pre_us / 1e3, "ms"),
        ],
        next: LIMIT_NEXT,
        source: LIMIT_SOURCE,
    }
    .into()
}

/// The device `name` in the preflight's chains.
fn device<'a>(pre: Option<&'a Preflight>, name: &str) -> Option<&'a BlockDev> {
    fn find<'a>(d: &'a BlockDev, name: &str) -> Option<&'a BlockDev> {
        if d.name == name {
            return Some(d);
        }
        d.below.iter().find_map(|b| find(b, name))
    }
    pre?.targets
        .iter()
        .filter_map(|t| t.device.as_ref())
        .find_map(|d| find(d, name))
}

fn traced(w: &Whole, pre: Option<&Preflight>) -> Vec<Finding> {
    // With every request in use the wait is for one ([`super::queue`]).
    let Some((name, dir, s, share)) = held_before(w, false) else {
        return Vec::new();
    };
    let mut evidence = vec![
        ev(
            format!("{name} {dir} time before the queue"),
            s.pre_us,
            "µs",
        ),
        ev(format!("{name} {dir} queue time"), s.queue_us, "µs"),
        ev(format!("{name} {dir} device time"), s.device_us, "µs"),
        ev(format!("{name} {dir} requests"), s.req_s, "/s"),
    ];
    let wbt = device(pre, name).and_then(|d| d.queue.wbt_lat_usec);
    if let Some(us) = wbt {
        evidence.push(ev(format!("{name} wbt_lat_usec (0: off)"), us as f64, "µs"));
    }
    let limits = pre.and_then(|p| p.io_limits.as_ref());
    // Neither a cgroup limit on the job there nor writeback throttling (reads, or wbt off):
    // the wait is measured, its cause is not known.
    let none = limits.is_some_and(|l| l.limits.iter().all(|x| x.device != name))
        && (dir == "read" || wbt == Some(0));
    if let Some(l) = limits {
        let n = l.limits.iter().filter(|x| x.device == name).count();
        evidence.push(ev(
            format!("cgroup limits on {name} for this job"),
            n as f64,
            "",
        ));
    }
    vec![Made {
        rule: "throttled",
        layer: Layer::Throttle,
        title: format!(
            "{name}'s {dir}s are held before the request queue: {:.0} µs there for {:.0} µs queued and in the device ({:.0}% of the I/O time){}",
            s.pre_us,
            s.queue_us + s.device_us,
            share * 100.0,
            if none {
                "; no cgroup limit applies to this job there and writeback throttling does not hold them: the cause is not known"
            } else {
                ""
            }
        ),
        impact: share,
        evidence,
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
                "I/Os spent {:.0}% of their time above the devices' queues, neither the devices nor the CPU limiting them: likely held by a limit before the queue (a cgroup I/O limit); the job's cgroup limits were not read, and the block-layer tracer would not see it",
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
