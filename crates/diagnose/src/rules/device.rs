//! **Device saturated** — the USE method's utilisation and saturation of the device (Brendan
//! Gregg), judged on device time rising with concurrency, never on %util alone: a device that
//! serves requests in parallel (flash, arrays, a VM's virtual disk) is 100% "utilised" as soon
//! as one request is in flight.
//!
//! - A calibration: its small-I/O curve stopped rising — the shallowest point no deeper point
//!   beats by 5% — while latency grew by half to the deepest point, with the busiest disk
//!   ≥ 90% busy there when the points sampled it (the curve is the evidence; %util backs it).
//!   Impact = (deepest latency − the curve's floor latency) ÷ deepest latency: the share of
//!   an I/O's time at the deepest point spent waiting beyond the device's low-load floor.
//! - A run or database run (one concurrency, so no floor to compare with): a device under the
//!   targets ≥ 75% busy (a VM's disk saturated at QD 32 reads 81–86% here: the submitter
//!   cannot keep it busy every millisecond) with ≥ 4 requests in flight on average (aqu-sz: work waiting at the
//!   device), and its await explaining ≥ half of the application's latency (runs).
//!   Impact (run) = device await ÷ application latency, or the block-layer tracer's device
//!   time ÷ application latency when it ran (its queue time is [`super::queue`]'s); impact
//!   (db run) = the share of DB time in data-file I/O waits (reads and writes, PostgreSQL's
//!   or InnoDB's: `crate::waits`).
//!
//! With the block-layer tracer's attribution the requests in flight are the job's own
//! (Little's law on its requests' queue and device time), not aqu-sz, which holds every
//! process's: a disk another process saturates is not this job's limit (#45 saw it blamed
//! for a QD 1 run). A run that got the rate it asked for (`--rate-iops`, ≥ 95% of it) was
//! limited by its own pacing, not by a device: nothing is said.
//!
//! Ground truth: `diagnose::device_bound` (QD 32 random O_DIRECT reads on the VM's disk).

use crate::made::{ev, ratio, Made};
use crate::rules::db::{io_share, DbClass};
use crate::view::Whole;
use iogauge_model::calib::{saturation, CalibrationReport, Point, Step};
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const UTIL_PCT: f64 = 90.0;
/// %util a run's or db run's device needs, with [`IN_FLIGHT`] and [`AWAIT_SHARE`].
pub const RUN_UTIL_PCT: f64 = 75.0;
pub const IN_FLIGHT: f64 = 4.0;
pub const AWAIT_SHARE: f64 = 0.5;
const SOURCE: &str = "USE method (Gregg): utilisation and saturation; device time rising with concurrency (ORION/CALIBRATE_IO curves)";
const NEXT: &str = "the device is the limit: more or faster devices, or spread the load (a stripe); \
     check the device's own figures (iostat -x) and, for a single run, run `iogauge calibrate` to see the curve";

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    match doc {
        Document::Calibration(c) => curve(c, w).into_iter().collect(),
        _ => window(doc, w).into_iter().collect(),
    }
}

/// The requests a device held for the job at a time: its own (Little's law on the traced
/// stages) with the tracer's attribution, else iostat's aqu-sz (everyone's).
fn in_flight(w: &Whole, name: &str, aqu_sz: f64) -> (f64, &'static str) {
    match w.layers.get(name).filter(|l| l.attributed) {
        Some(l) => (l.own_in_flight(), "the job's requests in flight (traced)"),
        None => (aqu_sz, "requests in flight (aqu-sz)"),
    }
}

/// Whether a run got the rate it asked for (its pacing, not a device, set its load).
fn paced(doc: &Document) -> bool {
    let Document::Run(r) = doc else {
        return false;
    };
    let got = r.summary.read.iops + r.summary.write.iops;
    r.options
        .rate_iops
        .is_some_and(|asked| asked > 0 && got >= 0.95 * asked as f64)
}

