//! The diagnosis's ground truth: each bottleneck built for real on this machine, its result's
//! top finding asserted, and no other finding explaining much of the time (a wrong finding is
//! worse than none). Synthetic runs in `diagnose/io.rs`, PostgreSQL runs in `diagnose/db.rs`.
//! The queue-bound scenario needs the block-layer tracer (it is on by default).
//!
//! Here the helpers both share: reading a result's findings and asserting on them.

use serde_json::Value;

mod db;
mod io;
mod shared;

/// At this impact or above, a finding other than the expected ones fails the scenario (#45:
/// no false finding explains 20% of the time).
const FALSE_HIGH: f64 = 0.2;

/// A file of `size` on the disk under test, created (pre-filled) by a short run.
fn file(dir: &tempfile::TempDir, name: &str, size: &str) -> String {
    let p = dir.path().join(name).display().to_string();
    crate::common::run_json(&["--target", &p, "--size", size, "--ios", "1"]);
    p
}

/// The findings of a result's JSON: (rule, layer, impact), ranked as stored.
fn findings(v: &Value) -> Vec<(String, String, f64)> {
    v["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings in the result: {v}"))
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default().to_string(),
                f["layer"].as_str().unwrap_or_default().to_string(),
                f["impact"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect()
}

/// Asserts the top finding is `layer` with at least `min_impact`, that it carries evidence,
/// and that no finding outside `also` (layers) has an impact of [`FALSE_HIGH`] or more. Returns the
/// top finding's impact.
fn assert_top(v: &Value, layer: &str, min_impact: f64, also: &[&str]) -> f64 {
    let all = findings(v);
    let shown = serde_json::to_string_pretty(&v["findings"]).unwrap_or_default();
    let (rule, top_layer, impact) = all.first().expect("at least one finding").clone();
    assert_eq!(top_layer, layer, "top finding {rule}; findings: {shown}");
    assert!(impact >= min_impact, "{rule} impact {impact}: {shown}");
    let ev = &v["findings"][0]["evidence"];
    assert!(
        layer == "none" || ev.as_array().is_some_and(|e| !e.is_empty()),
        "{rule} has no evidence: {shown}"
    );
    for (r, l, i) in &all[1..] {
        assert!(
            *i < FALSE_HIGH || l == layer || also.contains(&l.as_str()),
            "false high-impact finding {r} ({l}, {i}): {shown}"
        );
    }
    eprintln!("top finding {rule} ({layer}) impact {impact:.2}");
    impact
}
