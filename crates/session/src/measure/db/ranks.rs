//! `db run` over ranks: SLOB across RAC instances, two ways.
//!
//! - `--dsn` (one server): the job's sessions are shared between the ranks, each a block of
//!   them numbered as one process numbers them (readers first), so every session keeps its
//!   schema and its random stream; the server's load profile and wait events are rank 0's
//!   sampler's (it sees every rank's sessions).
//! - `--dir PATH.{rank}` (a private cluster per rank, say on shared storage: a consolidation
//!   test): every rank runs the whole workload on its own server; the load profiles and the
//!   wait events of the servers add up.
//!
//! Either way the ranks start their sessions together (every rank's sessions connected, then
//! one all-reduce), the sessions' histograms are merged exactly up the binomial tree (see
//! [`crate::ranks::Shape`]), each rank's own summary and load profile is kept in `ranks`,
//! and only rank 0 stores and prints.

use super::bundle::{DbPart, DbRow};
use super::sessions::{ending, layers, measure, Shared};
use crate::finish::Ending;
use crate::measure::Finished;
use crate::ranks::{hostname, Shape, Team};
use crate::Session;
use iogauge_db::{db_document, driver, Prepared};
use iogauge_model::db::outcome::DbOutcome;
use iogauge_model::db::report::{DbRank, DbReport, DbSummary};
use iogauge_model::Document;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// This rank's row and part from its outcome and its own summary.
fn part_of(
    (rank, host): (u32, &str),
    p: &Prepared,
    own_servers: bool,
    outcome: &Result<DbOutcome, String>,
    summary: Option<DbSummary>,
) -> DbPart {
    let sessions = p.workload.sessions();
    let mut row = DbRow {
        rank,
        host: host.to_string(),
        location: p.server.location.clone(),
        first_session: p.workload.first_session,
        sessions,
        offset: match own_servers {
            true => rank * sessions,
            false => p.workload.first_session,
        },
        interrupted: true,
        summary,
        ..DbRow::default()
    };
    let intervals = match outcome {
        Ok(o) => {
            row.per_session = o.per_session.clone();
            row.session_schema = o.session_schema.clone();
            row.interrupted = o.interrupted;
            row.error = o.error.clone();
            o.intervals.clone()
        }
        Err(e) => {
            row.error = Some(e.clone());
            Vec::new()
        }
    };
    DbPart::own(row, intervals, own_servers || rank == 0)
}

/// The database run over ranks, once every rank's server is prepared and its share made:
/// the sessions started together, their histograms merged exactly on rank 0, each rank's own
/// summary and load profile kept in `ranks`.
pub(super) fn run(
    session: &mut Session,
    mut p: Prepared,
    shared: Shared,
) -> anyhow::Result<Finished> {
    let stop = session.stop().clone();
    let Team::Ranks(world) = &session.team else {
        unreachable!("called over ranks only")
    };
    let (rank, size, host) = (world.rank(), world.size(), hostname());
    let own_servers = shared.own_servers;
    let layers = layers(&p, session.tracing());
    let mut talk = world.talk(stop.clone(), Shape::Binomial, p.grid.interval);
    let started_at = Instant::now();
    let mut ready_called = false;
    let (outcome, samples, sample_error) = {
        let mut last = Instant::now();
        let beat = p.grid.interval;
        let talk = &mut talk;
        let ready_called = &mut ready_called;
        let sync = driver::Sync {
            ready: &mut || {
                *ready_called = true;
                world.all_ok(true)
            },
            tick: &mut || talk.tick(beat, &mut last),
        };
        measure(&p, &layers, stop.clone(), sync)
    };
    if !ready_called {
        // This rank failed before its sessions were ready: the others, waiting in theirs,
        // learn it here and do not start.
        world.all_ok(false);
    }
    let outcome = outcome.map_err(|e| e.to_string());
    let lost = outcome.as_ref().map_or(true, |o| o.error.is_some());
    if lost {
        stop.store(true, Ordering::Relaxed);
    }
    talk.pass_stop();
    // The rank's own document, for its summary.
    let own = match &outcome {
        Ok(out) => p
            .document(out, samples.clone(), sample_error.clone())
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.clone()),
    };
    let summary = own.as_ref().ok().map(|(r, _)| r.summary.clone());
    let mut part = part_of((rank, &host), &p, own_servers, &outcome, summary);
    if let (Err(e), None) = (&own, &part.rows[0].error) {
        part.rows[0].error = Some(e.clone());
    }
    part.rows[0].sent = talk.live_sent_bytes;
    let error = part.rows[0].error.clone();
    // The server's shutdown warnings and the tracer's, this rank's to say.
    let stopped = |p: &mut Prepared| -> Vec<String> {
        let mut w = p.stop_server(lost);
        w.extend(layers.warning());
        w
    };
    if rank != 0 {
        // The part goes up first, then the server stops: a clean shutdown can take longer
        // than a parent waits for a silent rank once a job has stopped. Its shutdown's
        // warnings are this rank's to say.
        talk.gather(part, started_at, p.grid.interval)?;
        return Ok(Finished::Member {
            rank,
            error,
            warnings: stopped(&mut p),
        });
    }
    let shutdown = stopped(&mut p);
    let own = own.ok();
    let (mut whole, _) = talk.gather_at_root(part, started_at, p.grid.interval)?;
    let merged = whole.outcome(outcome.as_ref().ok(), own_servers)?;
    let one_host = whole
        .rows
        .iter()
        .filter(|q| !q.host.is_empty())
        .all(|q| q.host == host);
    let mut ctx = p.context(if one_host { samples } else { Vec::new() });
    if let (false, Some(job)) = (own_servers, shared.workload) {
        ctx.workload = job;
    }
    let (mut report, histograms) =
        db_document(&merged, ctx, job_warnings(own_servers, size, one_host))?;
    // Rank 0's own warnings (its preflight, its server), each once.
    for w in own.iter().flat_map(|(r, _)| &r.warnings).chain(&shutdown) {
        if !report.warnings.contains(w) {
            report.warnings.push(w.clone());
        }
    }
    let failed = ranks_into(&mut report, std::mem::take(&mut whole.rows));
    let ending = match failed.is_empty() {
        true => ending(&merged),
        false => Ending::Failed(failed.join("; ")),
    };
    Ok(Finished::lead(Document::from(report), histograms, ending))
}

/// What the job's document says of how its ranks ran: each on its own server, or on
/// several hosts.
fn job_warnings(own_servers: bool, size: u32, one_host: bool) -> Vec<String> {
    let mut warnings = Vec::new();
    if own_servers && size > 1 {
        warnings.push(format!(
            "{size} ranks, each running the whole workload on its own server: sessions, load profile and wait events are the servers' sums"
        ));
    }
    if !one_host {
        warnings
            .push("the ranks ran on several hosts: the device figures are rank 0's host's".into());
    }
    warnings
}

/// Each rank's row in the report, a failed rank's error among its warnings; returns the
/// failures, one "rank N: error" each.
fn ranks_into(report: &mut DbReport, rows: Vec<DbRow>) -> Vec<String> {
    let mut failed = Vec::new();
    for q in rows {
        let r = q.rank;
        if let Some(e) = &q.error {
            failed.push(format!("rank {r}: {e}"));
            report.warnings.push(format!("rank {r} failed: {e}"));
        }
        report.ranks.push(DbRank {
            rank: r,
            host: q.host,
            location: q.location,
            first_session: q.first_session,
            sessions: q.sessions,
            summary: q.summary.unwrap_or_default(),
            error: q.error,
            sent_bytes: q.sent,
        });
    }
    failed
}
