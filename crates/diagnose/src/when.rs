//! Findings located in time. A limit that held for part of a run is said with its stretch
//! ("t = 40–70 s: the device saturated"), as ADDM says in which part of a period a finding
//! held; a limit the whole window dilutes below a problem's share, but that held for a
//! stretch, becomes a finding of that stretch. The rules run on each part of the measured
//! window ([`windows`]: its intervals, consecutive ones grouped on a long run) as they run
//! on the whole; only runs and database runs (a calibration's points each load differently).
//!
//! Thresholds: a part holds a rule's finding when the rule finds ≥ [`PROBLEM`] there. A
//! finding of the whole that held in less than [`MOST`] of the measured time is located,
//! one-part gaps closed, unless it came and went more than [`MAX_STRETCHES`] times. A rule
//! that held in [`RUN_OF`] or more consecutive parts, and is not a finding of the whole,
//! is run again on each such stretch; where it finds ≥ [`PROBLEM`] there, it is a finding
//! whose impact is that stretch's impact times the stretch's share of the measured time.

use crate::rules::RULES;
use crate::view::Whole;
use iogauge_model::finding::{Finding, Layer, Stretch, PROBLEM};
use iogauge_model::Document;
use iogauge_stats::Phase;
use std::collections::BTreeMap;

/// Most parts a measured window is cut into.
const WINDOWS: usize = 30;
/// Fewest parts worth locating in: below it, a stretch is most of the run.
const MIN_WINDOWS: usize = 6;
/// A finding that held in this share of the measured time held over the whole of it.
const MOST: f64 = 0.8;
/// Consecutive parts a finding the whole does not have must hold in.
const RUN_OF: usize = 3;
/// More stretches than this: the finding comes and goes, and no stretch is said.
const MAX_STRETCHES: usize = 3;

/// The measured window's parts: each a stretch of consecutive intervals, at most
/// [`WINDOWS`] of them; empty when there are fewer than [`MIN_WINDOWS`] intervals or the
/// document is a calibration. A part ends where the next begins, so that each interval
/// (kept by its start) is in one part.
fn windows(doc: &Document) -> Vec<Stretch> {
    let ivs: Vec<(f64, f64)> = match doc {
        Document::Run(r) => r
            .intervals
            .iter()
            .filter(|i| i.phase == Phase::Measure && i.system.is_some())
            .map(|i| (i.t_s, i.dur_s))
            .collect(),
        Document::DbRun(d) => d
            .intervals
            .iter()
            .filter(|i| i.phase == Phase::Measure && i.system.is_some())
            .map(|i| (i.t_s, i.dur_s))
            .collect(),
        Document::Calibration(_) => Vec::new(),
    };
    if ivs.len() < MIN_WINDOWS {
        return Vec::new();
    }
    let per = ivs.len().div_ceil(WINDOWS);
    let groups: Vec<&[(f64, f64)]> = ivs.chunks(per).collect();
    groups
        .iter()
        .enumerate()
        .map(|(k, g)| {
            let last = g[g.len() - 1];
            Stretch {
                from_s: g[0].0,
                to_s: groups.get(k + 1).map_or(last.0 + last.1, |n| n[0].0),
            }
        })
        .collect()
}

/// Each rule's finding of highest impact over `within`.
fn impacts(doc: &Document, within: Stretch) -> BTreeMap<String, Finding> {
    let w = Whole::of_window(doc, Some(within));
    let mut out: BTreeMap<String, Finding> = BTreeMap::new();
    for f in RULES.iter().flat_map(|r| r(doc, &w)) {
        if f.layer == Layer::None || out.get(&f.rule).is_some_and(|o| o.impact >= f.impact) {
            continue;
        }
        out.insert(f.rule.clone(), f);
    }
    out
}

/// Maximal runs of consecutive parts where `held`, as (first, last) indices; gaps of one
/// part closed when `close`.
fn runs(held: &[bool], close: bool) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, _) in held.iter().enumerate().filter(|(_, h)| **h) {
        match out.last_mut() {
            Some((_, end)) if i == *end + 1 || (close && i == *end + 2) => *end = i,
            _ => out.push((i, i)),
        }
    }
    out
}

/// `found` (the whole window's findings) with when each held, where that was part of the
/// window, and the findings of stretches the whole dilutes.
pub(crate) fn locate(doc: &Document, found: &mut Vec<Finding>) {
    let parts = windows(doc);
    if parts.is_empty() {
        return;
    }
    let total: f64 = parts.iter().map(Stretch::secs).sum();
    if total <= 0.0 {
        return;
    }
    let each: Vec<BTreeMap<String, Finding>> = parts.iter().map(|p| impacts(doc, *p)).collect();
    let held = |rule: &str| -> Vec<bool> {
        each.iter()
            .map(|m| m.get(rule).is_some_and(|f| f.impact >= PROBLEM))
            .collect()
    };
    let span = |(a, b): (usize, usize)| Stretch {
        from_s: parts[a].from_s,
        to_s: parts[b].to_s,
    };
    for f in found.iter_mut().filter(|f| f.impact >= PROBLEM) {
        let h = held(&f.rule);
        let secs: f64 = parts
            .iter()
            .zip(&h)
            .filter(|(_, h)| **h)
            .map(|(p, _)| p.secs())
            .sum();
        if secs == 0.0 || secs >= MOST * total {
            continue;
        }
        let r = runs(&h, true);
        if r.len() <= MAX_STRETCHES {
            f.during = r.into_iter().map(span).collect();
        }
    }
    let mut rules: Vec<&String> = each.iter().flat_map(|m| m.keys()).collect();
    rules.sort();
    rules.dedup();
    let mut more = Vec::new();
    for rule in rules {
        if found.iter().any(|f| &f.rule == rule) {
            continue;
        }
        let stretches: Vec<Stretch> = runs(&held(rule), false)
            .into_iter()
            .filter(|(a, b)| b - a + 1 >= RUN_OF)
            .map(span)
            .collect();
        let mut best: Option<Finding> = None;
        let (mut impact, mut during) = (0.0, Vec::new());
        for s in stretches {
            let Some(f) = impacts(doc, s).remove(rule) else {
                continue;
            };
            if f.impact < PROBLEM {
                continue;
            }
            impact += f.impact * s.secs() / total;
            during.push(s);
            if best.as_ref().is_none_or(|b| b.impact < f.impact) {
                best = Some(f);
            }
        }
        if let Some(mut f) = best {
            f.impact = impact;
            f.during = during;
            more.push(f);
        }
    }
    found.extend(more);
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn runs_of_consecutive_parts() {
        let h = [false, true, true, false, true, false, false, true];
        assert_eq!(runs(&h, false), vec![(1, 2), (4, 4), (7, 7)]);
        assert_eq!(runs(&h, true), vec![(1, 4), (7, 7)]);
        assert!(runs(&[false; 4], true).is_empty());
    }
}
