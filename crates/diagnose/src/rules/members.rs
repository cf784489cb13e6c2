//! **Imbalance between members or disks** — one member doing the work of several: the
//! CALIBRATE_IO article's 111 IOPS that "looks like a single disk" was a degraded mirror whose
//! reads all went to one member, seen in iostat. Judged over the window, never one interval.
//!
//! - Under `--layout` (≥ 2 members): the busiest member did ≥ 2× the mean of the others'
//!   I/Os (reads + writes per second).
//! - Otherwise, across the devices the targets sit on (≥ 2): the busiest is ≥ 60% busy and
//!   ≥ 2× the mean %util of the others; with the block-layer tracer, a member whose requests
//!   take ≥ 3× the others' (before the queue, in it and in the device).
//!
//! Impact = 1 − (mean of the others ÷ the busiest): the share of the busiest member's work
//! (or time) the others did not share.
//!
//! Ground truth: unit tests on a degraded mirror. `diagnose::member_throttled` (a stripe over
//! two loop devices, one cgroup-throttled) is [`super::throttle`]'s finding, not this one:
//! blk-throttle holds the bios before diskstats and the block tracepoints see them, so the
//! members' figures stay balanced.

use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const SKEW: f64 = 2.0;
pub const BUSY_PCT: f64 = 60.0;
pub const SLOWER: f64 = 3.0;
const SOURCE: &str =
    "the CALIBRATE_IO study: a degraded mirror's reads on one member (iostat per device)";
const NEXT: &str = "check the busy member: a degraded mirror or failed disk, a layout that reads from one copy, a slow or throttled member; rebalance before trusting the set's figures";

/// (name, figure) of each member; the busiest and the mean of the others.
fn skew(v: &[(String, f64)]) -> Option<(&str, f64, f64)> {
    if v.len() < 2 {
        return None;
    }
    let (i, top) = v
        .iter()
        .enumerate()
        .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1))?;
    let others: f64 = v
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, m)| m.1)
        .sum();
    Some((&top.0, top.1, others / (v.len() - 1) as f64))
}

fn made(
    title: String,
    impact: f64,
    evidence: Vec<iogauge_model::finding::Evidence>,
) -> Vec<Finding> {
    vec![Made {
        rule: "member-imbalance",
        layer: Layer::Members,
        title,
        impact,
        evidence,
        next: NEXT,
        source: SOURCE,
    }
    .into()]
}

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    if let Document::Run(r) = doc {
        if let Some(l) = r.layout.as_ref().filter(|l| l.members.len() >= 2) {
            let ios: Vec<(String, f64)> = l
                .members
                .iter()
                .map(|m| (m.path.clone(), m.reads_s + m.writes_s))
                .collect();
            if let Some((top, max, mean)) = skew(&ios).filter(|s| s.1 >= SKEW * s.2 && s.1 > 0.0) {
                let degraded = l.members.iter().filter(|m| m.degraded).count();
                return made(
                    format!("one member does the work: {top} did {max:.0} I/Os per second, the others {mean:.0} on average"),
                    1.0 - ratio(mean, max),
                    vec![
                        ev(format!("{top} I/Os"), max, "/s"),
                        ev("other members' mean I/Os", mean, "/s"),
                        ev("degraded members", degraded as f64, ""),
                    ],
                );
            }
        }
    }
    let mut entry: Vec<&String> = w.entry.iter().collect();
    entry.sort();
    entry.dedup();
    let traced: Vec<(String, f64)> = entry
        .iter()
        .filter_map(|n| {
            let l = w.layers.get(*n)?;
            let n_req = l.read.req_s + l.write.req_s;
            (n_req > 0.0).then(|| {
                let t = l.read.req_s * l.read.total_us() + l.write.req_s * l.write.total_us();
                ((*n).clone(), t / n_req)
            })
        })
        .collect();
    if let Some((top, max, mean)) = skew(&traced).filter(|s| s.1 >= SLOWER * s.2 && s.2 > 0.0) {
        return made(
            format!("{top} is the slow member: its requests take {max:.0} µs against {mean:.0} µs on the others"),
            1.0 - ratio(mean, max),
            vec![ev(format!("{top} request time"), max, "µs"), ev("other members' mean", mean, "µs")],
        );
    }
    let util: Vec<(String, f64)> = entry
        .iter()
        .filter_map(|n| Some(((*n).clone(), w.disks.get(*n)?.util)))
        .collect();
    match skew(&util).filter(|s| s.1 >= BUSY_PCT && s.1 >= SKEW * s.2) {
        Some((top, max, mean)) => made(
            format!("{top} is {max:.0}% busy while the other members average {mean:.0}%: one member does the work"),
            1.0 - ratio(mean, max),
            vec![ev(format!("{top} %util"), max, "%"), ev("other members' mean %util", mean, "%")],
        ),
        None => Vec::new(),
    }
}
