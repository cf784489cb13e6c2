//! A database run's charts, as a DBA reads AWR and collectl: the sessions' operations and
//! their latency, the database's load profile (physical reads, blocks written, WAL), average
//! active sessions stacked by wait event, then the devices and CPU and the latency curves.

use super::curves::curves;
use super::item::Group;
use super::system::{system_charts, Timeline};
use crate::svg::aas::aas;
use crate::svg::line::{line_chart, Axis, Series};
use crate::svg::page::esc;
use crate::svg::scale::Fmt;
use iogauge_campaign::digest::DigestError;
use iogauge_model::db::report::{DbIntervalReport, DbReport};

fn mid(iv: &DbIntervalReport) -> f64 {
    iv.t_s + iv.dur_s.max(0.0) / 2.0
}

type Figure = fn(&DbIntervalReport) -> Option<f64>;

pub(super) fn section(out: &mut String, g: &Group<DbReport>) -> Result<(), DigestError> {
    out.push_str("<h2 id=\"db\">Database runs</h2>\n<p class=\"note\">Per interval: what the sessions did, what the database's statistics say it read and wrote (PostgreSQL's \"physical\" reads include those the page cache served; MariaDB's, with O_DIRECT, do not), and what the sessions waited on.</p>\n<div class=\"charts\">");
    session_charts(out, g);
    load_charts(out, g);
    out.push_str("</div>\n<h3>Average active sessions</h3>\n<p class=\"note\">The test sessions by wait event (CPU when on CPU), sampled from pg_stat_activity; one chart per run.</p>\n");
    for (it, _) in &g.items {
        out.push_str("<h4>");
        esc(out, &it.name());
        out.push_str("</h4>\n");
        aas(out, &it.digest);
    }
    super::layers::db_section(out, g);
    system_charts(out, g, |r| {
        let ivs = r
            .intervals
            .iter()
            .map(|iv| (iv.t_s, iv.dur_s, iv.system.as_ref()));
        Timeline::of(
            ivs,
            r.cache.as_ref().map_or_else(Vec::new, |c| c.disks.clone()),
            &r.samples,
        )
    });
    curves(out, g)
}

/// One series per result and figure of `parts` that is above zero somewhere.
fn lines(g: &Group<DbReport>, parts: &[(&str, Figure)]) -> Vec<Series> {
    let mut v = Vec::new();
    for (it, r) in &g.items {
        for (k, (name, f)) in parts.iter().enumerate() {
            let pts: Vec<(f64, Option<f64>)> =
                r.intervals.iter().map(|iv| (mid(iv), f(iv))).collect();
            if pts.iter().any(|(_, y)| y.is_some_and(|y| y > 0.0)) {
                v.push(g.series(it, k, name, pts));
            }
        }
    }
    v
}

/// What the sessions did: reads and updates per second, and their p99 latencies.
fn session_charts(out: &mut String, g: &Group<DbReport>) {
    let ops = lines(
        g,
        &[
            ("reads/s", |iv| Some(iv.sessions.reads_s)),
            ("updates/s", |iv| Some(iv.sessions.updates_s)),
        ],
    );
    line_chart(
        out,
        &g.time_chart(
            "ops",
            "session operations",
            Axis::linear("operations/s", Fmt::Si),
            ops,
        ),
    );
    let lat = lines(
        g,
        &[
            ("read p99", |iv| {
                (iv.sessions.reads_s > 0.0).then_some(iv.sessions.read_lat_us.p99)
            }),
            ("update p99", |iv| {
                (iv.sessions.updates_s > 0.0).then_some(iv.sessions.update_lat_us.p99)
            }),
        ],
    );
    line_chart(
        out,
        &g.time_chart(
            "latency",
            "operation latency p99",
            Axis::log("latency per operation", Fmt::Micros),
            lat,
        ),
    );
}

/// What the group's log is called: its engine's name for it (PostgreSQL's WAL, InnoDB's
/// redo), or "log" for a group of both engines.
fn log_name(g: &Group<DbReport>) -> &'static str {
    let mut engines = g.items.iter().map(|(_, r)| r.server.engine);
    match engines.next() {
        Some(e) if engines.all(|o| o == e) => e.log(),
        _ => "log",
    }
}

/// The database's load profile (physical reads, blocks written, log writes, commits) and
/// its log volume, the log named as the engine names it.
fn load_charts(out: &mut String, g: &Group<DbReport>) {
    let log = log_name(g);
    let writes = format!("{log} writes/s");
    let volume = format!("{log} MiB/s");
    let load = lines(
        g,
        &[
            ("physical reads/s", |iv| Some(iv.db.physical_reads_s)),
            ("blocks written/s", |iv| {
                Some(iv.db.buffers_written_s.total())
            }),
            (&writes, |iv| Some(iv.db.log_writes_s.0)),
            ("commits/s", |iv| Some(iv.db.commits_s)),
        ],
    );
    line_chart(
        out,
        &g.time_chart(
            "load",
            "load profile",
            Axis::linear("per second", Fmt::Si),
            load,
        ),
    );
    let wal = lines(g, &[(&volume, |iv| Some(iv.db.log_bytes_s.mib().0))]);
    line_chart(
        out,
        &g.time_chart(
            "wal",
            &format!("{log} volume"),
            Axis::linear("MiB/s", Fmt::Si),
            wal,
        ),
    );
}
