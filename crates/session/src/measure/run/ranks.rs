//! `run` over ranks: every rank's part merged up the binomial tree (see
//! [`crate::ranks::Shape`]) into rank 0's one document. Every step that can fail on one rank
//! is agreed on by all before the next collective step (see [`crate::ranks`]).

use super::bundle::{Part, Row};
use super::document::{document, Own};
use super::over::Over;
use crate::finish::Ending;
use crate::measure::Finished;
use crate::ranks::{hostname, LiveAgg, Shape, Team};
use crate::{JobSampler, Session};
use iogauge_engine::document::{run_document, Recorded};
use iogauge_engine::{JobOutcome, Target};
use iogauge_model::live::{LiveRanks, RankRate};
use iogauge_model::run::{GatherReport, IntervalReport};
use iogauge_model::spec::JobSpec;
use iogauge_stats::Interval;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

/// The job over ranks, once every rank's targets are prepared: a barrier, the job with its
/// counts live up the tree, then every rank's part merged up the tree to rank 0.
pub(super) fn run(
    session: &mut Session,
    spec: &JobSpec,
    targets: &[Target],
    over: Over,
) -> anyhow::Result<Finished> {
    let stop = session.stop().clone();
    let sampler = JobSampler::of(targets, session.tracing());
    let Session { team, feed, .. } = session;
    let Team::Ranks(world) = &*team else {
        unreachable!("called over ranks only")
    };
    let (rank, size, host) = (world.rank(), world.size(), hostname());
    let shape = gather_shape();
    let mut talk = world.talk(stop.clone(), shape, spec.interval);
    world.barrier();
    let started_ns = now_ns();
    let (outcome, recorded) = sampler.run(spec, |started| {
        let on_interval = &mut |iv: &Interval| {
            // Rank 0: the job's counts live, with the ranks they hold; the latency shown is
            // rank 0's own.
            if let Some(all) = talk.interval(iv) {
                let mut shown = live_report(iv, &all);
                shown.system = sampler.live_system(iv);
                let ranks = live_ranks(&all, size, &shown);
                feed.publish(&shown, iv.end.as_secs_f64(), Some(ranks));
            }
        };
        iogauge_engine::run_telling(spec, targets, None, &stop, on_interval, started)
    });
    if outcome.is_err() {
        stop.store(true, Ordering::Relaxed);
    }
    talk.pass_stop();
    let mut row = Row {
        rank,
        host,
        targets: targets.iter().map(|t| t.info.path.clone()).collect(),
        infos: targets.iter().map(|t| t.info.clone()).collect(),
        region: over.region,
        started_ns,
        ..Row::default()
    };
    let own = Own {
        started: outcome.as_ref().map_or(SystemTime::now(), |o| o.started),
        recorded: Recorded {
            error: None,
            ..recorded.clone()
        },
        ran: outcome.is_ok(),
    };
    let (intervals, io_path) = own_part(spec, targets, &mut row, outcome, recorded, over);
    row.sent_bytes = talk.live_sent_bytes;
    let error = row.error.clone();
    let gather = std::time::Instant::now();
    let Some((job, got)) =
        talk.gather(Part::own(row, intervals, io_path), gather, spec.interval)?
    else {
        return Ok(Finished::Member {
            rank,
            error,
            warnings: sampler.layers_warning().into_iter().collect(),
        });
    };
    let failed: Vec<String> = job
        .rows
        .iter()
        .filter_map(|r| Some(format!("rank {}: {}", r.rank, r.error.as_deref()?)))
        .collect();
    let cost = GatherReport {
        shape: match shape {
            Shape::Binomial => "tree",
            Shape::Star => "flat",
        }
        .into(),
        gather_ms: got.wait_ms,
        fold_ms: got.fold_ms,
        merge_ms: 0.0,
        received_bytes: got.received_bytes,
        messages: got.messages,
        live_bytes: talk.live_received_bytes,
    };
    let (mut doc, histograms) = document(spec, job, own, cost)?;
    doc.warnings_mut().extend(sampler.layers_warning());
    let ending = match failed.is_empty() {
        true => Ending::of(&doc),
        false => Ending::Failed(failed.join("; ")),
    };
    Ok(Finished::lead(doc, histograms, ending))
}

/// The shape the parts take to rank 0: the binomial tree, or with `IOGAUGE_MPI_GATHER=flat`
/// (set on every rank: `mpirun -x`) every part straight to rank 0, the flat gather
/// `bench/mpi-scale` measures the tree against.
fn gather_shape() -> Shape {
    match std::env::var("IOGAUGE_MPI_GATHER").as_deref() {
        Ok("flat") => Shape::Star,
        _ => Shape::Binomial,
    }
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Rank 0's interval with the job's counts in place of its own (its latency kept).
fn live_report(iv: &Interval, all: &LiveAgg) -> IntervalReport {
    let mut job = iv.clone();
    job.io.read.ios = all.io[0];
    job.io.write.ios = all.io[1];
    job.io.read.bytes.0 = all.io[2];
    job.io.write.bytes.0 = all.io[3];
    IntervalReport::of(&job)
}

/// The ranks a live interval holds, the slowest and fastest as IOPS over the interval.
fn live_ranks(all: &LiveAgg, size: u32, rep: &IntervalReport) -> LiveRanks {
    let per_s = |ios: u64| match rep.dur_s > 0.0 {
        true => ios as f64 / rep.dur_s,
        false => 0.0,
    };
    LiveRanks {
        heard: all.ranks,
        of: size,
        slowest: RankRate {
            rank: all.slowest.1,
            iops: per_s(all.slowest.0),
        },
        fastest: RankRate {
            rank: all.fastest.1,
            iops: per_s(all.fastest.0),
        },
    }
}

/// This rank's row filled in from its outcome (its summary, devices, warnings, its series
/// with `--keep-rank-series`), and its series and I/O path for the merge.
fn own_part(
    spec: &JobSpec,
    targets: &[Target],
    row: &mut Row,
    outcome: Result<JobOutcome, iogauge_engine::EngineError>,
    recorded: Recorded,
    over: Over,
) -> (Vec<Interval>, Option<iogauge_model::iopath::IoPath>) {
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            row.error = Some(e.to_string());
            row.interrupted = true;
            return (Vec::new(), None);
        }
    };
    let intervals = outcome.intervals.clone();
    let io_path = outcome.io_path.clone();
    match run_document(spec.clone(), targets, outcome, recorded) {
        Ok((r, _)) => {
            row.summary = Some(r.summary);
            row.hardware = r.hardware;
            row.interrupted = r.meta.interrupted;
            row.warnings = r.warnings;
            if over.keep_series {
                row.intervals = r.intervals;
            }
        }
        Err(e) => {
            row.error = Some(e.to_string());
            row.interrupted = true;
        }
    }
    (intervals, Some(io_path))
}
