//! **CPU** — the USE method's CPU check, per CPU as collectl shows it: one saturated core
//! limits a submitter even when the machine looks idle. A run's I/Os are then fed (submitted
//! and reaped) late, so the application's latency exceeds what the devices took.
//!
//! - A run: the busiest CPU ≥ 95% busy over the window (user + system + steal, not iowait:
//!   threads asleep on the storage leave their CPU idle — seen at 99% "busy" with 32
//!   readers waiting for a free request, `diagnose::io::queue_bound`; its
//!   system share in the evidence), the workload doing ≥ 1,000 I/Os per second of that CPU's
//!   busy time (≤ 1 ms of CPU per I/O: fewer mean other processes keep the CPU busy while the
//!   workload waits elsewhere — a shared machine's compilers are not the run's limit), and
//!   the time above the devices — (application latency − devices' await − the traced time
//!   before their queues, which await leaves out) ÷ application latency — ≥ 20% (without
//!   the last term a full queue's waiters, asleep, read as the CPU's time when other
//!   processes kept a CPU busy: seen in `diagnose::io::queue_bound` beside other tests).
//!   Impact = that share × the share of the workload's I/Os that reached a device (a
//!   cache's reads are [`super::cache`]'s finding, not the CPU's).
//! - A database run: the sessions on CPU ≥ 50% of DB time (AAS "CPU", class
//!   [`DbClass::Cpu`]) with the busiest CPU ≥ 90% busy. Impact = the CPU's share of DB time.
//!   "CPU" is a session in a statement and in no wait the engine names: on PostgreSQL no
//!   wait event; on MariaDB no instrumented wait, outside InnoDB's table I/O (which is
//!   [`DbClass::Other`]) and outside the Commit stage of a server syncing its redo at commit
//!   (the log's, see `crate::waits`). Both engines count a session waiting for a CPU here.
//!
//! Ground truth: `diagnose::cpu_bound` (the process confined to one CPU with more workers
//! than it can feed).

use super::db::{io_share, DbClass};
use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const BUSY_PCT: f64 = 95.0;
pub const ABOVE_SHARE: f64 = 0.2;
pub const DB_CPU_SHARE: f64 = 0.5;
pub const DB_BUSY_PCT: f64 = 90.0;
/// Workload I/Os per second of the busiest CPU's busy time below which the CPU is not the
/// workload's: an I/O engine spends far less than 1 ms of CPU on one I/O.
pub const IOPS_PER_BUSY_CPU: f64 = 1000.0;

/// Whether the CPU can be what limits a run's workload: a CPU at least `busy_pct` busy, and
/// the workload doing at least [`IOPS_PER_BUSY_CPU`] per second of its busy time.
pub(crate) fn plausible(w: &Whole, busy_pct: f64) -> bool {
    let (Some((_, c)), Some(k)) = (w.busiest_cpu(), w.work) else {
        return false;
    };
    c.working() >= busy_pct && k.read.iops + k.write.iops >= IOPS_PER_BUSY_CPU * c.working() / 100.0
}
const SOURCE: &str = "USE method (Gregg): CPU utilisation per CPU (collectl's per-CPU view)";
const NEXT: &str = "the CPU feeds the I/O too slowly: give the job more CPUs (taskset, cgroup cpuset), fewer workers per CPU, or a cheaper I/O path (io_uring, registered buffers); check what else runs on the busy CPU";

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    let Some((cpu, rates)) = w.busiest_cpu() else {
        return Vec::new();
    };
    let name = cpu.map_or("the CPUs".to_string(), |c| format!("cpu{c}"));
    let mut evidence = vec![
        ev(format!("{name} busy"), rates.working(), "%"),
        ev(format!("{name} system"), rates.system, "%"),
    ];
    if let Some(m) = &w.cpu {
        evidence.push(ev("all CPUs busy", m.working(), "%"));
    }
    let impact = match doc {
        Document::Run(_) => {
            let (Some(k), Some(await_ms)) = (w.work, w.entry_await_ms()) else {
                return Vec::new();
            };
            let app_us = k.lat_us();
            // Time bios waited before the queue (traced) is below the application too,
            // though not in await: a full queue's waiters are not waiting for the CPU.
            let pre_us = w.entry_pre_queue_us();
            let above = ratio(app_us - await_ms * 1e3 - pre_us, app_us).max(0.0);
            let reached = ratio(
                w.entry_rates().iter().map(|d| d.r_s + d.w_s).sum(),
                k.read.iops + k.write.iops,
            )
            .min(1.0);
            evidence.push(ev("application latency", app_us / 1e3, "ms"));
            evidence.push(ev("devices' await", await_ms, "ms"));
            if pre_us > 0.0 {
                evidence.push(ev(
                    "time before the devices' queues (traced)",
                    pre_us / 1e3,
                    "ms",
                ));
            }
            evidence.push(ev(
                format!("workload I/Os per second of {name}'s busy time"),
                ratio(k.read.iops + k.write.iops, rates.working() / 100.0),
                "IOPS",
            ));
            if !plausible(w, BUSY_PCT) || above < ABOVE_SHARE {
                return Vec::new();
            }
            above * reached
        }
        Document::DbRun(r) => {
            let share = io_share(&r.summary.aas, &[DbClass::Cpu]);
            evidence.push(ev("DB time on CPU", share * 100.0, "%"));
            if rates.working() < DB_BUSY_PCT || share < DB_CPU_SHARE {
                return Vec::new();
            }
            share
        }
        Document::Calibration(_) => return Vec::new(),
    };
    if impact < 0.05 {
        return Vec::new();
    }
    vec![Made {
        rule: "cpu",
        layer: Layer::Cpu,
        title: format!(
            "{name} is {:.0}% busy: the CPU, not the storage, limits the I/O ({:.0}% of the time explained)",
            rates.working(),
            impact * 100.0
        ),
        impact,
        evidence,
        next: NEXT,
        source: SOURCE,
    }
    .into()]
}
