//! Latency against percentile, one line per result, from each result's whole-run
//! histograms: every kind draws them (a run per direction, a calibration per step, a
//! database run per operation).

use super::item::Group;
use crate::svg::latency::latency_curves;
use crate::svg::page::colour;
use iogauge_campaign::digest::{lat_curves, DigestError};

/// Latency against percentile per direction, one line per result, from the whole-run
/// histograms.
pub(super) fn curves<T>(out: &mut String, g: &Group<T>) -> Result<(), DigestError> {
    let mut per = Vec::new();
    for (it, _) in &g.items {
        per.push((*it, lat_curves(&[it.s.histograms])?));
    }
    let mut labels: Vec<&str> = Vec::new();
    for (_, cs) in &per {
        for c in cs {
            if !labels.contains(&c.label.as_str()) {
                labels.push(&c.label);
            }
        }
    }
    if labels.is_empty() {
        return Ok(());
    }
    out.push_str("<h3>Latency percentiles</h3>\n<p class=\"note\">From each result's whole-run latency histogram (exact merges, not averages of percentiles).</p>\n<div class=\"charts\">");
    for label in labels {
        let lines: Vec<(String, &str, &iogauge_campaign::LatCurve)> = per
            .iter()
            .filter_map(|(it, cs)| {
                let c = cs.iter().find(|c| c.label == label)?;
                Some((it.name(), colour(it.index), c))
            })
            .collect();
        let aria = format!("{label} latency by percentile, results {}", g.ids());
        latency_curves(out, label, &aria, &lines);
    }
    out.push_str("</div>\n");
    Ok(())
}
