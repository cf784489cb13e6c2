//! ADDM's finding types, given once every rule has spoken: a **problem** explains a share of
//! the time (≥ [`PROBLEM`]) and says what removing it would save (its benefit, from the
//! share it explains: the mean latency — or, for a database run, the sessions' average
//! active sessions — without it; none for a cache or a short span, which flatter the
//! figures); a **symptom** follows from a problem found beside it (the
//! sessions' read waits of a saturated or throttled disk, a throttled member's imbalance, a
//! queue full of other processes' requests) and names it; **information** is a layer that
//! was not the limit, with its figure (less than [`PROBLEM`] of the time, or the healthy
//! result's "no limit found").

use crate::view::Whole;
use iogauge_model::finding::{Finding, Kind, Layer, PROBLEM};
use iogauge_model::Document;

/// The storage's own limits: what the database's waits on its files follow from.
const STORAGE: [&str; 7] = [
    "device-saturated",
    "os-queue",
    "os-queue-full",
    "throttled",
    "member-imbalance",
    "neighbours",
    "write-multiplication",
];

/// The problems a finding of `rule` can follow from, most direct first.
fn causes(rule: &str) -> &'static [&'static str] {
    match rule {
        "db-io-reads" | "db-wal" | "db-writes" => &STORAGE,
        "member-imbalance" => &["throttled"],
        "os-queue" | "os-queue-full" | "device-saturated" => &["neighbours"],
        _ => &[],
    }
}

/// Types `findings` (every rule's, ranked) in place.
pub(crate) fn type_all(doc: &Document, w: &Whole, findings: &mut [Finding]) {
    let problems: Vec<String> = findings
        .iter()
        .filter(|f| f.layer != Layer::None && f.impact >= PROBLEM)
        .map(|f| f.rule.clone())
        .collect();
    for f in findings.iter_mut() {
        let cause = causes(&f.rule)
            .iter()
            .find(|c| problems.iter().any(|p| p == *c));
        (f.kind, f.follows, f.benefit) = match cause {
            _ if f.layer == Layer::None => (Kind::Information, None, None),
            Some(c) => (Kind::Symptom, Some((*c).to_string()), None),
            None if f.impact >= PROBLEM && flatters(f.layer) => (Kind::Problem, None, None),
            None if f.impact >= PROBLEM => (Kind::Problem, None, benefit(doc, w, f.impact)),
            None => (Kind::Information, None, None),
        };
    }
}

/// Whether a finding of `layer` flatters the figures rather than limits them (a cache
/// answering, a write cache, a short span): removing it would show the storage, not save
/// time, so no benefit is said (a cached loop device's read "from 23 µs to about 10 µs").
fn flatters(layer: Layer) -> bool {
    matches!(layer, Layer::PageCache | Layer::WriteCache | Layer::Span)
}

/// What removing a problem that explains `share` of the time would save, in words.
fn benefit(doc: &Document, w: &Whole, share: f64) -> Option<String> {
    let pct = share * 100.0;
    Some(match doc {
        Document::Run(_) => {
            let lat = w.work.map(|k| k.lat_us()).filter(|l| *l > 0.0)?;
            format!(
                "removing it saves ~{pct:.0}% of the I/O time: mean latency from {} to about {}",
                time(lat),
                time(lat * (1.0 - share))
            )
        }
        Document::DbRun(r) => {
            let aas = r.summary.aas.sessions_total();
            format!(
                "removing it saves ~{pct:.0}% of DB time: the sessions' average active sessions from {aas:.2} to about {:.2}",
                aas * (1.0 - share)
            )
        }
        Document::Calibration(_) => format!("removing it saves ~{pct:.0}% of the I/O time"),
    })
}

/// µs below a millisecond, else ms.
fn time(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else {
        format!("{:.1} ms", us / 1e3)
    }
}
