//! The self-contained HTML report of stored results (`iogauge report ID [ID…]`): for runs the
//! time series (IOPS and MiB/s per direction, latency percentiles, device IOPS, %util, await,
//! CPU, ramp shaded, steady window marked), latency percentile curves and the workload against
//! the devices; for calibrations ORION's pictures (IOPS and MB/s against outstanding I/Os,
//! latency against IOPS, the matrix as a heat map); for database runs the load profile and
//! average active sessions by wait event. Several results of a kind share their charts, one
//! colour each (before/after a change). Inline CSS and SVG only: no script, nothing fetched.

mod calib;
mod chart;
mod db;
mod run;

use crate::campaign::svg::{colour, esc, PALETTE};
use crate::campaign::svg_style::{close_page, open_page};
use chart::{Axis, Chart, Series};
use iogauge_campaign::digest::{catalogue, digest, DigestError};
use iogauge_campaign::RunDigest;
use iogauge_model::derive::Derived;
use iogauge_model::hardware::per_cpu_between;
use iogauge_model::system::Snapshot;
use iogauge_model::{Document, Kind};
use iogauge_stats::Nanos;
use std::fmt::Write as _;

/// One stored result: its id, document and stored histograms.
pub struct Stored<'a> {
    pub id: i64,
    pub document: &'a Document,
    pub histograms: &'a [(String, Vec<u8>)],
}

/// A result with what every chart needs: its colour and the digest campaigns use.
struct Item<'a> {
    s: &'a Stored<'a>,
    /// Position among the results: picks the colour.
    index: usize,
    digest: RunDigest,
}

impl Item<'_> {
    /// `run 12` (with the label when there is one).
    fn name(&self) -> String {
        let kind = match self.s.document.kind() {
            Kind::Run => "run",
            Kind::Calibrate => "calibration",
            Kind::DbRun => "db run",
        };
        match &self.s.document.meta().label {
            Some(l) => format!("{kind} {} [{l}]", self.s.id),
            None => format!("{kind} {}", self.s.id),
        }
    }
}

/// The results of one kind drawn on shared axes.
struct Group<'a, 'b> {
    items: Vec<&'b Item<'a>>,
}

impl Group<'_, '_> {
    /// A series of result `it`: with one result each series takes its own colour
    /// (`k`-th of the chart); with several, the result's colour and the `k`-th dash pattern.
    fn series(&self, it: &Item, k: usize, what: &str, pts: Vec<(f64, Option<f64>)>) -> Series {
        let one = self.items.len() == 1;
        Series {
            name: if one {
                what.to_string()
            } else {
                format!("{} {what}", short_name(it))
            },
            colour: if one {
                PALETTE[k % PALETTE.len()]
            } else {
                colour(it.index)
            },
            dash: if one { 0 } else { k },
            dots: false,
            pts,
        }
    }

    /// Ramp and steady spans, drawn only when one result is shown (several would overlap).
    fn spans(&self) -> Vec<(f64, f64, &'static str)> {
        match self.items.as_slice() {
            [one] => {
                let end = crate::campaign::svg_series::run_end(&one.digest);
                crate::campaign::svg_series::spans(&one.digest, end)
            }
            _ => Vec::new(),
        }
    }

