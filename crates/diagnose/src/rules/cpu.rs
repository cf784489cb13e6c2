//! **CPU** — the CPU is named only from CPU evidence, never as the part of the I/O time no
//! other layer explains: other processes burning CPU while the job's threads sleep (waiting
//! for a free request, behind throttled writeback, in a cgroup throttle) are not the job's
//! limit, and the remainder read that way as `cpu` 0.55–0.89 (#45).
//!
//! - A run: the evidence is the job's own threads' run-queue wait — time they were runnable
//!   but waited for a CPU (`run_delay` of /proc/self/task/*/schedstat, summed over threads:
//!   Gregg's thread state analysis, the "runnable" state) — against the application's I/O
//!   time (Σ IOPS × mean latency: the I/Os in flight, Little's law). A thread of a psync or
//!   io-wq worker carries one I/O at a time, so its wait per second is the I/O time it added
//!   while it had one in flight. Impact = wait ÷ I/O time (≤ 1) × the share of the workload's
//!   I/Os that reached a device (a cache's reads are [`super::cache`]'s finding), when ≥ 10%.
//!   Shown beside it, not counted: the job's own CPU time per I/O (running is the I/O path's
//!   own cost: a lone QD 1 run on a fast disk spends 15–20% of its I/O time on its CPU, and
//!   the block layer's share of it is already in the traced stages; more CPUs would not
//!   remove it), /proc/pressure/cpu's `some` share (the machine's, not the job's) and the
//!   busiest CPU. Silent when the run got the rate it asked for (`--rate-iops`, ≥ 95% of it):
//!   its threads may wait for a CPU between I/Os, but nothing held the load back. Silent
//!   without the job's figures (results stored before iogauge read them): nothing to tell
//!   the CPU's time from the rest.
//!   What it cannot see: a ring that carries many I/Os on one thread (io_uring at QD > 1)
//!   — one thread's wait delays every completion it has not reaped, but counts once here,
//!   so the share is a lower bound there; and a thread's wait after the sampler's last look
//!   before it exits (io-wq workers; iogauge's own workers leave their final figure).
//! - A database run: the sessions on CPU ≥ 50% of DB time (AAS "CPU", class
//!   [`DbClass::Cpu`]) with the busiest CPU ≥ 90% busy. Impact = the CPU's share of DB time.
//!   "CPU" is a session in a statement and in no wait the engine names: on PostgreSQL no
//!   wait event; on MariaDB no instrumented wait, outside InnoDB's table I/O (which is
//!   [`DbClass::Other`]) and outside the Commit stage of a server syncing its redo at commit
//!   (the log's, see `crate::waits`). Both engines count a session waiting for a CPU here.
//!
//! Ground truth: `diagnose::io::cpu_bound` (the process confined to one CPU with more workers
//! than it can feed); `diagnose::io::cpu_burners_beside_a_healthy_run` (two CPU burners
//! beside a paced run: no finding) and `diagnose::io::cpu_burners_beside_a_full_queue` (the
//! same burners beside io_uring workers waiting for a free request: the queue's finding).

use super::db::{io_share, DbClass};
use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::finding::{Evidence, Finding, Layer};
use iogauge_model::Document;

/// The least share of the I/O time spent waiting for a CPU that makes a finding.
pub const WAIT_SHARE: f64 = 0.1;
/// The share of its `--rate-iops` at which a paced run got the load it asked for.
pub const GOT_RATE: f64 = 0.95;
pub const DB_CPU_SHARE: f64 = 0.5;
pub const DB_BUSY_PCT: f64 = 90.0;
/// Workload I/Os per second of the busiest CPU's busy time below which the CPU is not the
/// workload's: an I/O engine spends far less than 1 ms of CPU on one I/O. Only where the
/// job's own figures were not measured ([`plausible`]).
pub const IOPS_PER_BUSY_CPU: f64 = 1000.0;

/// The share of a run's I/O time its threads spent waiting for a CPU (run-queue wait ÷ the
/// application's I/O time, ≤ 1); `None` without the job's figures or I/O.
pub(crate) fn wait_share(w: &Whole) -> Option<f64> {
    let (k, j) = (w.work?, w.job?);
    let io_s = (k.read.iops * k.read.lat_us + k.write.iops * k.write.lat_us) / 1e6;
    (io_s > 0.0).then(|| (j.wait_s / io_s).min(1.0))
}

