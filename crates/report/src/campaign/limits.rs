//! What limits each case of a campaign: the top finding its runs agree on most, and the
//! sentence that says where a case's limit differs from its baseline's ("qd32 is limited by
//! the OS queue where qd1 was limited by the device"). Every export and the end-of-campaign
//! lines read it from here; campaigns stored before findings existed have none and show
//! nothing.

use super::md;
use crate::svg::page::esc;
use crate::text::findings::{contrast, finding_line};
use iogauge_campaign::{CampaignView, CaseView};
use iogauge_model::finding::Finding;
use std::fmt::Write as _;

/// The case's top finding: the rule most of its runs are summed up by (interrupted runs
/// included: they were limited too), on a tie the one with the higher mean impact.
pub(crate) fn case_finding(c: &CaseView) -> Option<&Finding> {
    let mut by_rule: Vec<(&Finding, usize, f64)> = Vec::new();
    for f in c.runs.iter().filter_map(|r| r.finding.as_ref()) {
        match by_rule.iter_mut().find(|(g, ..)| g.rule == f.rule) {
            Some(e) => {
                e.1 += 1;
                e.2 += f.impact;
            }
            None => by_rule.push((f, 1, f.impact)),
        }
    }
    by_rule
        .into_iter()
        .max_by(|a, b| {
            a.1.cmp(&b.1)
                .then((a.2 / a.1 as f64).total_cmp(&(b.2 / b.1 as f64)))
        })
        .map(|(f, ..)| f)
}

/// The share of the time a campaign's findings explain: DB time for `db run`.
pub(crate) fn time_of(view: &CampaignView) -> &'static str {
    if view.command.starts_with("db") {
        "DB time"
    } else {
        "I/O time"
    }
}

/// Per case with a finding, its line; then, per case whose limit differs from its
/// baseline's, the sentence saying so. Empty when no case has a finding.
pub(crate) fn limits(view: &CampaignView) -> (Vec<(&str, String)>, Vec<String>) {
    let time = time_of(view);
    let lines = view
        .cases
        .iter()
        .filter_map(|c| Some((c.name.as_str(), finding_line(case_finding(c)?, time))))
        .collect();
    let of = |name: &str| {
        view.cases
            .iter()
            .find(|c| c.name == name)
            .and_then(case_finding)
    };
    let differ = view
        .cases
        .iter()
        .filter(|c| !view.is_baseline(&c.name))
        .filter_map(|c| {
            let base = view.baseline_of(&c.name).unwrap_or(&view.baseline);
            contrast((base, of(base)), (&c.name, case_finding(c)))
        })
        .collect();
    (lines, differ)
}

/// Markdown: `## What limits each case`, one bullet per case, then the differences.
pub(crate) fn limits_markdown(s: &mut String, view: &CampaignView) {
    let (lines, differ) = limits(view);
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(s, "## What limits each case\n");
    for (case, l) in &lines {
        let _ = writeln!(s, "- **{}**: {}", md::text(case), md::text(l));
    }
    for d in &differ {
        let _ = writeln!(s, "\n{}.", md::text(d));
    }
    s.push('\n');
}

/// The end-of-campaign lines: `limit {case}: …`, then the differences.
pub(crate) fn limits_text(s: &mut String, view: &CampaignView) {
    let (lines, differ) = limits(view);
    if !lines.is_empty() {
        let _ = writeln!(s, "\nwhat limits each case:");
    }
    for (case, l) in &lines {
        let _ = writeln!(s, "  {case:<28} {l}");
    }
    for d in &differ {
        let _ = writeln!(s, "  {d}");
    }
}

/// HTML: a section listing each case's limit (with the first one's next step and source),
/// then the differences; nothing when no case has a finding.
pub(crate) fn limits_html(out: &mut String, view: &CampaignView) {
    let (lines, differ) = limits(view);
    if lines.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"limits\">What limits each case</h2>\n<p class=\"note\">The top finding of each case's runs (the one most of them name), by the share of the time it explains.</p>\n<ul class=\"limits\">");
    for c in &view.cases {
        let Some(f) = case_finding(c) else { continue };
        out.push_str("<li><b>");
        esc(out, &c.name);
        out.push_str("</b>: ");
        esc(out, &finding_line(f, time_of(view)));
        if !f.next.is_empty() {
            out.push_str("<br>next: ");
            esc(out, &f.next);
        }
        if !f.source.is_empty() {
            out.push_str(" <span class=\"note\">(");
            esc(out, &f.source);
            out.push_str(")</span>");
        }
        out.push_str("</li>");
    }
    out.push_str("</ul>\n");
    for d in &differ {
        out.push_str("<p>");
        esc(out, d);
        out.push_str(".</p>\n");
    }
}
