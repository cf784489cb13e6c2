//! A result's findings in its paragraph of the report: ranked, each with the share of the
//! time it explains, every evidence figure, the next step and the rule's source. A result
//! stored before findings existed shows nothing here.

use crate::svg::page::esc;
use crate::text::findings::{evidence_text, ranked, HEALTHY};
use iogauge_model::finding::{during_text, Finding, Layer};
use std::fmt::Write as _;

/// `<ol class="find">`, one item per finding, highest impact first; `time` is what the
/// impact is a share of ("I/O time", "DB time").
pub(super) fn findings_html(out: &mut String, findings: &[Finding], time: &str) {
    let v = ranked(findings);
    if v.is_empty() {
        return;
    }
    out.push_str("<ol class=\"find\">");
    for f in &v {
        out.push_str("<li><b>");
        if f.layer == Layer::None {
            esc(
                out,
                if f.title.is_empty() {
                    HEALTHY
                } else {
                    &f.title
                },
            );
            out.push_str("</b>");
        } else {
            if let Some(t) = during_text(&f.during) {
                esc(out, &t);
                out.push_str(": ");
            }
            esc(out, &f.title);
            let _ = write!(out, "</b> · {:.0}% of the ", f.impact * 100.0);
            esc(out, time);
        }
        if !f.evidence.is_empty() {
            let ev: Vec<String> = f.evidence.iter().map(evidence_text).collect();
            out.push_str("<br><span class=\"ev\">");
            esc(out, &ev.join(" · "));
            out.push_str("</span>");
        }
        if !f.next.is_empty() {
            out.push_str("<br>next: ");
            esc(out, &f.next);
        }
        if !f.source.is_empty() {
            out.push_str(" <span class=\"ev\">(");
            esc(out, &f.source);
            out.push_str(")</span>");
        }
        out.push_str("</li>");
    }
    out.push_str("</ol>\n");
}
