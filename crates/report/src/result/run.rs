//! A run's charts: IOPS and MiB/s per direction, latency percentiles per interval, the
//! devices and CPU over time, latency percentile curves, and the workload against what the
//! disks did over the measured window.

use super::curves::curves;
use super::item::Group;
use super::system::{system_charts, Pick, Timeline};
use crate::num::fmt_num as num;
use crate::svg::line::{line_chart, Axis, Series};
use crate::svg::page::esc;
use crate::svg::scale::Fmt;
use iogauge_campaign::digest::DigestError;
use iogauge_model::run::{DirSummary, IntervalReport, RunReport};
use std::fmt::Write as _;

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

pub(super) fn section(out: &mut String, g: &Group<RunReport>) -> Result<(), DigestError> {
    out.push_str("<h2 id=\"runs\">Runs</h2>\n<p class=\"note\">Per interval, ramp-up included (shaded grey) and the steady-state window (green) when one result is shown. Latency is of the direction with more I/Os in the interval.</p>\n<div class=\"charts\">");
    let iops = per_dir(g, |d| d.iops);
    line_chart(
        out,
        &g.time_chart("iops", "IOPS", Axis::linear("IOPS", Fmt::Si), iops),
    );
    let mbps = per_dir(g, |d| d.mbps);
    line_chart(
        out,
        &g.time_chart("mbps", "MiB/s", Axis::linear("MiB/s", Fmt::Si), mbps),
    );
    latency_chart(out, g);
    out.push_str("</div>\n");
    system_charts(out, g, |r| {
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
    super::layers::section(out, g);
    curves(out, g)?;
    devices_table(out, g);
    log_table(out, g);
    Ok(())
}

/// Figure `f` of each direction that did I/O, per interval, one series per result and
/// direction.
fn per_dir(g: &Group<RunReport>, f: fn(&DirSummary) -> f64) -> Vec<Series> {
    let mut v = Vec::new();
    for (it, r) in &g.items {
        let s = &r.summary;
        let dirs = [(0, "read", s.read.ios > 0), (1, "write", s.write.ios > 0)];
        for (k, name, _) in dirs.into_iter().filter(|d| d.2) {
            let pts = r
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
}

/// p50, p99 and p99.9 per interval, of the busier direction.
fn latency_chart(out: &mut String, g: &Group<RunReport>) {
    let mut lat = Vec::new();
    for (it, r) in &g.items {
        let parts: [Pick<DirSummary>; 3] = [
            ("p50", |d| d.lat_us.p50),
            ("p99", |d| d.lat_us.p99),
            ("p99.9", |d| d.lat_us.p99_9),
        ];
        for (k, (name, f)) in parts.into_iter().enumerate() {
            let pts = r
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
}

/// The workload against what the whole disks did over the measured window, per run.
fn devices_table(out: &mut String, g: &Group<RunReport>) {
    out.push_str("<h3>Workload and devices</h3>\n<p class=\"note\">What the run issued against what the disks completed over the measured window; a ratio far from 1 means a cache, a layout's extra I/Os or another tenant.</p>\n<div class=\"tw\"><table class=\"res\"><thead><tr><th class=\"l\">result</th><th class=\"l\">disks</th><th>direction</th><th>workload IOPS</th><th>device IOPS</th><th>device ÷ workload</th><th>workload MiB/s</th><th>device MiB/s</th></tr></thead><tbody>");
    for (it, r) in &g.items {
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

/// `run --log-bs`: what each run's log writer did (write + fdatasync), one row per run that
/// had one; nothing when none did.
fn log_table(out: &mut String, g: &Group<RunReport>) {
    let rows: Vec<_> = g
        .items
        .iter()
        .filter_map(|(it, r)| Some((it, r.log.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3>Log writer</h3>\n<p class=\"note\">Beside the job, one thread writing sequentially, each write followed by fdatasync (what a database's log writer does and a commit waits on); means and p99 in ms.</p>\n<div class=\"tw\"><table class=\"res\"><thead><tr><th class=\"l\">result</th><th class=\"l\">target</th><th>write size</th><th>writes/s</th><th>MiB/s</th><th>write ms</th><th>fdatasync ms</th><th>write p99 ms</th><th>fdatasync p99 ms</th></tr></thead><tbody>");
    for (it, l) in rows {
        out.push_str("<tr><td class=\"l\">");
        esc(out, &it.name());
        out.push_str("</td><td class=\"l\">");
        esc(out, &l.target.display().to_string());
        let _ = write!(
            out,
            "</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            iogauge_model::units::fmt_size(l.bs),
            num(l.writes_s),
            num(l.mbps),
            num(l.write_lat_us.mean / 1e3),
            num(l.sync_lat_us.mean / 1e3),
            num(l.write_lat_us.p99 / 1e3),
            num(l.sync_lat_us.p99 / 1e3)
        );
    }
    out.push_str("</tbody></table></div>\n");
}
