//! A case's latency percentile curves, from its runs' whole-run histograms merged.

use super::error::DigestError;
use crate::view::LatCurve;
use iogauge_stats::LatHist;
use std::collections::BTreeMap;

/// Percentiles sampled for a [`LatCurve`]; 100 stands for the maximum, 0 for the minimum.
pub const CURVE_PERCENTILES: [f64; 12] = [
    0.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999, 100.0,
];

/// The curves' order: a run's directions, a database run's update, a calibration's steps.
const ORDER: [&str; 7] = [
    "read",
    "write",
    "update",
    "small",
    "large",
    "single",
    "matrix small",
];

/// Merges the whole-run histograms of a case's runs (`runs[i]` is one run's stored
/// histograms) per label and samples each at [`CURVE_PERCENTILES`] → (percentile, µs).
///
/// Whole-run labels are those without `/` (per-interval `iv/…`) or `:` (a calibration's
/// points). A calibration stores one per step instead (`small`, `large`, `single`, its
/// points merged, and `matrix small`); one stored before those has no curve. A case whose
/// runs stored an `update` histogram is a database case: its curves are labelled `db read`
/// and `db update`. Order: read, write, update, small, large, single, matrix small, then any
/// other label alphabetically. Empty histograms are skipped, so a direction without I/Os
/// has no curve.
pub fn lat_curves(runs: &[&[(String, Vec<u8>)]]) -> Result<Vec<LatCurve>, DigestError> {
    let whole = |l: &str| !l.contains(['/', ':']);
    let db = runs
        .iter()
        .flat_map(|r| r.iter())
        .any(|(l, _)| l == "update");
    let mut merged: BTreeMap<(usize, &str), LatHist> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        for (label, bytes) in run.iter().filter(|(l, _)| whole(l)) {
            let h = LatHist::decode(bytes).map_err(|source| DigestError::CurveHistogram {
                index: i + 1,
                label: label.clone(),
                source,
            })?;
            if h.is_empty() {
                continue;
            }
            let rank = ORDER.iter().position(|k| k == label).unwrap_or(ORDER.len());
            merged.entry((rank, label.as_str())).or_default().merge(&h);
        }
    }
    Ok(merged
        .into_iter()
        .map(|((_, label), h)| LatCurve {
            label: if db {
                format!("db {label}")
            } else {
                label.to_string()
            },
            points: curve(&h),
        })
        .collect())
}

/// `h` at [`CURVE_PERCENTILES`], microseconds.
fn curve(h: &LatHist) -> Vec<(f64, f64)> {
    CURVE_PERCENTILES
        .iter()
        .map(|&p| {
            let ns = if p <= 0.0 {
                h.min_ns()
            } else if p >= 100.0 {
                h.max_ns()
            } else {
                h.quantile_ns(p / 100.0)
            };
            (p, ns as f64 / 1e3)
        })
        .collect()
}
