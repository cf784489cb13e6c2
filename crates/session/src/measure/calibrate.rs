//! `iogauge calibrate`: preflight, the three steps (and ORION's matrix), figures and
//! verdicts — on this process, or over ranks (see `ranks`), rank 0 running the search.

#[cfg(any(feature = "mpi", test))]
mod bundle;
#[cfg(feature = "mpi")]
mod ranks;
mod show;

pub use show::Show;

use super::Finished;
use crate::finish::Ending;
use crate::ranks::{hostname, per_rank, rank_seed, slice_of, Team};
use crate::{JobSampler, Session};
use iogauge_engine::calibrate::{self as search, calibration_document, EngineProber};
use iogauge_engine::{Target, TargetSpec};
use iogauge_model::calib::{CalibrateSpec, LargeType};
use iogauge_model::spec::Region;
use iogauge_model::units::fmt_size;
use iogauge_model::Document;

/// Where this process's part runs: over ranks, `{rank}` and `{host}` in every target, the
/// rank's own seed, and its slice of a target every rank shares when they write it or stream
/// over it sequentially (two ranks' streams would otherwise start together). Returns the
/// job's own seed and region, which the document records.
pub fn place(
    team: &Team,
    targets: &mut [TargetSpec],
    spec: &mut CalibrateSpec,
) -> anyhow::Result<(u64, Region)> {
    let job = (spec.setup.seed, spec.setup.region);
    if !team.ranked() {
        return Ok(job);
    }
    let (rank, size, host) = (team.rank(), team.size(), hostname());
    let shared = targets
        .iter()
        .any(|t| !crate::ranks::names_a_rank(&t.path.to_string_lossy()));
    for t in targets.iter_mut() {
        t.path = per_rank(&t.path, rank, &host);
    }
    let streams = spec.large_type == LargeType::Seq;
    if shared && (spec.write_pct > 0 || streams) && size > 1 {
        spec.setup.region =
            team.agreed(slice_of(spec.setup.region, rank, size).map_err(Into::into))?;
    }
    spec.setup.seed = rank_seed(spec.setup.seed, rank);
    Ok(job)
}

/// What the calibration runs on: the spec, the preflight of the tested span, the targets;
/// and a note for the user when `--cache-size` is larger than the span.
pub fn context(
    spec: &CalibrateSpec,
    targets: &[Target],
) -> anyhow::Result<(search::Context, Option<String>)> {
    let space = search::tested_bytes(spec, targets)?;
    let span: u64 = space.iter().sum();
    // The engine caps each flush to the span (reading more re-reads the same blocks).
    let note = spec.cache_size.filter(|c| *c > span).map(|cache| {
        format!(
            "--cache-size {} is larger than the tested span ({}): the flush before each point reads the span instead; a cache that holds the whole span serves the points from memory, so test a span larger than the cache",
            fmt_size(cache),
            fmt_size(span)
        )
    });
    let facts: Vec<_> = targets
        .iter()
        .zip(&space)
        .map(|(t, b)| (t.info.path.clone(), *b))
        .collect();
    let ctx = search::Context {
        spec: spec.clone(),
        preflight: iogauge_probe::preflight(&facts),
        targets: targets.iter().map(|t| t.info.clone()).collect(),
        io_uring: match iogauge_engine::probe_uring() {
            Ok(()) => "supported (READ_FIXED, WRITE_FIXED)".to_string(),
            Err(e) => format!("unavailable: {e}"),
        },
        started_at: crate::now(),
    };
    Ok((ctx, note))
}

/// Runs the calibration of `ctx.spec` on `targets` (this rank's share of each point over
/// ranks; `job` from [`place`]) and returns the document to store.
pub fn calibrate(
    session: &mut Session,
    targets: &[Target],
    ctx: search::Context,
    job: (u64, Region),
    show: Show<'_>,
) -> anyhow::Result<Finished> {
    match &session.team {
        #[cfg(feature = "mpi")]
        Team::Ranks(_) => ranks::calibrate(session, targets, ctx, job, show),
        _ => {
            let _ = job;
            alone(session, targets, ctx, show)
        }
    }
}

fn alone(
    session: &Session,
    targets: &[Target],
    ctx: search::Context,
    show: Show<'_>,
) -> anyhow::Result<Finished> {
    (show.head)(&search::head(&ctx))?;
    let spec = ctx.spec.clone();
    let sampler = JobSampler::of(targets, session.tracing());
    let mut prober = EngineProber {
        targets,
        spec: &spec,
        stop: session.stop(),
        on_point: show.point,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        runs: 0,
        sampling: &sampler,
    };
    let outcome = search::calibrate(&mut prober, &spec)?;
    let (report, histograms) = calibration_document(ctx, &outcome)?;
    let ending = Ending::of_meta(&report.meta);
    let mut doc = Document::from(report);
    doc.warnings_mut().extend(sampler.layers_warning());
    Ok(Finished::lead(doc, histograms, ending))
}
