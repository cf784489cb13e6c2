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
//! one all-reduce), the sessions' histograms are merged exactly on rank 0, each rank's own
//! summary and load profile is kept in `ranks`, and only rank 0 stores and prints.

use super::sessions::{ending, layers, measure, Shared};
use crate::finish::Ending;
use crate::measure::Finished;
use crate::ranks::{hostname, Talk, Team, LIVE_BYTES, LOST};
use crate::Session;
use anyhow::Context;
use iogauge_model::db::aas::Aas;
use iogauge_model::db::outcome::{DbInterval, DbOutcome, SessionTotals};
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::db::report::{DbRank, DbReport, DbSummary};
use iogauge_model::Document;
use iogauge_pg::{db_document, driver, Prepared};
use iogauge_stats::{HistError, LatHist};
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// One interval of a rank's run as sent to rank 0 (histograms encoded).
#[derive(Serialize, Deserialize)]
struct WireDb {
    index: u32,
    start_ns: u64,
    end_ns: u64,
    ramp: bool,
    read_ops: u64,
    update_ops: u64,
    rows_read: u64,
    rows_updated: u64,
    read_lat: Vec<u8>,
    update_lat: Vec<u8>,
    per_session: Vec<u64>,
    load: LoadDelta,
    aas: Aas,
}

impl WireDb {
    fn of(iv: &DbInterval) -> Result<WireDb, HistError> {
        let s = &iv.sessions;
        Ok(WireDb {
            index: iv.index,
            start_ns: iv.start_ns,
            end_ns: iv.end_ns,
            ramp: iv.ramp,
            read_ops: s.read_ops,
            update_ops: s.update_ops,
            rows_read: s.rows_read,
            rows_updated: s.rows_updated,
            read_lat: s.read_lat.encode()?,
            update_lat: s.update_lat.encode()?,
            per_session: s.per_session.clone(),
            load: iv.load.clone(),
            aas: iv.aas.clone(),
        })
    }

    fn interval(self) -> Result<DbInterval, HistError> {
        Ok(DbInterval {
            index: self.index,
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            ramp: self.ramp,
            sessions: SessionTotals {
                read_ops: self.read_ops,
                update_ops: self.update_ops,
                rows_read: self.rows_read,
                rows_updated: self.rows_updated,
                read_lat: LatHist::decode(&self.read_lat)?,
                update_lat: LatHist::decode(&self.update_lat)?,
                per_session: self.per_session,
            },
            load: self.load,
            aas: self.aas,
        })
    }
}

/// What a rank sends rank 0 at the end.
#[derive(Serialize, Deserialize)]
struct Part {
    host: String,
    location: String,
    first_session: u32,
    sessions: u32,
    intervals: Vec<WireDb>,
    per_session: Vec<u64>,
    session_schema: Vec<u32>,
    interrupted: bool,
    error: Option<String>,
    summary: Option<DbSummary>,
    live_sent: u64,
}

impl Part {
    /// A rank that sent no part.
    fn lost() -> Part {
        Part {
            host: String::new(),
            location: String::new(),
            first_session: 0,
            sessions: 0,
            intervals: Vec::new(),
            per_session: Vec::new(),
            session_schema: Vec::new(),
            interrupted: true,
            error: Some(LOST.into()),
            summary: None,
            live_sent: 0,
        }
    }
}

