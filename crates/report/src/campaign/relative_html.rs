//! `report --campaign NAME --relative`: the campaign's HTML report with every figure a ratio
//! to its baseline case (= 1). What it shows is chosen, not filtered: the ratio table (from
//! [`iogauge_campaign::RelativeView`]), the normalised chart of each metric (ratios and runs
//! divided by the baseline), the read : write shares, the cases, the campaign file and the
//! environment. The absolute charts (means, latency curves, runs over time, wait events),
//! findings and warnings, which quote absolute figures, are left out, and the page says so.

use super::bars;
use super::html::{file_and_close, plural, rw_section};
use super::html_table::swatch;
use super::relative::{rel, rel_ci, relative_note, runs_text};
use crate::svg::page::{esc, open_page};
use iogauge_campaign::{relative, CampaignView, RelativeView};
use std::fmt::Write as _;

/// The relative report as one HTML document.
pub fn campaign_html_relative(view: &CampaignView) -> String {
    let r = relative(view);
    let mut out = String::with_capacity(64 * 1024 + view.file.len());
    open_page(
        &mut out,
        &format!("{} — iogauge campaign (relative)", r.name),
    );
    out.push_str("<h1>");
    esc(&mut out, &r.name);
    out.push_str(" <span class=\"u\">relative</span></h1>\n<p class=\"sum\"><b>");
    esc(&mut out, &relative_note(&r));
    let _ = writeln!(
        out,
        "</b></p>\n<p class=\"note\">iogauge {} · {} case{} × {} repetition{}{}. Findings, warnings, latency curves and the runs over time are left out: they quote absolute figures.</p>",
        esc_s(&r.command),
        r.cases.len(),
        plural(r.cases.len()),
        r.repeat,
        plural(r.repeat as usize),
        if r.smoke { " · smoke scale" } else { "" }
    );
    table(&mut out, view, &r);
    out.push_str("<h2 id=\"charts\">Charts by metric</h2>\n<p class=\"note\">The ratio to the baseline (= 1, dashed) with its 95% interval, each run divided by the baseline's figure.</p>\n");
    for m in &view.metrics {
        out.push_str("<h3>");
        esc(&mut out, &m.label);
        out.push_str("</h3>\n<div class=\"charts\">");
        if bars::has_ratios(m) {
            bars::normalised(&mut out, view, m);
        } else {
            out.push_str("<p class=\"note\">No ratio: the baseline has no runs with this metric, or it is the only case.</p>");
        }
        out.push_str("</div>\n");
    }
    rw_section(&mut out, view);
    file_and_close(&mut out, view);
    out
}

fn esc_s(s: &str) -> String {
    let mut o = String::new();
    esc(&mut o, s);
    o
}

/// Per metric and case: relative to, n, ratio, its interval, each run, the verdict.
fn table(out: &mut String, view: &CampaignView, r: &RelativeView) {
    out.push_str("<h2 id=\"results\">Ratios</h2>\n");
    if r.metrics.is_empty() {
        out.push_str("<p class=\"note\">No metric was recorded by any run.</p>\n");
        return;
    }
    out.push_str("<div class=\"tw\"><table class=\"res\"><thead><tr><th class=\"l\">case</th><th>relative to</th><th>n</th><th>ratio</th><th>95% CI</th><th>each run</th><th class=\"l\">verdict</th></tr></thead>\n");
    for m in &r.metrics {
        out.push_str("<tbody><tr class=\"mh\"><th colspan=\"7\">");
        esc(out, &m.label);
        out.push_str(if m.higher_is_better {
            " <span class=\"u\">(higher is better)</span>"
        } else {
            " <span class=\"u\">(lower is better)</span>"
        });
        out.push_str("</th></tr>\n");
        for f in &m.cases {
            out.push_str("<tr><td class=\"l\">");
            swatch(out, view, &f.case);
            esc(out, &f.case);
            out.push_str("</td><td>");
            esc(out, &f.relative_to);
            let _ = write!(
                out,
                "</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">",
                f.n,
                rel(f.ratio),
                rel_ci(f),
                runs_text(f)
            );
            esc(out, f.verdict.as_deref().unwrap_or("-"));
            out.push_str("</td></tr>\n");
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table></div>\n");
}