/// Whether the CPU can be what limits a run's workload. With the job's own figures: its
/// threads waited for a CPU for at least [`WAIT_SHARE`] of the I/O time. Without them (older
/// results): a CPU at least `busy_pct` busy, and the workload doing at least
/// [`IOPS_PER_BUSY_CPU`] per second of its busy time.
pub(crate) fn plausible(w: &Whole, busy_pct: f64) -> bool {
    if let Some(s) = wait_share(w) {
        return s >= WAIT_SHARE;
    }
    let (Some((_, c)), Some(k)) = (w.busiest_cpu(), w.work) else {
        return false;
    };
    c.working() >= busy_pct && k.read.iops + k.write.iops >= IOPS_PER_BUSY_CPU * c.working() / 100.0
}

const SOURCE: &str = "Gregg's thread state analysis (runnable time: schedstat run_delay) and USE method (CPU saturation per CPU)";
const NEXT: &str = "the job's threads wait for a CPU: give the job more CPUs (taskset, cgroup cpuset or cpu.max), fewer workers per CPU, or move what else runs on its CPUs (see the busiest CPU and the CPU pressure)";
const DB_SOURCE: &str = "USE method (Gregg): CPU utilisation per CPU (collectl's per-CPU view)";
const DB_NEXT: &str = "the sessions are on CPU, not waiting on the storage: give the database more CPUs or fewer sessions per CPU; check what else runs on the busy CPU";

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    match doc {
        Document::Run(r) => run(w, r.options.rate_iops).into_iter().collect(),
        Document::DbRun(r) => db(w, io_share(&r.summary.aas, &[DbClass::Cpu]))
            .into_iter()
            .collect(),
        Document::Calibration(_) => Vec::new(),
    }
}

/// The busiest CPU's name and its figures as evidence.
fn busiest(w: &Whole) -> Option<(String, f64, Vec<Evidence>)> {
    let (cpu, rates) = w.busiest_cpu()?;
    let name = cpu.map_or("the CPUs".to_string(), |c| format!("cpu{c}"));
    let mut evidence = vec![
        ev(format!("{name} busy"), rates.working(), "%"),
        ev(format!("{name} system"), rates.system, "%"),
    ];
    if let Some(m) = &w.cpu {
        evidence.push(ev("all CPUs busy", m.working(), "%"));
    }
    Some((name, rates.working(), evidence))
}

fn run(w: &Whole, rate: Option<u64>) -> Option<Finding> {
    let (k, j, share) = (w.work?, w.job?, wait_share(w)?);
    let iops = k.read.iops + k.write.iops;
    if rate.is_some_and(|r| iops >= GOT_RATE * r as f64) {
        return None;
    }
    let reached = ratio(w.entry_rates().iter().map(|d| d.r_s + d.w_s).sum(), iops).min(1.0);
    let impact = share * reached;
    if share < WAIT_SHARE || impact < WAIT_SHARE {
        return None;
    }
    let mut evidence = vec![
        ev(
            "job's run-queue wait per I/O",
            ratio(j.wait_s, iops) * 1e6,
            "µs",
        ),
        ev("application latency", k.lat_us(), "µs"),
        ev("job's threads waiting for a CPU", j.wait_s, "threads"),
        ev("job's CPU time per I/O", ratio(j.cpu_s, iops) * 1e6, "µs"),
        ev("job's CPU use", j.cpu_s * 100.0, "% of a CPU"),
    ];
    if let Some(p) = w.psi_cpu {
        evidence.push(ev("CPU pressure (some task waiting, machine-wide)", p, "%"));
    }
    let busy = busiest(w);
    if let Some((_, _, e)) = &busy {
        evidence.extend(e.iter().cloned());
    }
    Some(
        Made {
            rule: "cpu",
            layer: Layer::Cpu,
            title: format!(
                "the job's threads waited {:.0} µs per I/O for a CPU: {:.0}% of the I/O time went waiting to run{}",
                ratio(j.wait_s, iops) * 1e6,
                share * 100.0,
                busy.map_or(String::new(), |(n, b, _)| format!(" ({n} {b:.0}% busy)"))
            ),
            impact,
            evidence,
            next: NEXT,
            source: SOURCE,
        }
        .into(),
    )
}

fn db(w: &Whole, share: f64) -> Option<Finding> {
    let (name, busy, mut evidence) = busiest(w)?;
    evidence.push(ev("DB time on CPU", share * 100.0, "%"));
    if busy < DB_BUSY_PCT || share < DB_CPU_SHARE {
        return None;
    }
    Some(
        Made {
            rule: "cpu",
            layer: Layer::Cpu,
            title: format!(
                "{name} is {busy:.0}% busy and the sessions spend {:.0}% of DB time on CPU: the CPU, not the storage, limits the database",
                share * 100.0
            ),
            impact: share,
            evidence,
            next: DB_NEXT,
            source: DB_SOURCE,
        }
        .into(),
    )
}
