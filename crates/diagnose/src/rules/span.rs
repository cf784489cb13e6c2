//! **Short-stroked span** — testing a small part of a rotating disk keeps its seeks short and
//! makes it look up to twice as fast (ORION tests the whole space for this reason).
//!
//! Fires for a calibration or database run whose preflight found a rotating device under a
//! target with the tested span < 25% of it. It explains no time spent — it flatters the
//! figures — so its impact is fixed low: 0.1 × (1 − span share), ranking it below every
//! finding that explains time. A VM's disk (virtio, Xen, Hyper-V, VMware, QEMU's emulated
//! ones: `BlockDev::virtual_disk`) claims to rotate at the hypervisor's whim — virtio_blk
//! says rotational whatever lies behind it — so preflight records its medium as unknown and
//! this rule says nothing about seeks there (results stored before iogauge looked still
//! carry the flag as the kernel gave it).
//!
//! Ground truth: unit-tested on constructed preflight facts, a VM's disk among them; the
//! sysfs trees of VMs' disks in `iogauge_probe::sysfs`'s tests.

use crate::made::{ev, Made};
use crate::view::Whole;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::preflight::Preflight;
use iogauge_model::Document;

pub const SPAN_PCT: f64 = 25.0;

pub fn check(doc: &Document, _w: &Whole) -> Vec<Finding> {
    let pre: Option<&Preflight> = match doc {
        Document::Calibration(c) => Some(&c.preflight),
        Document::DbRun(d) => d.preflight.as_ref(),
        Document::Run(_) => None,
    };
    let Some(t) = pre
        .into_iter()
        .flat_map(|p| &p.targets)
        .find(|t| t.rotational == Some(true) && t.span_pct.is_some_and(|s| s < SPAN_PCT))
    else {
        return Vec::new();
    };
    let span = t.span_pct.unwrap_or(100.0);
    vec![Made {
        rule: "short-stroked",
        layer: Layer::Span,
        title: format!(
            "only {span:.1}% of the rotating device under {} was tested: short seeks flatter its figures",
            t.path.display()
        ),
        impact: 0.1 * (1.0 - span / 100.0),
        evidence: vec![
            ev("tested span", span, "%"),
            ev("tested bytes", t.tested_bytes as f64, "B"),
            ev("device bytes", t.device_bytes.unwrap_or(0) as f64, "B"),
        ],
        next: "test the whole device (or the span the database will use) before sizing on these figures",
        source: "ORION (tests the whole space); DESIGN principle 3: defeat caches honestly",
    }
    .into()]
}
