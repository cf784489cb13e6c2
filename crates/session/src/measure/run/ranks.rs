//! `run` over ranks: every rank's part, gathered and merged on rank 0. Every step that can
//! fail on one rank is agreed on by all before the next collective step (see
//! [`crate::ranks`]).

use crate::finish::Ending;
use crate::measure::Finished;
use crate::ranks::{hostname, Team, LIVE_BYTES, LOST};
use crate::{JobSampler, Session};
use anyhow::{anyhow, Context};
use iogauge_engine::document::{document_of, run_document, Recorded};
use iogauge_engine::{JobOutcome, Target};
use iogauge_model::run::{IntervalReport, RankReport, RunReport};
use iogauge_model::spec::{JobSpec, Region};
use iogauge_model::{Document, Histograms};
use iogauge_stats::{merge_series, Interval, WireInterval};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

/// What a rank sends rank 0 at the end.
#[derive(Serialize, Deserialize)]
struct Part {
    rank: u32,
    host: String,
    targets: Vec<PathBuf>,
    /// Wall clock when the rank's job started (after the barrier), ns since the epoch.
    started_ns: u64,
    /// The rank's own document (its samples left out: its `hardware` is computed already).
    report: Option<RunReport>,
    intervals: Vec<WireInterval>,
    error: Option<String>,
    /// Live reports this rank sent rank 0 (so rank 0 receives every one before finishing).
    live_sent: u64,
    /// Bytes of this part as sent (rank 0 fills it in on receipt).
    #[serde(default)]
    bytes: u64,
    /// This rank's slice of the region of a shared target.
    region: Option<Region>,
}

impl Part {
    /// A rank that sent no part: what rank 0 heard from it live is all there is.
    fn lost(rank: u32, (live_sent, [reads, writes]): (u64, [u64; 2])) -> Part {
        Part {
            rank,
            // Said at the end, with the part that never came.
            host: String::new(),
            targets: Vec::new(),
            started_ns: 0,
            report: None,
            intervals: Vec::new(),
            error: Some(format!(
                "{LOST} (it reported {reads} reads and {writes} writes live before, which are not in the summary)"
            )),
            live_sent,
            bytes: 0,
            region: None,
        }
    }
}

/// The job over ranks, once every rank's targets are prepared: a barrier, the job with its
/// counts live to rank 0, then every rank's part gathered and merged on rank 0.
pub(super) fn run(
    session: &mut Session,
    spec: &JobSpec,
    targets: &[Target],
    region: Option<Region>,
) -> anyhow::Result<Finished> {
    let stop = session.stop().clone();
    let sampler = JobSampler::of(targets, session.tracing());
    let Session { team, feed, .. } = session;
    let Team::Ranks(world) = &*team else {
        unreachable!("called over ranks only")
    };
    let (rank, host) = (world.rank(), hostname());
    let mut talk = world.talk(stop.clone());
    world.barrier();
    let started_ns = now_ns();
    let (outcome, recorded) = sampler.run(spec, |started| {
        let on_interval = &mut |iv: &Interval| {
            let others = talk.interval(iv);
            if rank == 0 {
                // The job's counts live; the latency shown is rank 0's own.
                let mut all = iv.clone();
                all.io.read.ios += others[0];
                all.io.write.ios += others[1];
                all.io.read.bytes.0 += others[2];
                all.io.write.bytes.0 += others[3];
                let mut rep = IntervalReport::of(&all);
                rep.system = sampler.live_system(iv);
                feed.publish(&rep, iv.end.as_secs_f64());
            }
        };
        iogauge_engine::run_telling(spec, targets, None, &stop, on_interval, started)
    });
    if outcome.is_err() {
        stop.store(true, Ordering::Relaxed);
    }
    talk.pass_stop();
    let (mut part, own) = part_of(spec, targets, (rank, &host, started_ns), outcome, recorded);
    part.live_sent = talk.live_sent;
    part.region = region;
    if rank != 0 {
        world.send_part(&serde_json::to_vec(&part)?);
        return Ok(Finished::Member {
            rank,
            error: part.error,
            warnings: sampler.layers_warning().into_iter().collect(),
        });
    }
    let gather = std::time::Instant::now();
    let mut parts = vec![part];
    for (r, bytes) in talk
        .parts(gather, spec.interval)
        .into_iter()
        .enumerate()
        .skip(1)
    {
        let r = r as u32;
        let p = match bytes {
            Some(bytes) => {
                let mut p: Part = serde_json::from_slice(&bytes).context("a rank's part")?;
                p.bytes = bytes.len() as u64;
                talk.finish_live(r, p.live_sent);
                p
            }
            None => Part::lost(r, talk.live_heard(r)),
        };
        parts.push(p);
    }
    let gather_ms = gather.elapsed().as_secs_f64() * 1e3;
    let failed: Vec<String> = parts
        .iter()
        .filter_map(|p| Some(format!("rank {}: {}", p.rank, p.error.as_deref()?)))
        .collect();
    let (mut doc, histograms) = merged(spec, parts, own)?;
    if let Document::Run(r) = &mut doc {
        r.gather_ms = Some(gather_ms);
    }
    doc.warnings_mut().extend(sampler.layers_warning());
    let ending = match failed.is_empty() {
        true => Ending::of(&doc),
        false => Ending::Failed(failed.join("; ")),
    };
    Ok(Finished::lead(doc, histograms, ending))
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Rank 0's own outcome, kept whole for the merged document (its samples and I/O path).
struct Own {
    started: SystemTime,
    recorded: Recorded,
    io_path: Option<iogauge_model::iopath::IoPath>,
    /// Whether rank 0's own job ran (its start is the job's).
    ran: bool,
}

/// This rank's part: its document and its series on the wire.
fn part_of(
    spec: &JobSpec,
    targets: &[Target],
    (rank, host, started_ns): (u32, &str, u64),
    outcome: Result<JobOutcome, iogauge_engine::EngineError>,
    recorded: Recorded,
) -> (Part, Own) {
    let mut part = Part {
        rank,
        host: host.to_string(),
        targets: targets.iter().map(|t| t.info.path.clone()).collect(),
        started_ns,
        report: None,
        intervals: Vec::new(),
        error: None,
        live_sent: 0,
        bytes: 0,
        region: None,
    };
    let mut own = Own {
        started: SystemTime::now(),
        recorded: Recorded {
            error: None,
            ..recorded.clone()
        },
        io_path: None,
        ran: false,
    };
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            part.error = Some(e.to_string());
            return (part, own);
        }
    };
    own.started = outcome.started;
    own.ran = true;
    own.io_path = Some(outcome.io_path.clone());
    let wire: Result<Vec<WireInterval>, _> =
        outcome.intervals.iter().map(Interval::to_wire).collect();
    match wire.map_err(|e| e.to_string()).and_then(|w| {
        run_document(spec.clone(), targets, outcome, recorded)
            .map(|(r, _)| (w, r))
            .map_err(|e| e.to_string())
    }) {
        Ok((w, mut r)) => {
            r.samples.clear();
            part.intervals = w;
            part.report = Some(r);
        }
        Err(e) => part.error = Some(e),
    }
    (part, own)
}

