//! The line every text summary shares: the result's `--label`.

use std::fmt::Write as _;

/// `label: TEXT` when the result has a `--label`.
pub(crate) fn label_line(s: &mut String, m: &iogauge_model::Meta) {
    if let Some(l) = &m.label {
        let _ = writeln!(s, "label: {l}");
    }
}
