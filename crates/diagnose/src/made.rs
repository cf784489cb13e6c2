//! What a rule builds ([`Made`], turned into a [`Finding`] with its impact kept in 0–1) and
//! the small arithmetic every rule shares.

use iogauge_model::finding::{Evidence, Finding, Layer};

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
            ..Finding::default()
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
