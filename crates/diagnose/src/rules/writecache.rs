//! **Write-back cache below the device** — writes that complete far faster than the same
//! device's reads were acknowledged by a cache (a controller's or SSD's DRAM, a VM host's page
//! cache), not written to the medium: the figures are the cache's until it fills. The
//! filesystem study of the seeds traced ext3's lead to exactly this.
//!
//! Fires for a run or calibration whose workload writes with O_DIRECT, on a disk under the
//! targets doing ≥ 50 reads/s and ≥ 50 writes/s, when its write await < ¼ of its read await
//! (and reads take ≥ 0.2 ms: a real medium). Impact = the writes' share of that disk's I/Os ×
//! (1 − write await ÷ read await): the share of its I/O time the cache took off.
//!
//! Ground truth: unit-tested on constructed figures (this VM's disk has a host cache, but its
//! behaviour is not stable enough to assert on).

use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const MIN_RATE: f64 = 50.0;
pub const FASTER: f64 = 4.0;
pub const READ_FLOOR_MS: f64 = 0.2;

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    let writes = match doc {
        Document::Run(r) => r.options.direct && r.summary.write.iops > 0.0,
        Document::Calibration(c) => c.options.setup.direct && c.options.write_pct > 0,
        Document::DbRun(_) => false,
    };
    if !writes {
        return Vec::new();
    }
    let Some((name, d)) = w
        .disks
        .iter()
        .filter(|(n, _)| w.bottom.contains(n))
        .filter(|(_, d)| {
            d.r_s >= MIN_RATE
                && d.w_s >= MIN_RATE
                && d.r_await >= READ_FLOOR_MS
                && d.w_await * FASTER < d.r_await
        })
        .max_by(|a, b| a.1.w_s.total_cmp(&b.1.w_s))
    else {
        return Vec::new();
    };
    let impact = ratio(d.w_s, d.r_s + d.w_s) * (1.0 - ratio(d.w_await, d.r_await));
    vec![Made {
        rule: "write-cache",
        layer: Layer::WriteCache,
        title: format!(
            "{name}'s writes complete {:.0}× faster than its reads ({:.2} ms vs {:.2} ms): a write-back cache below the device acknowledges them",
            ratio(d.r_await, d.w_await.max(1e-3)),
            d.w_await,
            d.r_await
        ),
        impact,
        evidence: vec![
            ev(format!("{name} write await"), d.w_await, "ms"),
            ev(format!("{name} read await"), d.r_await, "ms"),
            ev(format!("{name} writes"), d.w_s, "/s"),
            ev(format!("{name} reads"), d.r_s, "/s"),
        ],
        next: "the write figures are the cache's: run long enough to fill it (or with more data than it holds), and check it is protected against power loss before trusting it with a database",
        source: "device write latency under its own read floor (the seeds' filesystem study: ext3 led by a write cache)",
    }
    .into()]
}