fn window(doc: &Document, w: &Whole) -> Option<Finding> {
    if paced(doc) {
        return None;
    }
    let (name, d) = w
        .disks
        .iter()
        .filter(|(n, _)| w.bottom.contains(n) || w.entry.contains(n))
        .filter(|(n, d)| d.util >= RUN_UTIL_PCT && in_flight(w, n, d.aqu_sz).0 >= IN_FLIGHT)
        .max_by(|a, b| a.1.util.total_cmp(&b.1.util))?;
    let await_ms = ratio(d.r_s * d.r_await + d.w_s * d.w_await, d.r_s + d.w_s);
    let (held, what) = in_flight(w, name, d.aqu_sz);
    let mut evidence = vec![
        ev(format!("{name} %util"), d.util, "%"),
        ev(format!("{name} {what}"), held, ""),
        ev(format!("{name} await"), await_ms, "ms"),
    ];
    let impact = match doc {
        Document::DbRun(r) => {
            let share = io_share(&r.summary.aas, &[DbClass::Read, DbClass::Write]);
            evidence.push(ev("DB time in data-file I/O waits", share * 100.0, "%"));
            share
        }
        _ => {
            let app_us = w.work.map_or(0.0, |k| k.lat_us());
            let dev_us = match w.layers.get(name) {
                Some(l) => {
                    let dev = ratio(
                        l.read.req_s * l.read.device_us + l.write.req_s * l.write.device_us,
                        l.read.req_s + l.write.req_s,
                    );
                    evidence.push(ev(format!("{name} device time (D2C)"), dev / 1e3, "ms"));
                    dev
                }
                None => await_ms * 1e3,
            };
            evidence.push(ev("application latency", app_us / 1e3, "ms"));
            let share = ratio(dev_us, app_us).min(1.0);
            if ratio(await_ms * 1e3, app_us) < AWAIT_SHARE || dev_us > app_us * 1.05 {
                // A device time longer than the application's latency is not the job's.
                return None;
            }
            share
        }
    };
    (impact > 0.0).then(|| {
        Made {
            rule: "device-saturated",
            layer: Layer::Device,
            title: format!(
                "{name} is the limit: {:.0}% busy with {:.1} of the job's requests in flight, {:.0}% of the I/O time spent in it",
                d.util,
                held,
                impact * 100.0
            ),
            impact,
            evidence,
            next: NEXT,
            source: SOURCE,
        }
        .into()
    })
}

fn curve(c: &CalibrationReport, w: &Whole) -> Option<Finding> {
    let crit = c.options.criterion;
    let mut small: Vec<&Point> = c
        .points
        .iter()
        .map(|p| &p.point)
        .filter(|p| p.step == Step::Small && !p.superseded)
        .collect();
    small.sort_by_key(|p| p.outstanding);
    let (at, last) = saturation(&small, |p| crit.of(&p.lat_us))?;
    let floor = small.first()?;
    // %util at the saturating point, when its intervals sampled the devices.
    let util = c
        .points
        .iter()
        .filter(|p| std::ptr::eq(&p.point, at))
        .flat_map(|p| &p.intervals)
        .filter_map(|i| i.system.as_ref())
        .flat_map(|s| {
            s.disks
                .iter()
                .filter(|(n, _)| w.bottom.contains(n) || w.entry.contains(n))
                .map(|(_, d)| d.util)
        })
        .max_by(f64::total_cmp);
    if util.is_some_and(|u| u < UTIL_PCT) {
        return None;
    }
    let (lf, ll) = (crit.of(&floor.lat_us), crit.of(&last.lat_us));
    let impact = ratio(ll - lf, ll);
    let mut evidence = vec![
        ev(
            "outstanding I/Os where IOPS stopped rising",
            f64::from(at.outstanding),
            "",
        ),
        ev("IOPS there", at.iops, "IOPS"),
        ev(
            format!("latency at {} outstanding (the floor)", floor.outstanding),
            lf / 1e3,
            "ms",
        ),
        ev(
            format!("latency at {} outstanding", last.outstanding),
            ll / 1e3,
            "ms",
        ),
    ];
    if let Some(u) = util {
        evidence.push(ev("busiest disk %util there", u, "%"));
    }
    Some(
        Made {
            rule: "device-saturated",
            layer: Layer::Device,
            title: format!(
                "the storage saturates near {} outstanding I/Os ({:.0} IOPS): deeper queues only add latency ({:.2} ms → {:.2} ms)",
                at.outstanding,
                at.iops,
                lf / 1e3,
                ll / 1e3
            ),
            impact,
            evidence,
            next: "size for the knee: run the database at up to this many outstanding I/Os per device set; add devices for more IOPS",
            source: SOURCE,
        }
        .into(),
    )
}
