//! `iogauge compare CAL DB`: the placement table ([`Placement`]) as text — a head naming
//! both results and their disks, one line per figure with db ÷ calibration, then what each
//! figure is and the notes the pair needs (other disks, no device figures).

use crate::num::{fmt_num, fmt_ratio};
use crate::placement::{Placement, Side};
use iogauge_model::db::engine::Engine;
use iogauge_model::units::fmt_size;
use std::fmt::Write as _;

/// `calibration 3` or `db run 4 [label]`.
fn side(kind: &str, s: &Side) -> String {
    match &s.label {
        Some(l) => format!("{kind} {} [{l}]", s.id),
        None => format!("{kind} {}", s.id),
    }
}

/// `2 (vda+vdb)`, `4 (vda)` or `? (unknown)`.
fn disks(s: &Side) -> String {
    let n = s.disks.map_or("?".into(), |n| n.to_string());
    if s.devices.is_empty() {
        format!("{n} (devices unknown)")
    } else {
        format!("{n} ({})", s.devices.join("+"))
    }
}

/// The table and its legend.
pub fn placement_text(p: &Placement) -> String {
    let (cal, db) = (
        side("calibration", &p.calibration),
        side("db run", &p.db_run),
    );
    let mut s = format!(
        "{cal} ({}) against {db} ({}): the placement study, the calibration's figures beside the database's\n",
        p.calibration.started_at, p.db_run.started_at
    );
    let _ = writeln!(
        s,
        "disks: calibration {}, db run {}",
        disks(&p.calibration),
        disks(&p.db_run)
    );
    let w = cal.len().max(db.len()).max(12);
    let _ = writeln!(s, "{:<22} {cal:>w$} {db:>w$} {:>8}", "metric", "db/cal");
    let or_dash = |v: Option<f64>| v.map_or("-".to_string(), fmt_num);
    for r in &p.rows {
        let _ = writeln!(
            s,
            "{:<22} {:>w$} {:>w$} {:>8}",
            r.name,
            or_dash(r.calibration),
            or_dash(r.db_run),
            r.ratio.map_or("-".to_string(), fmt_ratio)
        );
    }
    legend(&mut s, p);
    s
}

/// What the figures are, in four lines, and the notes.
fn legend(s: &mut String, p: &Placement) {
    let at = p
        .outstanding
        .map_or(String::new(), |o| format!(", {o} outstanding"));
    let _ = writeln!(
        s,
        "reads/s: the calibration's max_iops ({} random reads, {} latency under {} ms{at}); the db run's devices' reads/s",
        fmt_size(p.small_block),
        p.criterion.name(),
        p.cap_ms
    );
    let cached = p.page_cache_pct.map_or(String::new(), |c| {
        format!("; {c:.0}% of them came from the page cache")
    });
    match p.engine {
        Engine::Postgres => {
            let _ = writeln!(
                s,
                "PostgreSQL reads/s: blks_read, page-cache hits included{cached}: not the storage's figure"
            );
            s.push_str("read latency: the calibration's mean at max_iops; PostgreSQL's mean single-block read time (blk_read_time / blks_read)\n");
        }
        Engine::Mariadb => {
            let _ = writeln!(
                s,
                "MariaDB reads/s: Innodb_data_reads, pages asked of the OS (O_DIRECT by default){cached}"
            );
            s.push_str("read latency: the calibration's mean at max_iops; InnoDB's mean data file read time (performance_schema)\n");
        }
    }
    s.push_str(
        "device await: iostat's r_await of the disks; per disk: reads/s over each side's disks\n",
    );
    let (c, d) = (p.calibration.id, p.db_run.id);
    if p.same_disks == Some(false) {
        let _ = writeln!(
            s,
            "note: calibration {c} measured {}, the data of db run {d} is on {}: not the same disks, so the ratios compare two storages",
            p.calibration.devices.join("+"),
            p.db_run.devices.join("+")
        );
    }
    if p.db_run.devices.is_empty() {
        let _ = writeln!(
            s,
            "note: db run {d} has no device figures (the disks under its data are unknown, as for a server given by --dsn): only {}'s are shown",
            p.engine.product()
        );
    }
}
