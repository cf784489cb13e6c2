//! The time series as a table, one row per interval: what the workload issued next to what
//! each device did and the CPU, on one time axis (`iogauge show ID --interval 5s`), for a
//! run, each point of a calibration, and a database run.

use super::calib::{calibration_head, point_line};
use super::db::db_run_text;
use super::run::run_text;
use crate::split::Split;
use iogauge_model::calib::CalibrationReport;
use iogauge_model::db::report::{DbIntervalReport, DbReport};
use iogauge_model::derive::Derived;
use iogauge_model::run::{IntervalReport, RunReport};
use iogauge_model::Document;
use iogauge_stats::Phase;
use std::fmt::Write as _;

/// A document's text with its intervals as a table (`iogauge show ID --interval`): a run's or
/// a db run's text, a calibration's head, then one table per run or point.
pub fn with_intervals(doc: &Document) -> String {
    match doc {
        Document::Run(r) => run_text(r) + "\n" + &interval_table(r),
        Document::Calibration(c) => calibration_head(c) + &calibration_intervals(c),
        Document::DbRun(d) => db_run_text(d) + "\n" + &db_interval_table(d),
    }
}

/// One row per interval: time, phase, workload IOPS/MiB/s/latency, then r/s, w/s and %util of
/// each sampled device and the CPU split.
pub fn interval_table(r: &RunReport) -> String {
    io_table(&r.intervals)
}

/// Each point of a calibration (its line, then its intervals as [`interval_table`] does).
pub fn calibration_intervals(c: &CalibrationReport) -> String {
    let mut s = String::new();
    for p in &c.points {
        let superseded = if p.point.superseded {
            " (superseded: measured again)"
        } else {
            ""
        };
        let _ = writeln!(s, "\n{}{superseded}", point_line(&p.point));
        s.push_str(&io_table(&p.intervals));
    }
    s
}

/// One row per interval of a database run: the sessions' operations and p99 latencies, the
/// load profile (physical reads, blocks written, WAL), active sessions, then each device and
/// the CPU.
pub fn db_interval_table(r: &DbReport) -> String {
    let devices = devices(r.intervals.iter().map(|i| i.system.as_ref()));
    let mut s = String::new();
    let _ = write!(
        s,
        "{:>8} {:<5}{:>9}{:>9}{:>10}{:>10}{:>10}{:>10}{:>9}{:>6}",
        "t(s)",
        "",
        "reads/s",
        "upd/s",
        "rd p99 us",
        "up p99 us",
        "phys rd/s",
        "blk wr/s",
        "WAL MiB/s",
        "AAS"
    );
    header(&mut s, &devices);
    for iv in &r.intervals {
        db_row(&mut s, iv);
        system(&mut s, iv.system.as_ref(), &devices);
    }
    s
}

fn db_row(s: &mut String, iv: &DbIntervalReport) {
    let ss = &iv.sessions;
    let p99 = |ops: f64, v: f64| {
        if ops > 0.0 {
            format!("{v:.0}")
        } else {
            "-".into()
        }
    };
    let _ = write!(
        s,
        "{:>8.1} {:<5}{:>9.0}{:>9.0}{:>10}{:>10}{:>10.0}{:>10.0}{:>9.2}{:>6.1}",
        iv.t_s,
        phase(iv.phase),
        ss.reads_s,
        ss.updates_s,
        p99(ss.reads_s, ss.read_lat_us.p99),
        p99(ss.updates_s, ss.update_lat_us.p99),
        iv.db.physical_reads_s,
        iv.db.buffers_written_s.total(),
        iv.db.log_bytes_s.mib().0,
        iv.aas.sessions_total()
    );
}

fn phase(p: Phase) -> &'static str {
    if p == Phase::Ramp {
        "ramp"
    } else {
        ""
    }
}

/// A device's columns: its name, and whether some interval has its layer split (the
/// block-layer tracer ran), which adds the queue and device time columns.
struct Device {
    name: String,
    split: bool,
}

/// Every device some interval sampled, by name.
fn devices<'a>(systems: impl Iterator<Item = Option<&'a Derived>> + Clone) -> Vec<Device> {
    let traced: std::collections::BTreeSet<&String> = systems
        .clone()
        .flatten()
        .flat_map(|d| d.layers.keys())
        .collect();
    systems
        .flatten()
        .flat_map(|d| d.disks.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|name| Device {
            name: name.clone(),
            split: traced.contains(name),
        })
        .collect()
}

/// The device and CPU columns' titles, ending the header line: `q_ms d_ms` are the mean
/// time a request spent in the OS queue and in the device.
fn header(s: &mut String, devices: &[Device]) {
    for d in devices {
        let _ = write!(
            s,
            " |{:>9}{:>9}{:>7}",
            format!("{} r/s", d.name),
            "w/s",
            "%util"
        );
        if d.split {
            let _ = write!(s, "{:>7}{:>7}", "q_ms", "d_ms");
        }
    }
    let _ = writeln!(s, " |{:>5}{:>5}{:>5}", "usr", "sys", "iow");
}

fn io_table(intervals: &[IntervalReport]) -> String {
    let devices = devices(intervals.iter().map(|i| i.system.as_ref()));
    let mut s = String::new();
    let _ = write!(
        s,
        "{:>8} {:<5}{:>10}{:>10}{:>9}{:>9}{:>9}",
        "t(s)", "", "r IOPS", "w IOPS", "MiB/s", "p50 us", "p99 us"
    );
    header(&mut s, &devices);
    for iv in intervals {
        row(&mut s, iv);
        system(&mut s, iv.system.as_ref(), &devices);
    }
    s
}

fn row(s: &mut String, iv: &IntervalReport) {
    let mut lat = if iv.read.ios >= iv.write.ios {
        &iv.read.lat_us
    } else {
        &iv.write.lat_us
    };
    if iv.read.ios + iv.write.ios == 0 {
        lat = &iv.read.lat_us;
    }
    let _ = write!(
        s,
        "{:>8.1} {:<5}{:>10.0}{:>10.0}{:>9.1}{:>9.0}{:>9.0}",
        iv.t_s,
        phase(iv.phase),
        iv.read.iops,
        iv.write.iops,
        iv.read.mbps + iv.write.mbps,
        lat.p50,
        lat.p99
    );
}

/// The device and CPU columns of one interval, ending its line.
fn system(s: &mut String, sys: Option<&Derived>, devices: &[Device]) {
    for d in devices {
        match sys.and_then(|x| x.disks.get(&d.name)) {
            Some(x) => {
                let _ = write!(s, " |{:>9.0}{:>9.0}{:>7.1}", x.r_s, x.w_s, x.util);
            }
            None => {
                let _ = write!(s, " |{:>9}{:>9}{:>7}", "-", "-", "-");
            }
        }
        if d.split {
            let split = sys.and_then(|x| x.layers.get(&d.name)).map(Split::of);
            let ms = |v: Option<f64>| v.map_or("-".to_string(), |us| format!("{:.2}", us / 1e3));
            let _ = write!(
                s,
                "{:>7}{:>7}",
                ms(split.and_then(|x| x.queue_us)),
                ms(split.and_then(|x| x.device_us))
            );
        }
    }
    match sys {
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
}
