//! One module per rule. A rule reads a whole result ([`Whole`]) and returns its findings
//! (usually none or one). Each module's doc states the rule's source, its thresholds, the
//! formula of its impact and the ground-truth scenario that built its bottleneck for real.

use crate::view::Whole;
use iogauge_model::finding::{Evidence, Finding, Layer};
use iogauge_model::Document;

pub mod cache;
pub mod cpu;
pub mod db;
pub mod device;
pub mod layout;
pub mod members;
pub mod queue;
pub mod readahead;
pub mod span;
pub mod throttle;
pub mod writecache;

/// A rule: a whole document (and its [`Whole`] view) to findings.
pub type Rule = fn(&Document, &Whole) -> Vec<Finding>;

/// Every rule, in stack order.
pub const RULES: [Rule; 11] = [
    cpu::check,
    cache::check,
    readahead::check,
    throttle::check,
    queue::check,
    device::check,
    writecache::check,
    layout::check,
    members::check,
    span::check,
    db::check,
];

/// What a rule builds; `impact` is clamped to 0–1.
pub(crate) struct Made {
    pub rule: &'static str,
    pub layer: Layer,
    pub title: String,
    pub impact: f64,
    pub evidence: Vec<Evidence>,
    pub next: &'static str,
    pub source: &'static str,
}

impl From<Made> for Finding {
    fn from(m: Made) -> Finding {
        Finding {
            rule: m.rule.into(),
            layer: m.layer,
            title: m.title,
            impact: if m.impact.is_finite() {
                m.impact.clamp(0.0, 1.0)
            } else {
                0.0
            },
            evidence: m.evidence,
            next: m.next.into(),
            source: m.source.into(),
        }
    }
}

/// `a / b`, 0 when `b` is not positive.
pub(crate) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

pub(crate) fn ev(what: impl Into<String>, value: f64, unit: &str) -> Evidence {
    Evidence::new(what, value, unit)
}