    fn ids(&self) -> String {
        self.items
            .iter()
            .map(|i| i.s.id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A time chart of these results.
    fn time_chart(&self, key: &str, what: &str, y: Axis, series: Vec<Series>) -> Chart {
        Chart {
            kind: "series",
            key: key.to_string(),
            aria: format!("{what} over time, results {}", self.ids()),
            x: Axis::linear("time since start", crate::campaign::svg::Fmt::Secs),
            y,
            series,
            spans: self.spans(),
            cap: None,
        }
    }
}

/// `12` or `12 [label]`, short enough for a legend.
fn short_name(it: &Item) -> String {
    match &it.s.document.meta().label {
        Some(l) => format!("{} [{}]", it.s.id, crate::campaign::svg_stats::short(l, 16)),
        None => it.s.id.to_string(),
    }
}

/// The report of `results` (at least one), in the order given.
pub fn result_html(results: &[Stored]) -> Result<String, DigestError> {
    let items: Vec<Item> = results
        .iter()
        .enumerate()
        .map(|(index, s)| {
            Ok(Item {
                s,
                index,
                digest: digest(s.id, 1, s.document, s.histograms)?,
            })
        })
        .collect::<Result<_, DigestError>>()?;
    let ids: Vec<String> = results.iter().map(|r| r.id.to_string()).collect();
    let mut out = String::with_capacity(64 * 1024 * results.len().max(1));
    let title = format!(
        "iogauge result{} {}",
        if ids.len() == 1 { "" } else { "s" },
        ids.join(", ")
    );
    open_page(&mut out, &title);
    out.push_str("<h1>");
    esc(&mut out, &title);
    out.push_str("</h1>\n");
    for it in &items {
        summary(&mut out, it, items.len() > 1);
    }
    for kind in [Kind::Run, Kind::Calibrate, Kind::DbRun] {
        let group = Group {
            items: items
                .iter()
                .filter(|i| i.s.document.kind() == kind)
                .collect(),
        };
        if group.items.is_empty() {
            continue;
        }
        match kind {
            Kind::Run => run::section(&mut out, &group)?,
            Kind::Calibrate => calib::section(&mut out, &group)?,
            Kind::DbRun => db::section(&mut out, &group)?,
        }
    }
    out.push_str("<h2 id=\"text\">Summaries</h2>\n");
    for it in &items {
        out.push_str("<details><summary>");
        esc(&mut out, &it.name());
        out.push_str("</summary><pre class=\"file\">");
        esc(
            &mut out,
            &crate::Exporter::render(&crate::Text, it.s.document),
        );
        out.push_str("</pre></details>\n");
    }
    close_page(&mut out);
    Ok(out)
}

/// Most headline figures shown per result.
const FIGURES: usize = 8;

/// One paragraph per result: its colour (when several), name, start, state, headline
/// figures and warnings.
fn summary(out: &mut String, it: &Item, swatch: bool) {
    out.push_str("<p class=\"sum\">");
    if swatch {
        let _ = write!(
            out,
            "<span class=\"sw\" style=\"background:{}\"></span>",
            colour(it.index)
        );
    }
    out.push_str("<b>");
    esc(out, &it.name());
    out.push_str("</b> · ");
    esc(out, &it.digest.started_at);
    if it.digest.interrupted {
        out.push_str(" <span class=\"tag warn-tag\">interrupted</span>");
    }
    out.push_str("<br>");
    let figs: Vec<String> = catalogue()
        .iter()
        .filter_map(|m| {
            let v = it.digest.metrics.get(m.key)?;
            Some(format!("{} <b>{}</b> {}", m.label, fmt_num(*v), m.unit))
        })
        .take(FIGURES)
        .collect();
    out.push_str(&figs.join(" · "));
    out.push_str("</p>\n");
    if !it.digest.warnings.is_empty() {
        out.push_str("<ul class=\"warn\">");
        for w in &it.digest.warnings {
            out.push_str("<li>");
            esc(out, w);
            out.push_str("</li>");
        }
        out.push_str("</ul>\n");
    }
}

/// A figure with the decimals its size needs: none from 100, two from 1, else four (the
/// figures of `compare` and a campaign's lines too).
pub fn fmt_num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

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

/// A named figure of `T`, one series of a chart.
type Pick<T> = (&'static str, fn(&T) -> f64);

/// A result's intervals (the time each is drawn at, its start and end in seconds, its
/// device and CPU figures), the disks it names, and its raw snapshots (each CPU's figures
/// come from those).
struct Timeline<'a> {
    intervals: Vec<(f64, (f64, f64), Option<&'a Derived>)>,
    named: Vec<String>,
    samples: &'a [Snapshot],
}

impl<'a> Timeline<'a> {
    /// `ivs` as (start, duration, figures).
    fn of(
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

/// One interval: its time, its disks summed, its figures.
type Row<'a> = (f64, Option<Disks>, Option<&'a Derived>);

/// The device and CPU charts every kind with a time series has: device IOPS, the busiest
/// disk's %util, await, and CPU (user, system, iowait). `intervals` gives, per result, each
/// interval's start and system figures; `named` the result's disks.
fn system_charts<'a>(
    out: &mut String,
    g: &Group<'a, 'a>,
    intervals: &dyn Fn(&'a Item<'a>) -> Timeline<'a>,
) {
    use crate::campaign::svg::Fmt;
    let lines: Vec<(&Item, Timeline)> = g.items.iter().map(|it| (*it, intervals(it))).collect();
    let per: Vec<(&Item, Vec<Row>)> = lines
        .iter()
        .map(|(it, tl)| {
            let rows = tl
                .intervals
                .iter()
                .map(|(t, _, sys)| (*t, disks(*sys, &tl.named), *sys))
                .collect();
            (*it, rows)
        })
        .collect();
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
    out.push_str("<h3>Devices and CPU</h3>\n<p class=\"note\">What the whole disks under the targets did in each interval (iostat -x: r/s + w/s, the busiest disk's %util, await over all their I/Os) and the CPU.</p>\n<div class=\"charts\">");
    for (key, what, y, series) in charts {
        chart::line_chart(out, &g.time_chart(key, what, y, series));
    }
    let mut cpu = Vec::new();
    for (it, rows) in &per {
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
    chart::line_chart(
        out,
        &g.time_chart("cpu", "CPU", Axis::linear("% of all CPUs", Fmt::Pct), cpu),
    );
    // collectl's per-CPU view in one line: a saturated core hides in the average.
    let mut each = Vec::new();
    for (it, tl) in &lines {
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
        chart::line_chart(
            out,
            &g.time_chart(
                "cpu_each",
                "busiest CPU",
                Axis::linear("busy %", Fmt::Pct),
                each,
            ),
        );
    }
    out.push_str("</div>\n");
}

#[cfg(test)]
mod tests;
