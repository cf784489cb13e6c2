//! **Write multiplication by a layout or mirror** — a mirror writes every block to each copy
//! (ASM normal redundancy: 2, high: 3), so the devices must absorb copies × the workload's
//! writes: mirror:2 halves the write capacity, mirror:3 thirds it (the ASM study: "the writes
//! are limited by the mirroring").
//!
//! - Under `--layout`: member writes ÷ workload writes (the layout's own count) ≥ 1.5.
//! - Without one (an O_DIRECT run): device writes ÷ workload writes on the disks under the
//!   targets ≥ 1.8 (an md/dm mirror below, journaling). The device writes are the job's own
//!   when the block-layer tracer told them from other processes' (a neighbour writing to the
//!   same disk made this rule say "4.3×: a mirror below" before, #45); without that the
//!   disks' writes hold everyone's and the rule says nothing when other processes' bios were
//!   seen, and says it cannot tell them apart otherwise.
//!
//! - A database run: the disks' write bios under its data and WAL ÷ the database's write calls
//!   (buffers written + WAL writes; InnoDB's pages flushed + doublewrite batches + redo
//!   writes; `writes.per_db_write`) ≥ 1.5 (a mirror or btrfs raid1
//!   below, a filesystem's journal, or other writers on the same disks: the title says so),
//!   when the sessions spend ≥ 5% of DB time writing and the data and WAL sit on two disks
//!   or more: over one disk the extra bios are the filesystem's, not copies (ext4 under a
//!   WAL-bound PostgreSQL: 2.01 bios per write, every one the job's own, #45).
//!
//! Impact = (1 − 1 ÷ ratio) × the writes' share of the workload's I/Os: the share of the
//! device writes that are copies; for a database run, × the share of DB time its sessions
//! spend writing (data-file writes and the WAL's).
//!
//! Ground truth: `diagnose::mirror_writes` (`--layout mirror:3` over three files) and
//! `campaign::examples::redundancy_db_runs_at_smoke_scale` (PostgreSQL on btrfs raid1c3 over
//! three throttled loop devices: the finding in every writers run).

use super::db::{io_share, DbClass};
use crate::made::{ev, ratio, Made};
use crate::view::Whole;
use iogauge_model::db::engine::Engine;
use iogauge_model::db::report::DbReport;
use iogauge_model::finding::{Finding, Layer};
use iogauge_model::Document;

pub const LAYOUT_RATIO: f64 = 1.5;
pub const DEVICE_RATIO: f64 = 1.8;

pub const DB_RATIO: f64 = 1.5;
/// Share of DB time writing below which the copies explain no time (a readers-only run's few
/// writes, hint bits and the like, each with its filesystem's metadata, give any ratio).
pub const DB_MIN_WRITE_SHARE: f64 = 0.05;

pub fn check(doc: &Document, w: &Whole) -> Vec<Finding> {
    if let Document::DbRun(r) = doc {
        return db(r);
    }
    let (Document::Run(r), Some(k)) = (doc, w.work) else {
        return Vec::new();
    };
    // The log writer's writes (`--log-bs`) land on the first target's disks unless it has a
    // target of its own: workload writes too.
    let in_first = r.options.log.as_ref().is_some_and(|l| l.target.is_none());
    let log = r.log.as_ref().filter(|_| in_first);
    let writes = k.write.iops + log.map_or(0.0, |l| l.writes_s);
    let kib = k.write.iops * k.write.kib + log.map_or(0.0, |l| l.writes_s * l.bs as f64 / 1024.0);
    if writes <= 0.0 {
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
            // In bytes: a copy carries the data again, while each fsync's cache flush counts
            // as one more write request carrying none.
            let traced: Vec<_> = w.bottom.iter().filter_map(|n| w.layers.get(n)).collect();
            let attributed = !traced.is_empty()
                && traced.len() == w.bottom.len()
                && traced.iter().all(|l| l.attributed);
            let device_kib = if attributed {
                traced.iter().map(|l| l.write_kib_s).sum()
            } else {
                w.bottom_sum(|d| d.w_mb_s) * 1024.0
            };
            let a = ratio(device_kib, kib);
            if !k.direct || a < DEVICE_RATIO || (!attributed && !w.others.is_empty()) {
                return Vec::new();
            }
            let whose = if attributed {
                "the job's own requests"
            } else {
                "every process's requests (the tracer did not tell them apart)"
            };
            (
                a,
                format!(
                    "the disks wrote {a:.2}× the workload's bytes ({whose}): a mirror below or journaling multiplies its writes"
                ),
            )
        }
    };
    let read_share = k.read.iops / (k.read.iops + writes);
    let impact = (1.0 - 1.0 / amp) * (1.0 - read_share);
    vec![Made {
        rule: "write-multiplication",
        layer: Layer::Layout,
        title,
        impact,
        evidence: vec![
            ev("workload writes", writes, "IOPS"),
            ev("device writes", writes * amp, "IOPS"),
            ev("device writes per workload write", amp, "×"),
        ],
        next: "size the devices for workload writes × copies (mirror:2 halves the write IOPS, mirror:3 thirds them); `iogauge plan` does the arithmetic",
        source: "the ASM study (writes limited by the mirroring); RAID write penalty",
    }
    .into()]
}

/// A database run's disks received ≥ 1.5 write bios per write of the database's.
fn db(r: &DbReport) -> Vec<Finding> {
    let Some(c) = &r.writes else {
        return Vec::new();
    };
    let Some(amp) = c.per_db_write.filter(|a| *a >= DB_RATIO) else {
        return Vec::new();
    };
    // Copies need devices to land on: over one disk the OS's write bios are no mirror's (a
    // hardware mirror copies below what it counts); the extra writes are the filesystem's.
    if c.disks.len() < 2 {
        return Vec::new();
    }
    let share = io_share(&r.summary.aas, &[DbClass::Write, DbClass::Log]);
    if share < DB_MIN_WRITE_SHARE {
        return Vec::new();
    }
    let product = r.server.engine.product();
    vec![Made {
        rule: "write-multiplication",
        layer: Layer::Layout,
        title: format!(
            "the disks received {amp:.2} writes per {product} write: a mirror below (2 copies: 2, 3 copies: 3), a filesystem's journal or other writers multiply them"
        ),
        impact: (1.0 - 1.0 / amp) * share,
        evidence: vec![
            ev(
                match r.server.engine {
                    Engine::Postgres => "PostgreSQL writes (buffers + WAL)",
                    Engine::Mariadb => "MariaDB writes (pages + doublewrite + redo)",
                },
                c.db_writes_s,
                "/s",
            ),
            ev("device writes (bios)", c.device_writes_s, "/s"),
            ev(format!("device writes per {product} write"), amp, "×"),
            ev("DB time writing (data files + WAL)", share * 100.0, "%"),
        ],
        next: "size the devices for the database's writes × copies (a 2-way mirror halves the write IOPS, 3-way thirds them); `iogauge plan` does the arithmetic",
        source: "the ASM study (device writes ≈ copies × the load profile's writes); RAID write penalty",
    }
    .into()]
}
