//! A run's charts: IOPS and MiB/s per direction, latency percentiles per interval, the
//! devices and CPU over time, latency percentile curves, and the workload against what the
//! disks did over the measured window.

use super::chart::{line_chart, Axis, Series};
use super::{esc, fmt_num as num, system_charts, Group, Item, Pick, Timeline};
use crate::campaign::svg::{colour, Fmt};
use crate::campaign::svg_stats::latency_curves;
use iogauge_campaign::digest::{lat_curves, DigestError};
use iogauge_model::run::{DirSummary, IntervalReport, RunReport};
use iogauge_model::Document;
use std::fmt::Write as _;

fn report<'a>(it: &'a Item) -> &'a RunReport {
    match it.s.document {
        Document::Run(r) => r,
        _ => unreachable!("a run group holds runs"),
    }
}

/// Middle of an interval, seconds from the start: where its point is drawn.
fn mid(iv: &IntervalReport) -> f64 {
    iv.t_s + iv.dur_s.max(0.0) / 2.0
}

/// The direction with more I/Os in the interval (reads on a tie), `None` when idle.
fn busier(iv: &IntervalReport) -> Option<&DirSummary> {
    match (iv.read.ios, iv.write.ios) {
        (0, 0) => None,
        (r, w) if r >= w => Some(&iv.read),
        _ => Some(&iv.write),
    }
}

pub(super) fn section(out: &mut String, g: &Group) -> Result<(), DigestError> {
    out.push_str("<h2 id=\"runs\">Runs</h2>\n<p class=\"note\">Per interval, ramp-up included (shaded grey) and the steady-state window (green) when one result is shown. Latency is of the direction with more I/Os in the interval.</p>\n<div class=\"charts\">");
    let dirs = |it: &Item| -> Vec<(usize, &'static str, bool)> {
        let s = &report(it).summary;
        [(0, "read", s.read.ios > 0), (1, "write", s.write.ios > 0)]
            .into_iter()
            .filter(|d| d.2)
            .collect()
    };
    let per_dir = |f: fn(&DirSummary) -> f64| -> Vec<Series> {
        let mut v = Vec::new();
        for it in &g.items {
            for (k, name, _) in dirs(it) {
                let pts = report(it)
                    .intervals
                    .iter()
                    .map(|iv| {
                        let d = if k == 0 { &iv.read } else { &iv.write };
                        (mid(iv), Some(f(d)))
                    })
                    .collect();
                v.push(g.series(it, k, name, pts));
            }
        }
        v
    };
    let iops = per_dir(|d| d.iops);
    line_chart(
        out,
        &g.time_chart("iops", "IOPS", Axis::linear("IOPS", Fmt::Si), iops),
    );
    let mbps = per_dir(|d| d.mbps);
    line_chart(
        out,
        &g.time_chart("mbps", "MiB/s", Axis::linear("MiB/s", Fmt::Si), mbps),
    );
    let mut lat = Vec::new();
    for it in &g.items {
        let parts: [Pick<DirSummary>; 3] = [
            ("p50", |d| d.lat_us.p50),
            ("p99", |d| d.lat_us.p99),
            ("p99.9", |d| d.lat_us.p99_9),
        ];
        for (k, (name, f)) in parts.into_iter().enumerate() {
            let pts = report(it)
                .intervals
                .iter()
                .map(|iv| (mid(iv), busier(iv).map(f)))
                .collect();
            lat.push(g.series(it, k, name, pts));
        }
    }
    line_chart(
        out,
        &g.time_chart(
            "latency",
            "latency percentiles",
            Axis::log("latency", Fmt::Micros),
            lat,
        ),
    );
    out.push_str("</div>\n");
    system_charts(out, g, &|it| {
        let r = report(it);
        let ivs = r
            .intervals
            .iter()
            .map(|iv| (iv.t_s, iv.dur_s, iv.system.as_ref()));
        Timeline::of(
            ivs,
            r.hardware
                .as_ref()
                .map_or_else(Vec::new, |h| h.disks.clone()),
            &r.samples,
        )
    });
    curves(out, g)?;
    devices_table(out, g);
    Ok(())
}

/// Latency against percentile per direction, one line per result, from the whole-run
/// histograms.
pub(super) fn curves(out: &mut String, g: &Group) -> Result<(), DigestError> {
    let mut per = Vec::new();
    for it in &g.items {
        per.push((*it, lat_curves(&[it.s.histograms])?));
    }
    let mut labels: Vec<&str> = Vec::new();
    for (_, cs) in &per {
        for c in cs {
            if !labels.contains(&c.label.as_str()) {
                labels.push(&c.label);
            }
        }
    }
    if labels.is_empty() {
        return Ok(());
    }
    out.push_str("<h3>Latency percentiles</h3>\n<p class=\"note\">From each result's whole-run latency histogram (exact merges, not averages of percentiles).</p>\n<div class=\"charts\">");
    for label in labels {
        let lines: Vec<(String, &str, &iogauge_campaign::LatCurve)> = per
            .iter()
            .filter_map(|(it, cs)| {
                let c = cs.iter().find(|c| c.label == label)?;
                Some((it.name(), colour(it.index), c))
            })
            .collect();
        let aria = format!("{label} latency by percentile, results {}", g.ids());
        latency_curves(out, label, &aria, &lines);
    }
    out.push_str("</div>\n");
    Ok(())
}

/// The workload against what the whole disks did over the measured window, per run.
fn devices_table(out: &mut String, g: &Group) {
    out.push_str("<h3>Workload and devices</h3>\n<p class=\"note\">What the run issued against what the disks completed over the measured window; a ratio far from 1 means a cache, a layout's extra I/Os or another tenant.</p>\n<div class=\"tw\"><table class=\"res\"><thead><tr><th class=\"l\">result</th><th class=\"l\">disks</th><th>direction</th><th>workload IOPS</th><th>device IOPS</th><th>device ÷ workload</th><th>workload MiB/s</th><th>device MiB/s</th></tr></thead><tbody>");
    for it in &g.items {
        let r = report(it);
        let Some(h) = &r.hardware else {
            out.push_str("<tr><td class=\"l\">");
            esc(out, &it.name());
            out.push_str("</td><td class=\"l\" colspan=\"7\">no device samples</td></tr>");
            continue;
        };
        for (name, d) in [("read", &h.read), ("write", &h.write)] {
            if d.workload_iops == 0.0 && d.device_iops == 0.0 {
                continue;
            }
            out.push_str("<tr><td class=\"l\">");
            esc(out, &it.name());
            out.push_str("</td><td class=\"l\">");
            esc(out, &h.disks.join(", "));
            let _ = write!(
                out,
                "</td><td>{name}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                num(d.workload_iops),
                num(d.device_iops),
                d.ratio.map_or("-".into(), |x| format!("{x:.3}")),
                num(d.workload_mbps),
                num(d.device_mbps)
            );
        }
    }
    out.push_str("</tbody></table></div>\n");
}
