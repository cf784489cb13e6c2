//! The text of `iogauge db setup` and `iogauge db run`: sessions, the database's load profile
//! (as an AWR load profile reads), average active sessions by wait event, and what reached
//! the disks.

use super::findings::findings_text;
use super::label::label_line;
use super::preflight::preflight_text;
use super::run::steady_text;
use iogauge_model::db::aas::Aas;
use iogauge_model::db::engine::Engine;
use iogauge_model::db::profile::{InnoDbRates, LoadRates};
use iogauge_model::db::report::{CacheCompare, DbReport, SessionSummary, Setting, WriteCompare};
use iogauge_model::db::setup::LoadReport;
use iogauge_model::db::workload::Mode;
use iogauge_model::units::{Iops, Millis};
use iogauge_stats::LatSummary;
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn mib(b: u64) -> String {
    if b >= 10 << 30 {
        format!("{:.0} GiB", b as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// After `db setup`: what was loaded, against RAM, and the settings in force.
pub fn db_setup_text(r: &LoadReport, settings: &[Setting], location: &str, ram: u64) -> String {
    let mut s = String::new();
    // InnoDB's settings name its page; a session row has one to itself, between two fillers.
    let innodb = settings.iter().any(|s| s.name == "innodb_page_size");
    let _ = writeln!(
        s,
        "loaded {} schemas x {} rows into {location} in {:.1} s: {} ({} blocks, {} with indexes)",
        r.schemas,
        r.rows / u64::from(r.schemas.max(1)),
        r.elapsed_s,
        if innodb {
            "one row per 16 KiB page, between two fillers"
        } else {
            "one row per 8 KiB block"
        },
        r.blocks,
        mib(r.bytes.0)
    );
    if r.tables.iter().any(|t| t.location.is_some()) {
        s.push_str(&placement_text(r));
    }
    if ram > 0 {
        let _ = writeln!(
            s,
            "data set {} against RAM {}{}",
            mib(r.bytes.0),
            mib(ram),
            if r.bytes.0 < ram {
                ": it fits, so reads can come from the OS page cache (db run --cache-limit, as root, prevents that)"
            } else {
                ""
            }
        );
    }
    s.push_str(&settings_text(settings));
    s
}

/// `placement: schemas 1, 3 (256 MiB) on /u01/ts; 2 (128 MiB) on /u02/ts`, in the order the
/// directories first hold a schema; the database's default place is "with the data".
fn placement_text(r: &LoadReport) -> String {
    let mut groups: Vec<(Option<&std::path::Path>, Vec<u32>, u64)> = Vec::new();
    for t in &r.tables {
        let at = t.location.as_deref();
        match groups.iter_mut().find(|g| g.0 == at) {
            Some(g) => {
                g.1.push(t.schema);
                g.2 += t.total_bytes.0;
            }
            None => groups.push((at, vec![t.schema], t.total_bytes.0)),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(at, schemas, bytes)| {
            let list: Vec<String> = schemas.iter().map(u32::to_string).collect();
            let place = at.map_or("with the data".into(), |p| format!("on {}", p.display()));
            format!("{} ({}) {place}", list.join(", "), mib(*bytes))
        })
        .collect();
    format!("placement: schemas {}\n", parts.join("; "))
}

fn settings_text(settings: &[Setting]) -> String {
    let mut s = String::from("settings:");
    for st in settings {
        let _ = write!(
            s,
            " {}={}{}",
            st.name,
            st.setting,
            st.unit
                .as_deref()
                .map_or(String::new(), |u| format!("({u})"))
        );
    }
    s.push('\n');
    s
}

fn mode_text(m: &Mode) -> String {
    match *m {
        Mode::ReadersWriters { readers, writers } => {
            let n = |k: u32, one: &str| format!("{k} {one}{}", if k == 1 { "" } else { "s" });
            format!("{}, {}", n(readers, "reader"), n(writers, "writer"))
        }
        Mode::Sessions {
            sessions,
            update_pct,
        } => format!("{sessions} sessions, {update_pct:.0}% updates"),
    }
}

fn lat_row(name: &str, per_s: f64, l: &LatSummary) -> String {
    format!(
        "{name:<8}{per_s:>12.1} |{:>10.0}{:>10.0}{:>10.0}{:>10.0}{:>11.0}\n",
        l.mean, l.p50, l.p90, l.p99, l.max
    )
}

fn aas_text(label: &str, m: &BTreeMap<String, f64>) -> Option<String> {
    let mut v: Vec<(&String, &f64)> = m.iter().filter(|(_, &a)| a >= 0.005).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| b.1.total_cmp(a.1));
    let parts: Vec<String> = v.iter().map(|(k, a)| format!("{k} {a:.2}")).collect();
    Some(format!("{label}: {}", parts.join(", ")))
}

fn aas_lines(a: &Aas, e: Engine) -> String {
    let log_writer = format!("  {} writer", e.log());
    let mut s = String::new();
    let _ = writeln!(
        s,
        "average active sessions {:.2} ({} samples every 100 ms)",
        a.sessions_total(),
        a.samples
    );
    for (label, m) in [
        ("  sessions", &a.sessions),
        ("  checkpointer", &a.checkpointer),
        ("  background writer", &a.bgwriter),
        (log_writer.as_str(), &a.log_writer),
    ] {
        if let Some(line) = aas_text(label, m) {
            let _ = writeln!(s, "{line}");
        }
    }
    s
}

/// The summary printed at the end of `iogauge db run` (and by `show`).
pub fn db_run_text(r: &DbReport) -> String {
    let mut s = String::new();
    run_head(&mut s, r);
    if let Some(p) = &r.preflight {
        let _ = writeln!(s, "  preflight:");
        for l in preflight_text(p).lines() {
            let _ = writeln!(s, "  {l}");
        }
    }
    sessions_text(&mut s, &r.summary.sessions);
    database_text(&mut s, &r.summary.db, r.server.engine);
    s.push_str(&aas_lines(&r.summary.aas, r.server.engine));
    super::relations::relations_text(&mut s, &r.relations);
    if let Some(c) = &r.cache {
        // The findings say what the cache note said, ranked with the rest.
        cache_text(&mut s, c, r.findings.is_empty(), r.server.engine);
    }
    if let Some(w) = r.writes.as_ref().filter(|w| w.db_writes_s > 0.0) {
        write_text(&mut s, w, r.server.engine);
        if let Some(i) = r.summary.db.innodb.filter(|i| i.dblwr_writes_s > 0.0) {
            doublewrite_text(&mut s, &i);
        }
    }
    if let Some(st) = &r.steady {
        s.push_str(&steady_text(st, "operations/s"));
    }
    ranks_text(&mut s, &r.ranks);
    let _ = writeln!(
        s,
        "measured {:.2} s over {} intervals; {} sessions did {} operations",
        r.summary.elapsed_s,
        r.intervals.len(),
        r.per_session.len(),
        r.per_session.iter().sum::<u64>()
    );
    s.push_str(&findings_text(&r.findings, "DB time"));
    if let Some(e) = &r.error {
        let _ = writeln!(s, "error: {e}");
    }
    if let Some(t) = r.trace {
        let _ = writeln!(
            s,
            "block requests captured as trace {t}: `iogauge traces show {t}`, `iogauge replay {t} --target ...`"
        );
    }
    // The preflight's warnings are printed with it above.
    let shown = r.preflight.as_ref().map_or(&[][..], |p| &p.warnings[..]);
    for w in r.warnings.iter().filter(|w| !shown.contains(w)) {
        let _ = writeln!(s, "warning: {w}");
    }
    s.push_str(&settings_text(&r.server.settings));
    s
}

/// Over MPI: one row per rank (its server, sessions, operations/s, latencies, physical
/// reads/s its sampler saw).
fn ranks_text(s: &mut String, ranks: &[iogauge_model::db::report::DbRank]) {
    if ranks.is_empty() {
        return;
    }
    let _ = writeln!(s, "{} ranks:", ranks.len());
    let _ = writeln!(
        s,
        "  rank  host            sessions      ops/s  read p99 us  update p99 us  phys reads/s  server"
    );
    for k in ranks {
        let x = &k.summary.sessions;
        let _ = writeln!(
            s,
            "{:>6}  {:<16}{:>8}{:>11.0}{:>13.0}{:>15.0}{:>14.0}  {}{}",
            k.rank,
            k.host,
            k.sessions,
            x.ops_s,
            x.read_lat_us.p99,
            x.update_lat_us.p99,
            k.summary.db.physical_reads_s,
            k.location,
            k.error
                .as_ref()
                .map_or(String::new(), |e| format!("  FAILED: {e}"))
        );
    }
}

/// SLOB's optional knobs in force: think time, hot schema, hot spot (`, …` each).
fn knobs_text(w: &iogauge_model::db::workload::Workload) -> String {
    let mut s = match (w.think_time, w.think_time_max) {
        (Some(lo), Some(hi)) => format!(", think time {lo:?}..{hi:?}"),
        (Some(t), None) => format!(", think time {t:?}"),
        _ => String::new(),
    };
    if let Some(n) = w.hot_schema_every {
        let _ = write!(s, ", 1 in {n} operations on schema 1");
    }
    if let Some(h) = w.hotspot {
        let _ = write!(
            s,
            ", 1 in {} operations in the hot spot ({} from {})",
            h.every,
            mib(h.size_blocks * 8192),
            mib(h.offset_blocks * 8192)
        );
    }
    s
}

/// What ran where: the workload and server, the data set against RAM, and an interruption.
fn run_head(s: &mut String, r: &DbReport) {
    let w = &r.workload;
    let _ = writeln!(
        s,
        "iogauge db run: {}, work unit {}, redo stress {}, {} driver{}, on {} {} ({} {}), {:.0} s{}",
        mode_text(&w.mode),
        w.work_unit,
        w.redo_stress.name(),
        w.driver.name(),
        knobs_text(w),
        r.server.engine.product(),
        r.server.version,
        if r.server.private {
            "private cluster"
        } else {
            "server"
        },
        r.server.location,
        r.grid.time.as_secs_f64(),
        if r.grid.ramp.is_zero() {
            String::new()
        } else {
            format!(" after {:.0} s ramp", r.grid.ramp.as_secs_f64())
        }
    );
    label_line(s, &r.meta);
    let d = &r.data_set;
    let _ = writeln!(
        s,
        "  data set {} in {} schemas; RAM {}{}{}",
        mib(d.bytes),
        d.schemas,
        mib(d.ram_bytes),
        d.shared_buffers_bytes
            .map_or(String::new(), |b| format!(", shared_buffers {}", mib(b))),
        r.server.cache_limit.map_or(String::new(), |c| format!(
            ", server limited to {} (cgroup)",
            mib(c)
        ))
    );
    if r.meta.interrupted {
        let _ = writeln!(
            s,
            "  INTERRUPTED: figures cover the {:.1} s that ran",
            r.summary.elapsed_s
        );
    }
}

/// The sessions' operations per second and latencies, reads and updates, and rows/s.
fn sessions_text(s: &mut String, ss: &SessionSummary) {
    let _ = writeln!(
        s,
        "\n{:<8}{:>12} | latency us {:>4}{:>10}{:>10}{:>10}{:>11}",
        "", "ops/s", "mean", "p50", "p90", "p99", "max"
    );
    if ss.reads_s > 0.0 {
        s.push_str(&lat_row("read", ss.reads_s, &ss.read_lat_us));
    }
    if ss.updates_s > 0.0 {
        s.push_str(&lat_row("update", ss.updates_s, &ss.update_lat_us));
    }
    let _ = writeln!(s, "rows/s {:.0}", ss.rows_s);
}

/// The database's own load profile: reads, commits, WAL (InnoDB's redo) and who wrote the
/// buffers (InnoDB: the page cleaner's flushes, and the doublewrite that writes each twice).
fn database_text(s: &mut String, db: &LoadRates, e: Engine) {
    let _ = writeln!(
        s,
        "\ndatabase: logical reads/s {:.0}, physical reads/s {:.0} (avg read {}), commits/s {:.0}, rows updated/s {:.0}",
        db.logical_reads_s,
        db.physical_reads_s,
        match db.avg_read_ms {
            Some(m) => format!("{m:.3} ms"),
            // Reads counted, their time not (track_io_timing off on a user's server).
            None if db.physical_reads_s > 0.0 => "not measured".to_string(),
            None => "-".to_string(),
        },
        db.commits_s,
        db.rows_updated_s
    );
    let b = &db.buffers_written_s;
    // Calls with no time: MariaDB's redo without its probe counted them, untimed.
    let avg = |n: Iops, ms: Option<Millis>| match ms {
        Some(m) => format!(" (avg {m})"),
        None if n.0 > 0.0 => " (time not measured)".to_string(),
        None => String::new(),
    };
    let _ = writeln!(
        s,
        "          {} {:.2} MiB/s, {}syncs/s {:.1}{}",
        e.log(),
        db.log_bytes_s.mib().0,
        // Runs stored before WAL writes were read have none: no "0 writes/s" for them.
        if db.log_writes_s.0 > 0.0 {
            format!(
                "writes/s {:.1}{}, ",
                db.log_writes_s.0,
                avg(db.log_writes_s, db.avg_log_write_ms)
            )
        } else {
            String::new()
        },
        db.log_syncs_s.0,
        avg(db.log_syncs_s, db.avg_log_sync_ms),
    );
    if let Some(i) = &db.innodb {
        let _ = writeln!(
            s,
            "          pages flushed/s {:.0}, written/s {:.0}; doublewrite {:.0} pages/s in {:.1} writes/s; data file reads/s {:.0}, writes/s {:.0}, fsyncs/s {:.1}",
            b.bgwriter,
            i.pages_written_s,
            i.dblwr_pages_s,
            i.dblwr_writes_s,
            i.data_reads_s,
            i.data_writes_s,
            i.data_fsyncs_s
        );
    } else {
        let _ = writeln!(
            s,
            "          buffers written/s: checkpointer {:.0}, bgwriter {:.0}, backends {:.0}",
            b.checkpointer, b.bgwriter, b.backend
        );
    }
    let by_process: Vec<String> = db
        .by_process
        .labelled()
        .iter()
        .filter_map(|(who, r)| {
            let mut parts = Vec::new();
            if r.reads_s > 0.0 {
                parts.push(format!(
                    "reads/s {:.0}{}",
                    r.reads_s,
                    avg(Iops(r.reads_s), r.avg_read_ms.map(Millis))
                ));
            }
            if r.writes_s > 0.0 {
                parts.push(format!(
                    "writes/s {:.0}{}",
                    r.writes_s,
                    avg(Iops(r.writes_s), r.avg_write_ms.map(Millis))
                ));
            }
            (!parts.is_empty()).then(|| format!("{who} {}", parts.join(", ")))
        })
        .collect();
    if !by_process.is_empty() {
        let _ = writeln!(s, "          by process: {}", by_process.join("; "));
    }
}

/// The database's writes against the write bios its disks received: what a mirror
/// multiplies.
fn write_text(s: &mut String, w: &WriteCompare, e: Engine) {
    let what = match e {
        Engine::Postgres => "buffers + WAL",
        Engine::Mariadb => "pages flushed + redo",
    };
    let db = e.product();
    let _ = writeln!(
        s,
        "{db} wrote {:.0}/s ({what}); {} received {:.0} writes/s{}",
        w.db_writes_s,
        w.disks.join("+"),
        w.device_writes_s,
        w.per_db_write
            .map_or(String::new(), |p| format!(": {p:.2} per {db} write"))
    );
}

/// The doublewrite: each page InnoDB flushes goes to the doublewrite area first (in large
/// sequential writes), then to its place, so the bytes written to the disks double.
fn doublewrite_text(s: &mut String, i: &InnoDbRates) {
    let _ = writeln!(
        s,
        "  the doublewrite wrote each of {:.0} pages/s twice: first to its area in {:.1} writes/s ({:.0} pages each), then to its place",
        i.dblwr_pages_s,
        i.dblwr_writes_s,
        i.dblwr_pages_s / i.dblwr_writes_s
    );
}

/// The database's physical reads against the disks' reads: how much the page cache served.
fn cache_text(s: &mut String, c: &CacheCompare, note: bool, e: Engine) {
    let _ = writeln!(
        s,
        "\n{} read {:.0} blocks/s ({:.1} MiB/s) from the OS; {} completed {:.0} reads/s ({:.1} MiB/s){}",
        e.product(),
        c.db_physical_reads_s,
        c.db_read_mb_s,
        c.disks.join("+"),
        c.device_reads_s,
        c.device_read_mb_s,
        c.page_cache_pct
            .map_or(String::new(), |p| format!(": {p:.0}% came from the page cache"))
    );
    if let Some(n) = c.note.as_ref().filter(|_| note) {
        let _ = writeln!(s, "note: {n}");
    }
}
