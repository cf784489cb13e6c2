//! The diagnosis: what limits the storage in a whole result, as findings ranked by the share
//! of the I/O time (or, for a database run, of DB time) each explains — Oracle's ADDM ranks
//! its findings by DB time the same way. Pure: a [`Document`] in, [`Finding`]s out; no OS,
//! no I/O. Each rule is a module of `rules/` stating its source, its thresholds, its impact
//! formula and the ground-truth scenario that proves it (crates/cli/tests/it/diagnose/).
//!
//! A wrong finding is worse than none: thresholds are conservative, every finding carries the
//! figures it rests on, and a rule that cannot know (no block-layer tracer, no low-load floor)
//! stays silent or says what it cannot tell.

use iogauge_model::finding::{rank, Evidence, Finding, Layer};
use iogauge_model::Document;

mod made;
mod rules;
mod typing;
mod view;
mod waits;
mod when;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;

use rules::RULES;
use view::Whole;

/// The findings of a whole result, ranked by impact (highest first, [`rank`]): every rule's,
/// each located in time where it held for part of the run, with those of stretches the
/// whole dilutes (see the `when` module); or the one "no limit found below the load
/// offered" when none fires.
pub fn diagnose(doc: &Document) -> Vec<Finding> {
    let whole = Whole::of(doc);
    let mut v: Vec<Finding> = RULES.iter().flat_map(|r| r(doc, &whole)).collect();
    when::locate(doc, &mut v);
    if v.is_empty() {
        v.push(healthy(&whole));
    }
    rank(&mut v);
    typing::type_all(doc, &whole, &mut v);
    v
}

/// The healthy run's finding: no rule fired. Its evidence is the busiest device's utilisation
/// and the busiest CPU, so "healthy" is a statement with figures, not an absence.
fn healthy(w: &Whole) -> Finding {
    let mut evidence = Vec::new();
    if let Some((name, d)) = w
        .disks
        .iter()
        .filter(|(n, _)| w.bottom.contains(n) || w.entry.contains(n))
        .max_by(|a, b| a.1.util.total_cmp(&b.1.util))
    {
        evidence.push(Evidence::new(format!("{name} %util"), d.util, "%"));
    }
    if let Some((_, c)) = w.busiest_cpu() {
        evidence.push(Evidence::new("busiest CPU busy", c.working(), "%"));
    }
    Finding {
        rule: "no-limit".into(),
        layer: Layer::None,
        title: "no limit found below the load offered".into(),
        impact: 0.0,
        evidence,
        next: "offer more load (more outstanding I/Os, workers or sessions, or no --rate-iops) to find the limit".into(),
        source: "USE method (utilisation, saturation, errors per resource); ADDM's ranking by time explained".into(),
        ..Finding::default()
    }
}