/// A rank's outcome and its own summary, as a part.
fn part_of(
    host: &str,
    p: &Prepared,
    outcome: &Result<DbOutcome, String>,
    summary: Option<DbSummary>,
    live_sent: u64,
) -> Part {
    let mut part = Part {
        host: host.to_string(),
        location: p.server.location.clone(),
        first_session: p.workload.first_session,
        sessions: p.workload.sessions(),
        intervals: Vec::new(),
        per_session: Vec::new(),
        session_schema: Vec::new(),
        interrupted: true,
        error: None,
        summary,
        live_sent,
    };
    match outcome {
        Ok(o) => {
            match o.intervals.iter().map(WireDb::of).collect() {
                Ok(w) => part.intervals = w,
                Err(e) => part.error = Some(e.to_string()),
            }
            part.per_session = o.per_session.clone();
            part.session_schema = o.session_schema.clone();
            part.interrupted = o.interrupted;
            part.error = part.error.take().or_else(|| o.error.clone());
        }
        Err(e) => part.error = Some(e.clone()),
    }
    part
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
    let mut talk = world.talk(stop.clone());
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
    let mut part = part_of(&host, &p, &outcome, summary, talk.live_sent);
    if let (Err(e), None) = (&own, &part.error) {
        part.error = Some(e.clone());
    }
    // The server's shutdown warnings and the tracer's, this rank's to say.
    let stopped = |p: &mut Prepared| -> Vec<String> {
        let mut w = p.stop_server(lost);
        w.extend(layers.warning());
        w
    };
    if rank != 0 {
        // The part goes first, then the server stops: a clean shutdown can take longer than
        // rank 0 waits for a silent rank once a job has stopped. Its shutdown's warnings are
        // this rank's to say.
        world.send_part(&serde_json::to_vec(&part)?);
        return Ok(Finished::Member {
            rank,
            error: part.error,
            warnings: stopped(&mut p),
        });
    }
    let shutdown = stopped(&mut p);
    let own = own.ok();
    let mut parts = gathered(&mut talk, part, started_at, p.grid.interval)?;
    let merged = merge(&mut parts, own_servers, outcome.as_ref().ok())?;
    let one_host = parts
        .iter()
        .filter(|(_, q, _)| !q.host.is_empty())
        .all(|(_, q, _)| q.host == host);
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
    let failed = ranks_into(&mut report, parts);
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

/// Rank 0's own part first, then every other rank's as it arrives (a silent rank's as lost),
/// each with its intervals taken out and the bytes it sent.
fn gathered(
    talk: &mut Talk<'_>,
    mut own: Part,
    started_at: Instant,
    interval: Duration,
) -> anyhow::Result<Vec<(Vec<WireDb>, Part, u64)>> {
    let mut parts = vec![(std::mem::take(&mut own.intervals), own, 0u64)];
    for (r, bytes) in talk
        .parts(started_at, interval)
        .into_iter()
        .enumerate()
        .skip(1)
    {
        match bytes {
            Some(b) => {
                let mut q: Part = serde_json::from_slice(&b).context("a rank's part")?;
                talk.finish_live(r as u32, q.live_sent);
                parts.push((std::mem::take(&mut q.intervals), q, b.len() as u64));
            }
            None => parts.push((Vec::new(), Part::lost(), 0)),
        }
    }
    Ok(parts)
}

/// Each rank's row in the report, a failed rank's error among its warnings; returns the
/// failures, one "rank N: error" each.
fn ranks_into(report: &mut DbReport, parts: Vec<(Vec<WireDb>, Part, u64)>) -> Vec<String> {
    let mut failed = Vec::new();
    for (r, (_, q, bytes)) in parts.into_iter().enumerate() {
        if let Some(e) = &q.error {
            failed.push(format!("rank {r}: {e}"));
            report.warnings.push(format!("rank {r} failed: {e}"));
        }
        report.ranks.push(DbRank {
            rank: r as u32,
            host: q.host,
            location: q.location,
            first_session: q.first_session,
            sessions: q.sessions,
            summary: q.summary.unwrap_or_default(),
            error: q.error,
            sent_bytes: bytes + q.live_sent * LIVE_BYTES,
        });
    }
    failed
}

/// The ranks' outcomes as one: intervals by index, sessions added (their numbers laid end
/// to end), the servers' load and wait events added when each rank had its own server, else
/// rank 0's (its sampler saw the one server whole).
fn merge(
    parts: &mut [(Vec<WireDb>, Part, u64)],
    own_servers: bool,
    own: Option<&DbOutcome>,
) -> anyhow::Result<DbOutcome> {
    let mut out = DbOutcome {
        server_version: own.map(|o| o.server_version.clone()).unwrap_or_default(),
        started: own.and_then(|o| o.started),
        // Rank 0's sampler saw the one server whole; servers of their own are not merged.
        relations: own
            .filter(|_| !own_servers)
            .and_then(|o| o.relations.clone()),
        ..DbOutcome::default()
    };
    let mut by_index: std::collections::BTreeMap<u32, DbInterval> = Default::default();
    let mut offset = 0usize;
    for (r, (wire, q, _)) in parts.iter_mut().enumerate() {
        out.interrupted |= q.interrupted;
        if out.error.is_none() {
            out.error = q.error.clone();
        }
        let n = q.per_session.len();
        for w in std::mem::take(wire) {
            let mut iv = w.interval()?;
            let mut shifted = vec![0; offset];
            shifted.append(&mut iv.sessions.per_session);
            iv.sessions.per_session = shifted;
            match by_index.get_mut(&iv.index) {
                None => {
                    if r > 0 && !own_servers {
                        iv.load = LoadDelta::default();
                        iv.aas = Aas::default();
                    }
                    by_index.insert(iv.index, iv);
                }
                Some(acc) => {
                    acc.sessions += &iv.sessions;
                    acc.end_ns = acc.end_ns.max(iv.end_ns);
                    if own_servers {
                        acc.load += &iv.load;
                        acc.aas.add_server(&iv.aas);
                    }
                }
            }
        }
        out.per_session.extend(q.per_session.iter().copied());
        out.session_schema.extend(q.session_schema.iter().copied());
        offset += n;
    }
    out.intervals = by_index.into_values().collect();
    Ok(out)
}
