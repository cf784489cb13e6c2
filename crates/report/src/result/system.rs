//! The device and CPU charts every kind with a time series has: device IOPS, the busiest
//! disk's %util, await, the CPU (user, system, iowait) and the busiest CPU against all.

use super::item::{Group, Item};
use crate::svg::line::{line_chart, Axis, Series};
use crate::svg::scale::Fmt;
use iogauge_model::derive::Derived;
use iogauge_model::hardware::per_cpu_between;
use iogauge_model::system::Snapshot;
use iogauge_stats::Nanos;

/// A named figure of `T`, one series of a chart.
pub(super) type Pick<T> = (&'static str, fn(&T) -> f64);

/// What the whole disks did in one interval: IOPS summed, the busiest disk's %util, and
/// await (ms) over all their I/Os.
#[derive(Clone, Copy)]
struct Disks {
    iops: f64,
    util: f64,
    await_ms: Option<f64>,
}

fn disks(system: Option<&Derived>, named: &[String]) -> Option<Disks> {
    let rates = iogauge_campaign::digest::disk_rates(system?, named);
    if rates.is_empty() {
        return None;
    }
    let ios: f64 = rates.iter().map(|r| r.r_s + r.w_s).sum();
    let waited: f64 = rates
        .iter()
        .map(|r| r.r_s * r.r_await + r.w_s * r.w_await)
        .sum();
    Some(Disks {
        iops: ios,
        util: rates.iter().map(|r| r.util).fold(0.0, f64::max),
        await_ms: (ios > 0.0).then(|| waited / ios),
    })
}

/// A result's intervals (the time each is drawn at, its start and end in seconds, its
/// device and CPU figures), the disks it names, and its raw snapshots (each CPU's figures
/// come from those).
pub(super) struct Timeline<'a> {
    intervals: Vec<(f64, (f64, f64), Option<&'a Derived>)>,
    named: Vec<String>,
    samples: &'a [Snapshot],
}

/// One interval: its time, its disks summed, its figures.
type Row<'a> = (f64, Option<Disks>, Option<&'a Derived>);

impl<'a> Timeline<'a> {
    /// `ivs` as (start, duration, figures).
    pub fn of(
        ivs: impl Iterator<Item = (f64, f64, Option<&'a Derived>)>,
        named: Vec<String>,
        samples: &'a [Snapshot],
    ) -> Self {
        Timeline {
            intervals: ivs
                .map(|(t, d, sys)| (t + d.max(0.0) / 2.0, (t, t + d), sys))
                .collect(),
            named,
            samples,
        }
    }

    /// Each interval with its disks summed.
    fn rows(&self) -> Vec<Row<'a>> {
        self.intervals
            .iter()
            .map(|(t, _, sys)| (*t, disks(*sys, &self.named), *sys))
            .collect()
    }

    /// Per interval, the busiest CPU's busy share (`CpuRates::busy`), `None` without per-CPU
    /// samples.
    fn busiest_cpu(&self) -> Vec<(f64, Option<f64>)> {
        let at = |s: f64| Nanos((s * 1e9).round() as u64);
        self.intervals
            .iter()
            .map(|(x, (a, b), _)| {
                let busy = per_cpu_between(self.samples, at(*a), at(*b))
                    .iter()
                    .map(|c| c.rates.busy())
                    .reduce(f64::max);
                (*x, busy)
            })
            .collect()
    }
}

/// The device and CPU charts of `g`; `timeline` gives a result's intervals, the disks it
/// names and its snapshots.
pub(super) fn system_charts<'a, T>(
    out: &mut String,
    g: &Group<'a, T>,
    timeline: impl Fn(&'a T) -> Timeline<'a>,
) {
    let lines: Vec<(&Item, Timeline)> = g.items.iter().map(|(it, d)| (*it, timeline(d))).collect();
    let per: Vec<(&Item, Vec<Row>)> = lines.iter().map(|(it, tl)| (*it, tl.rows())).collect();
    out.push_str("<h3>Devices and CPU</h3>\n<p class=\"note\">What the whole disks under the targets did in each interval (iostat -x: r/s + w/s, the busiest disk's %util, await over all their I/Os) and the CPU.</p>\n<div class=\"charts\">");
    device_charts(out, g, &per);
    cpu_chart(out, g, &per);
    busiest_cpu_chart(out, g, &lines);
    out.push_str("</div>\n");
}

/// Device IOPS, the busiest disk's %util and await, one series per result with samples.
fn device_charts<T>(out: &mut String, g: &Group<T>, per: &[(&Item, Vec<Row>)]) {
    let pick = |k: usize, what: &str, f: &dyn Fn(&Disks) -> Option<f64>| -> Vec<Series> {
        per.iter()
            .filter(|(_, rows)| rows.iter().any(|r| r.1.is_some()))
            .map(|(it, rows)| {
                let pts = rows
                    .iter()
                    .map(|(t, d, _)| (*t, d.as_ref().and_then(f)))
                    .collect();
                g.series(it, k, what, pts)
            })
            .collect()
    };
    let charts = [
        (
            "device_iops",
            "device IOPS",
            Axis::linear("device IOPS", Fmt::Si),
            pick(0, "device IOPS", &|d| Some(d.iops)),
        ),
        (
            "util",
            "busiest disk %util",
            Axis::linear("%util", Fmt::Pct),
            pick(1, "%util", &|d| Some(d.util)),
        ),
        (
            "await",
            "device await",
            Axis::linear("await", Fmt::Micros),
            pick(2, "await", &|d| d.await_ms.map(|ms| ms * 1e3)),
        ),
    ];
    for (key, what, y, series) in charts {
        line_chart(out, &g.time_chart(key, what, y, series));
    }
}

/// CPU user, system and iowait of all CPUs, per result with samples.
fn cpu_chart<T>(out: &mut String, g: &Group<T>, per: &[(&Item, Vec<Row>)]) {
    let mut cpu = Vec::new();
    for (it, rows) in per {
        if rows.iter().all(|r| r.2.is_none()) {
            continue;
        }
        let parts: [Pick<Derived>; 3] = [
            ("CPU user", |d| d.cpu.user),
            ("CPU system", |d| d.cpu.system),
            ("CPU iowait", |d| d.cpu.iowait),
        ];
        for (k, (what, f)) in parts.into_iter().enumerate() {
            let pts = rows.iter().map(|(t, _, s)| (*t, s.map(f))).collect();
            cpu.push(g.series(it, k, what, pts));
        }
    }
    line_chart(
        out,
        &g.time_chart("cpu", "CPU", Axis::linear("% of all CPUs", Fmt::Pct), cpu),
    );
}

/// collectl's per-CPU view in one line: the busiest CPU against all of them (a saturated
/// core hides in the average), drawn when some result kept each CPU's counters.
fn busiest_cpu_chart<T>(out: &mut String, g: &Group<T>, lines: &[(&Item, Timeline)]) {
    let mut each = Vec::new();
    for (it, tl) in lines {
        let busiest = tl.busiest_cpu();
        if busiest.iter().any(|p| p.1.is_some()) {
            let all = tl
                .intervals
                .iter()
                .map(|(x, _, s)| (*x, s.map(|d| d.cpu.busy())))
                .collect();
            each.push(g.series(it, 0, "busiest CPU", busiest));
            each.push(g.series(it, 1, "all CPUs", all));
        }
    }
    if !each.is_empty() {
        line_chart(
            out,
            &g.time_chart(
                "cpu_each",
                "busiest CPU",
                Axis::linear("busy %", Fmt::Pct),
                each,
            ),
        );
    }
}
