//! The page of `iogauge report ID [ID…]`: a paragraph per result, the placement table when
//! the results hold one calibration and one database run, then one section per kind (runs,
//! calibrations, database runs; each kind's results share their charts), then each result's
//! text summary.

use super::findings::findings_html;
use super::item::{Group, Item, Stored};
use super::{calib, db, placement, run};
use crate::export::{Exporter, Text};
use crate::num::fmt_num;
use crate::svg::page::{close_page, colour, esc, open_page};
use iogauge_campaign::digest::{catalogue, digest, DigestError};
use iogauge_model::calib::CalibrationReport;
use iogauge_model::db::report::DbReport;
use iogauge_model::run::RunReport;
use iogauge_model::Document;
use std::fmt::Write as _;

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
    let (runs, calibrations, db_runs) = by_kind(&items);
    // One calibration and one database run: the placement study's table first.
    if let ([(c, cal)], [(d, db)]) = (calibrations.items.as_slice(), db_runs.items.as_slice()) {
        placement::section(
            &mut out,
            &crate::placement::placement((c.s.id, cal), (d.s.id, db)),
        );
    }
    if !runs.items.is_empty() {
        run::section(&mut out, &runs)?;
    }
    if !calibrations.items.is_empty() {
        calib::section(&mut out, &calibrations)?;
    }
    if !db_runs.items.is_empty() {
        db::section(&mut out, &db_runs)?;
    }
    out.push_str("<h2 id=\"text\">Summaries</h2>\n");
    for it in &items {
        out.push_str("<details><summary>");
        esc(&mut out, &it.name());
        out.push_str("</summary><pre class=\"file\">");
        esc(&mut out, &Text.render(it.s.document));
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
    let time = match it.s.document {
        Document::DbRun(_) => "DB time",
        _ => "I/O time",
    };
    findings_html(out, it.s.document.findings(), time);
}

/// The results split by kind, each group holding its typed documents, in the order given.
fn by_kind<'a>(
    items: &'a [Item<'a>],
) -> (
    Group<'a, RunReport>,
    Group<'a, CalibrationReport>,
    Group<'a, DbReport>,
) {
    let (mut runs, mut calibrations, mut db_runs) = (Group::new(), Group::new(), Group::new());
    for it in items {
        match it.s.document {
            Document::Run(r) => runs.items.push((it, &**r)),
            Document::Calibration(c) => calibrations.items.push((it, &**c)),
            Document::DbRun(d) => db_runs.items.push((it, &**d)),
        }
    }
    (runs, calibrations, db_runs)
}
