//! **Write multiplication by a layout or mirror** — a mirror writes every block to each copy
//! (ASM normal redundancy: 2, high: 3), so the devices must absorb copies × the workload's
//! writes: mirror:2 halves the write capacity, mirror:3 thirds it (the ASM study: "the writes
//! are limited by the mirroring").
//!
//! - Under `--layout`: member writes ÷ workload writes (the layout's own count) ≥ 1.5.
//! - Without one (an O_DIRECT run): device writes ÷ workload writes on the disks under the
//!   targets ≥ 1.8 (an md/dm mirror below, journaling; other writers on the same disks too —
//!   the title says so).
//!
//! Impact = (1 − 1 ÷ ratio) × the writes' share of the workload's I/Os: the share of the
//! device writes that are copies.
//!
//! Ground truth: `diagnose::mirror_writes` (`--layout mirror:3` over three files).

use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const LAYOUT_RATIO: f64 = 1.5;
pub const DEVICE_RATIO: f64 = 1.8;

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    let (Document::Run(r), Some(k)) = (doc, w.work) else {
        return Vec::new();
    };
    if k.write.iops <= 0.0 {
        return Vec::new();
    }
    let (amp, title) = match &r.layout {
        Some(l) => {
            let Some(a) = l.write_amplification.filter(|a| *a >= LAYOUT_RATIO) else {
                return Vec::new();
            };
            (
                a,
                format!(
                    "the {} layout writes every block {a:.2} times: {:.0}% of the device writes are copies",
                    l.layout,
                    (1.0 - 1.0 / a) * 100.0
                ),
            )
        }
        None => {
            let a = ratio(w.bottom_sum(|d| d.w_s), k.write.iops);
            if !k.direct || a < DEVICE_RATIO {
                return Vec::new();
            }
            (
                a,
                format!(
                    "the disks completed {a:.2}× the workload's writes: a mirror below, journaling or other writers on the same disks multiply them"
                ),
            )
        }
    };
    let impact = (1.0 - 1.0 / amp) * (1.0 - k.read_share());
    vec![Made {
        rule: "write-multiplication",
        layer: Layer::Layout,
        title,
        impact,
        evidence: vec![
            ev("workload writes", k.write.iops, "IOPS"),
            ev("device writes", k.write.iops * amp, "IOPS"),
            ev("device writes per workload write", amp, "×"),
        ],
        next: "size the devices for workload writes × copies (mirror:2 halves the write IOPS, mirror:3 thirds them); `iogauge plan` does the arithmetic",
        source: "the ASM study (writes limited by the mirroring); RAID write penalty",
    }
    .into()]
}
