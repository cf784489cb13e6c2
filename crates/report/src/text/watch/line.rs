//! `iogauge watch --plain`: one timestamped line per interval (collectl -oT style), the
//! devices in iostat -x terms, the CPU split and the load average, and the workload of a run
//! in progress; with `--cpu each`, one more line per CPU.

use crate::split::busiest;
use iogauge_model::db::engine::Engine;
use iogauge_model::derive::{Derived, PerCpuRates};
use iogauge_model::live::DbNow;
use iogauge_model::live::{LiveHeader, LiveInterval, LiveRanks};
use iogauge_model::run::IntervalReport;
use iogauge_model::system::LoadAvg;
use std::fmt::Write as _;

/// `2026-11-22T05:30:01Z vda r/s 20864 w/s 0 rMB/s 163.0 … util 79.2 | cpu usr 1 sys 14 iow 33
/// steal 0 | load 1.52 0.80 0.33 run 2/187 | run 1234 read 20848 IOPS p99 479 us`.
pub fn watch_line(
    timestamp: &str,
    d: &Derived,
    devices: &[String],
    live: Option<(&LiveHeader, Option<&LiveInterval>)>,
    db: Option<&DbNow>,
) -> String {
    let mut s = timestamp.to_string();
    for name in devices {
        match d.disks.get(name) {
            Some(x) => {
                let _ = write!(
                    s,
                    " | {name} r/s {:.0} w/s {:.0} rMB/s {:.1} wMB/s {:.1} rrqm/s {:.0} wrqm/s {:.0} %rrqm {:.1} %wrqm {:.1} rareq-sz {:.1} wareq-sz {:.1} aqu-sz {:.2} r_await {:.2} w_await {:.2} util {:.1}",
                    x.r_s, x.w_s, x.r_mb_s, x.w_mb_s, x.rrqm_s, x.wrqm_s, x.rrqm_pct, x.wrqm_pct, x.rareq_sz, x.wareq_sz, x.aqu_sz, x.r_await, x.w_await, x.util
                );
            }
            None => {
                let _ = write!(s, " | {name} gone");
            }
        }
    }
    let c = &d.cpu;
    let _ = write!(
        s,
        " | cpu usr {:.0} sys {:.0} iow {:.0} steal {:.0} idle {:.0}",
        c.user, c.system, c.iowait, c.steal, c.idle
    );
    if let Some(p) = d.psi_some_pct {
        let _ = write!(s, " psi {p:.1}");
    }
    // Pages swapped a second (sar -W), when the machine swapped: a disk holding swap does
    // that I/O beside the workload's.
    if let Some(w) = d.swap.filter(|w| w.in_s > 0.0 || w.out_s > 0.0) {
        let _ = write!(s, " swap in {:.0} out {:.0}", w.in_s, w.out_s);
    }
    if let Some(l) = &d.load {
        let _ = write!(s, " | {}", load_text(l));
    }
    if let Some((h, iv)) = live {
        let _ = write!(s, " | {} {}", h.kind, h.pid);
        let Some(iv) = iv else {
            if let Some(db) = db {
                s.push_str(&db_part(db));
            }
            return s;
        };
        if iv.interval.phase == iogauge_stats::Phase::Ramp {
            s.push_str(" ramp");
        }
        for (name, dir) in [("read", &iv.interval.read), ("write", &iv.interval.write)] {
            if dir.ios > 0 {
                let _ = write!(
                    s,
                    " {name} {:.0} IOPS {:.1} MiB/s p99 {:.0} us",
                    dir.iops, dir.mbps, dir.lat_us.p99
                );
            }
        }
        if let Some(split) = live_split(&iv.interval) {
            let _ = write!(s, " | {split}");
        }
        if let Some(r) = &iv.ranks {
            let _ = write!(s, " | {}", ranks_part(r));
        }
    }
    if let Some(db) = db {
        s.push_str(&db_part(db));
    }
    s
}