/// Each rank's failure, and its warnings that are not the job's own already, named by rank.
fn rank_warnings(warnings: &mut Vec<String>, parts: &[Part]) {
    for p in parts {
        if let Some(e) = &p.error {
            warnings.push(match p.host.as_str() {
                "" => format!("rank {} failed: {e}", p.rank),
                h => format!("rank {} on {h} failed: {e}", p.rank),
            });
        }
        for w in p.report.iter().flat_map(|r| &r.warnings) {
            // Said once for the job when it is the job's too (an interruption).
            let ranked = format!("rank {}: {w}", p.rank);
            if !warnings.contains(w) && !warnings.contains(&ranked) {
                warnings.push(ranked);
            }
        }
    }
}

/// The job's one document: the ranks' series merged, each rank's part in `ranks`.
fn merged(spec: &JobSpec, parts: Vec<Part>, own: Own) -> anyhow::Result<(Document, Histograms)> {
    let series: Vec<Vec<Interval>> = parts
        .iter()
        .map(|p| p.intervals.iter().map(Interval::from_wire).collect())
        .collect::<Result<_, _>>()?;
    let interrupted = parts
        .iter()
        .any(|p| p.report.as_ref().is_none_or(|r| r.meta.interrupted));
    let infos = parts
        .iter()
        .filter_map(|p| p.report.as_ref())
        .flat_map(|r| r.targets.iter().cloned())
        .collect();
    let one_host = parts
        .iter()
        .filter(|p| !p.host.is_empty())
        .all(|p| p.host == parts[0].host);
    // Rank 0's own I/O path and start, or (when its own job failed) the first rank's that ran:
    // what the others measured is stored either way.
    let io_path = own.io_path.or_else(|| {
        parts
            .iter()
            .find_map(|p| p.report.as_ref()?.options.io_path.clone())
    });
    let started = match own.ran {
        true => own.started,
        false => parts
            .iter()
            .find(|p| p.report.is_some())
            .map_or(own.started, |p| {
                UNIX_EPOCH + std::time::Duration::from_nanos(p.started_ns)
            }),
    };
    let outcome = JobOutcome {
        started,
        intervals: merge_series(&series),
        interrupted,
        steady_wait: None,
        io_path: io_path.ok_or_else(|| {
            let why: Vec<String> = parts
                .iter()
                .filter_map(|p| Some(format!("rank {}: {}", p.rank, p.error.as_deref()?)))
                .collect();
            anyhow!("no rank ran, nothing to store: {}", why.join("; "))
        })?,
        // `--log-bs` is refused over more than one rank (see the cli's `run`).
        log: None,
    };
    // The job's devices: the host's own, when every rank ran on rank 0's host.
    let recorded = match one_host {
        true => own.recorded,
        false => Recorded::default(),
    };
    let (mut report, histograms) = document_of(spec.clone(), infos, outcome, recorded)?;
    // A rank that sent no part has no start.
    let starts: Vec<u64> = parts
        .iter()
        .map(|p| p.started_ns)
        .filter(|t| *t > 0)
        .collect();
    let skew = starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0);
    report.start_skew_ms = Some(skew as f64 / 1e6);
    if !one_host {
        report.warnings.push(
            "the ranks ran on several hosts: the job's device figures are per rank (ranks[].hardware)"
                .into(),
        );
    }
    rank_warnings(&mut report.warnings, &parts);
    report.ranks = parts
        .into_iter()
        .map(|p| RankReport {
            rank: p.rank,
            host: p.host,
            targets: p.targets,
            region: p.region,
            summary: p
                .report
                .as_ref()
                .map(|r| r.summary.clone())
                .unwrap_or_default(),
            hardware: p.report.and_then(|r| r.hardware),
            error: p.error,
            sent_bytes: p.bytes + p.live_sent * LIVE_BYTES,
        })
        .collect();
    Ok((Document::from(report), histograms))
}
