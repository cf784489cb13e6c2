//! The placement table in the report of a calibration and a database run (`iogauge report
//! CAL DB`): the figures `compare CAL DB` prints, as one table with what each figure is.

use crate::num::{fmt_num, fmt_ratio};
use crate::placement::{Placement, Side};
use crate::svg::page::esc;
use iogauge_model::units::fmt_size;
use std::fmt::Write as _;

/// `<h2>` and the table; notes when the disks differ or the db run's are unknown.
pub(super) fn section(out: &mut String, p: &Placement) {
    let (c, d) = (p.calibration.id, p.db_run.id);
    let _ = write!(
        out,
        "<h2 id=\"placement\">Calibration beside database run</h2>\n<p class=\"note\">The placement study: calibration {c}'s small random reads at its latency cap ({} random reads, {} latency under {} ms) against what the disks under db run {d}'s data completed. PostgreSQL's own reads count blocks the OS page cache served{}, so they are shown without a ratio.</p>\n",
        fmt_size(p.small_block),
        p.criterion.name(),
        p.cap_ms,
        p.page_cache_pct
            .map_or(String::new(), |x| format!(" ({x:.0}% here)"))
    );
    let _ = write!(
        out,
        "<div class=\"tw\"><table class=\"res\"><thead><tr><th class=\"l\">figure</th><th>calibration {c}</th><th>db run {d}</th><th>db ÷ cal</th><th class=\"l\">what each is</th></tr></thead><tbody>"
    );
    let fig = |v: Option<f64>| v.map_or("-".to_string(), fmt_num);
    for r in &p.rows {
        let _ = write!(out, "<tr data-metric=\"{}\"><td class=\"l\">", r.metric);
        esc(out, r.name);
        let _ = write!(
            out,
            "</td><td>{}</td><td>{}</td><td>{}</td><td class=\"v\">",
            fig(r.calibration),
            fig(r.db_run),
            r.ratio.map_or("-".to_string(), fmt_ratio)
        );
        esc(out, r.about);
        out.push_str("</td></tr>");
    }
    out.push_str("</tbody></table></div>\n");
    let disks = |s: &Side| {
        let n = s.disks.map_or("?".to_string(), |n| n.to_string());
        match s.devices.is_empty() {
            true => format!("{n} disks (devices unknown)"),
            false => format!("{n} disks ({})", s.devices.join("+")),
        }
    };
    out.push_str("<p class=\"note\">");
    esc(
        out,
        &format!(
            "Per disk: calibration {c} over {}, db run {d} over {}.",
            disks(&p.calibration),
            disks(&p.db_run)
        ),
    );
    if p.same_disks == Some(false) {
        out.push_str(" <b>Not the same disks</b>: the ratios compare two storages.");
    }
    if p.db_run.devices.is_empty() {
        out.push_str(" The db run has no device figures (the disks under its data are unknown).");
    }
    out.push_str("</p>\n");
}