/// Where the run's I/O time went in the interval, on its busiest traced device: `vda queue
/// 0.12 ms device 0.65 ms (queue 16%)` (mean per request, in the OS queue and in the
/// device); `None` when the interval carries no layer figures (no tracer, or a feed from
/// before it).
pub(crate) fn live_split(iv: &IntervalReport) -> Option<String> {
    let (name, sp) = busiest(iv.system.as_ref()?, &[])?;
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |us| format!("{:.2} ms", us / 1e3));
    let (q, d) = (sp.queue_us.unwrap_or(0.0), sp.device_us.unwrap_or(0.0));
    let share = if q + d > 0.0 {
        format!(" (queue {:.0}%)", q / (q + d) * 100.0)
    } else {
        String::new()
    };
    Some(format!(
        "{name} queue {} device {}{share}",
        ms(sp.queue_us),
        ms(sp.device_us)
    ))
}

/// The load average as /proc/loadavg prints it, labelled: `load 1.52 0.80 0.33 run 2/187`
/// (1, 5 and 15 minutes; runnable and existing threads now).
pub fn load_text(l: &LoadAvg) -> String {
    format!(
        "load {:.2} {:.2} {:.2} run {}/{}",
        l.one, l.five, l.fifteen, l.runnable, l.tasks
    )
}

/// `watch --cpu each`: one line per CPU, stamped like the interval's line, in the total's
/// words: `2026-11-22T05:30:01Z cpu3 usr 12 sys 30 iow 5 steal 0 idle 53`.
pub fn watch_cpu_lines(timestamp: &str, cpus: &[PerCpuRates]) -> Vec<String> {
    cpus.iter()
        .map(|c| {
            let r = &c.rates;
            format!(
                "{timestamp} cpu{} usr {:.0} sys {:.0} iow {:.0} steal {:.0} idle {:.0}",
                c.cpu, r.user, r.system, r.iowait, r.steal, r.idle
            )
        })
        .collect()
}

/// ` db logical/s … physical/s … | active DataFileRead 3 CPU 1`.
fn db_part(db: &DbNow) -> String {
    let mut s = String::new();
    if let Some(r) = &db.rates {
        let _ = write!(s, " | db {}", db_rates_line(r));
    }
    s.push_str(" | active");
    if db.active.is_empty() {
        s.push_str(" none");
    }
    for (event, n) in &db.active {
        let _ = write!(s, " {event} {n}");
    }
    s
}

/// The database's rates in one line: `logical/s 1200 physical/s 300 avg read 0.250 ms
/// commits/s 40 WAL MiB/s 1.25 WAL sync 1.500 ms` (the watch line and the full-screen panel);
/// InnoDB's log is called redo (rates with InnoDB's own figures are MariaDB's).
pub fn db_rates_line(r: &iogauge_model::db::profile::LoadRates) -> String {
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |m| format!("{m:.3} ms"));
    let log = match r.innodb {
        Some(_) => Engine::Mariadb,
        None => Engine::Postgres,
    }
    .log();
    format!(
        "logical/s {:.0} physical/s {:.0} avg read {} commits/s {:.0} {log} MiB/s {:.2} {log} sync {}",
        r.logical_reads_s,
        r.physical_reads_s,
        ms(r.avg_read_ms),
        r.commits_s,
        r.log_bytes_s.mib().0,
        ms(r.avg_log_sync_ms.map(|m| m.0))
    )
}

/// A job over MPI ranks, live: how many ranks' counts the interval holds, the slowest and
/// fastest rank and the spread between them (the latency shown beside is rank 0's own):
/// `ranks 64/64 slowest r17 1180 IOPS fastest r3 1502 IOPS spread 1.27x (p99: rank 0's)`.
pub(crate) fn ranks_part(r: &LiveRanks) -> String {
    let spread = match r.slowest.iops > 0.0 {
        true => format!("{:.2}x", r.fastest.iops / r.slowest.iops),
        false => "-".into(),
    };
    format!(
        "ranks {}/{} slowest r{} {:.0} IOPS fastest r{} {:.0} IOPS spread {spread} (p99: rank 0's)",
        r.heard, r.of, r.slowest.rank, r.slowest.iops, r.fastest.rank, r.fastest.iops
    )
}
