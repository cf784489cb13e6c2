//! The iostat -x style figures of one interval, computed from two raw snapshots (pure):
//! per device r/s, w/s, MB/s, request sizes, queue size, await and %util; CPU percentages;
//! the share of time tasks stalled on I/O or waited for a CPU; the job's own CPU time and
//! run-queue wait; pages swapped; the load average. Per-CPU percentages are
//! [`per_cpu`]'s, kept out of [`Derived`] (which every stored interval carries).

use crate::counter::pressure_pct;
use crate::layers::{LayerRates, RingRates};
use crate::sched::JobCpuRates;
use crate::system::{CpuCounters, DiskCounters, Snapshot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The figures of the interval from `prev` to `cur` (Δt from their `at_ns`), two snapshots of
/// one series, the one right after the other (for a longer span, [`derive_over`]). A device in
/// only one of the two appeared or vanished during the interval and is left out of it; with
/// Δt = 0 every rate is 0.
pub fn derive(prev: &Snapshot, cur: &Snapshot) -> Derived {
    let secs = cur.at_ns.saturating_sub(prev.at_ns) as f64 / 1e9;
    let before: BTreeMap<&str, &DiskCounters> =
        prev.disks.iter().map(|d| (d.name.as_str(), d)).collect();
    let disks = cur
        .disks
        .iter()
        .filter_map(|c| {
            let p = before.get(c.name.as_str())?;
            Some((c.name.clone(), DiskRates::between(p, c, secs)))
        })
        .collect();
    let psi_some_pct = match (&prev.psi, &cur.psi) {
        (Some(p), Some(c)) => Some(pressure_pct(p.some_total_us, c.some_total_us, secs)),
        _ => None,
    };
    Derived {
        disks,
        cpu: CpuRates::between(&prev.cpu, &cur.cpu),
        mem: cur.mem.clone(),
        psi_some_pct,
        load: cur.load.clone(),
        layers: layers_between(prev, cur, secs),
        ring: match (&prev.ring, &cur.ring) {
            (Some(p), Some(c)) => Some(RingRates::between(p, c)),
            _ => None,
        },
        others: cur.others.clone(),
        swap: match (&prev.swap, &cur.swap) {
            (Some(p), Some(c)) => Some(SwapRates::between(p, c, secs)),
            _ => None,
        },
        job: match (&prev.job, &cur.job) {
            (Some(p), Some(c)) => Some(JobCpuRates::between(p, c, secs)),
            _ => None,
        },
        psi_cpu_some_pct: match (&prev.psi_cpu, &cur.psi_cpu) {
            (Some(p), Some(c)) => Some(pressure_pct(p.some_total_us, c.some_total_us, secs)),
            _ => None,
        },
    }
}

/// The figures from the first to the last of `span`, consecutive snapshots of one series:
/// [`derive()`] of the two ends, with the stage histograms of every snapshot after the first
/// merged (a snapshot keeps only its own interval's buckets: `crate::layers::StageHist`).
/// `None` for fewer than two snapshots.
pub fn derive_over(span: &[Snapshot]) -> Option<Derived> {
    let [first, between @ .., last] = span else {
        return None;
    };
    if between.is_empty() {
        return Some(derive(first, last));
    }
    let mut end = last.clone();
    for s in between {
        for l in &mut end.layers {
            if let Some(o) = s.layers.iter().find(|o| o.name == l.name) {
                l.add_buckets(o);
            }
        }
        if let (Some(r), Some(o)) = (&mut end.ring, &s.ring) {
            r.add_buckets(o);
        }
    }
    end.others = crate::layers::merge_origins(span[1..].iter().flat_map(|s| &s.others));
    Some(derive(first, &end))
}

/// The block-layer figures of each traced device in both snapshots.
fn layers_between(prev: &Snapshot, cur: &Snapshot, secs: f64) -> BTreeMap<String, LayerRates> {
    cur.layers
        .iter()
        .filter_map(|c| {
            let p = prev.layers.iter().find(|p| p.name == c.name)?;
            Some((c.name.clone(), LayerRates::between(p, c, secs)))
        })
        .collect()
}

/// One CPU's figures over an interval (collectl's per-CPU view: one saturated core shows
/// even when the machine as a whole looks idle).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerCpuRates {
    /// The N of /proc/stat's `cpuN`.
    pub cpu: u32,
    #[serde(flatten)]
    pub rates: CpuRates,
}

/// [`CpuRates`] of each CPU from `prev` to `cur`, in CPU order: those with a `cpuN` line in
/// both snapshots (a CPU taken offline or brought online during the interval is left out);
/// empty when either snapshot has no per-CPU lines (stored by an older iogauge).
pub fn per_cpu(prev: &Snapshot, cur: &Snapshot) -> Vec<PerCpuRates> {
    let before: BTreeMap<u32, &CpuCounters> =
        prev.cpus.iter().map(|l| (l.cpu, &l.counters)).collect();
    let mut out: Vec<PerCpuRates> = cur
        .cpus
        .iter()
        .filter_map(|l| {
            let p = before.get(&l.cpu)?;
            Some(PerCpuRates {
                cpu: l.cpu,
                rates: CpuRates::between(p, &l.counters),
            })
        })
        .collect();
    out.sort_by_key(|r| r.cpu);
    out
}

mod combine;
mod rates;
pub use crate::counter::counter_delta;
pub(crate) use combine::weighted_mean;
pub use rates::{CpuRates, Derived, DiskRates, SwapRates};

#[cfg(test)]
mod tests;
