//! The time series as a table, one row per interval: what the workload issued next to what
//! each device did and the CPU, on one time axis (`iogauge show ID --interval 5s`).

use iogauge_model::run::{IntervalReport, RunReport};
use std::fmt::Write as _;

/// One row per interval: time, phase, workload IOPS/MiB/s/latency, then r/s, w/s and %util of
/// each sampled device and the CPU split.
pub fn interval_table(r: &RunReport) -> String {
    let devices: Vec<String> = r
        .intervals
        .iter()
        .filter_map(|i| i.system.as_ref())
        .flat_map(|d| d.disks.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut s = String::new();
    let _ = write!(
        s,
        "{:>8} {:<5}{:>10}{:>10}{:>9}{:>9}{:>9}",
        "t(s)", "", "r IOPS", "w IOPS", "MiB/s", "p50 us", "p99 us"
    );
    for d in &devices {
        let _ = write!(s, " |{:>9}{:>9}{:>7}", format!("{d} r/s"), "w/s", "%util");
    }
    let _ = writeln!(s, " |{:>5}{:>5}{:>5}", "usr", "sys", "iow");
    for iv in &r.intervals {
        s.push_str(&row(iv, &devices));
    }
    s
}

fn row(iv: &IntervalReport, devices: &[String]) -> String {
    let mut lat = if iv.read.ios >= iv.write.ios {
        &iv.read.lat_us
    } else {
        &iv.write.lat_us
    };
    if iv.read.ios + iv.write.ios == 0 {
        lat = &iv.read.lat_us;
    }
    let mut s = format!(
        "{:>8.1} {:<5}{:>10.0}{:>10.0}{:>9.1}{:>9.0}{:>9.0}",
        iv.t_s,
        if iv.phase == iogauge_stats::Phase::Ramp {
            "ramp"
        } else {
            ""
        },
        iv.read.iops,
        iv.write.iops,
        iv.read.mbps + iv.write.mbps,
        lat.p50,
        lat.p99
    );
    for d in devices {
        match iv.system.as_ref().and_then(|x| x.disks.get(d)) {
            Some(x) => {
                let _ = write!(s, " |{:>9.0}{:>9.0}{:>7.1}", x.r_s, x.w_s, x.util);
            }
            None => {
                let _ = write!(s, " |{:>9}{:>9}{:>7}", "-", "-", "-");
            }
        }
    }
    match &iv.system {
        Some(x) => {
            let _ = writeln!(
                s,
                " |{:>5.0}{:>5.0}{:>5.0}",
                x.cpu.user, x.cpu.system, x.cpu.iowait
            );
        }
        None => {
            let _ = writeln!(s, " |{:>5}{:>5}{:>5}", "-", "-", "-");
        }
    }
    s
}
