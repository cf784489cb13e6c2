//! `iogauge run`: one synthetic job. Over ranks every rank runs the job on its own targets
//! (`{rank}` and `{host}` in `--target` name per-rank files), all start together after a
//! barrier, and rank 0 merges every rank's interval series with its HDR histograms exactly
//! (the same intervals by index, histograms added) into ONE run: `summary` and `intervals`
//! of the whole job, `ranks` with each rank's own summary and devices, and the start skew.

#[cfg(any(feature = "mpi", test))]
mod bundle;
#[cfg(feature = "mpi")]
mod document;
mod over;
#[cfg(feature = "mpi")]
mod ranks;

pub use over::Over;

use super::Finished;
use crate::finish::Ending;
use crate::ranks::{hostname, per_rank, rank_seed, slice_of, Team};
use crate::{JobSampler, Session};
use iogauge_engine::document::run_document;
use iogauge_engine::{Target, TargetSpec};
use iogauge_model::run::IntervalReport;
use iogauge_model::spec::{JobSpec, Region};
use iogauge_model::Document;
use iogauge_stats::Interval;

/// Where this process's part of the job runs: over ranks, `{rank}` and `{host}` replaced in
/// every target, the rank's own seed, and — when every rank writes one target they share
/// (named without either) and `--shared-offsets` is not given — its slice of the region,
/// which is returned.
pub fn place(
    team: &Team,
    targets: &mut [TargetSpec],
    spec: &mut JobSpec,
    shared_offsets: bool,
) -> anyhow::Result<Option<Region>> {
    if !team.ranked() {
        return Ok(None);
    }
    let (rank, size, host) = (team.rank(), team.size(), hostname());
    let shared = targets
        .iter()
        .any(|t| !crate::ranks::names_a_rank(&t.path.to_string_lossy()));
    for t in targets.iter_mut() {
        t.path = per_rank(&t.path, rank, &host);
    }
    spec.seed = rank_seed(spec.seed, rank);
    // Writes to a target every rank shares: each rank its own slice of the region.
    if shared && spec.rw.writes() && !shared_offsets && size > 1 {
        spec.region = team.agreed(slice_of(spec.region, rank, size).map_err(Into::into))?;
        return Ok(Some(spec.region));
    }
    Ok(None)
}

/// Runs the job of `spec` on `targets` (this rank's part of it over ranks, as `over` says),
/// with its log writer on `log` (`--log-target`; alone only: the command refuses `--log-bs`
/// over several ranks), publishing each interval live and showing it with `show` (alone
/// only), and returns the document to store.
pub fn run(
    session: &mut Session,
    spec: &JobSpec,
    targets: &[Target],
    log: Option<&Target>,
    over: Over,
    show: &mut dyn FnMut(f64, &IntervalReport),
) -> anyhow::Result<Finished> {
    match &session.team {
        #[cfg(feature = "mpi")]
        Team::Ranks(_) => ranks::run(session, spec, targets, over),
        _ => {
            let _ = over;
            alone(session, spec, targets, log, show)
        }
    }
}

fn alone(
    session: &mut Session,
    spec: &JobSpec,
    targets: &[Target],
    log: Option<&Target>,
    show: &mut dyn FnMut(f64, &IntervalReport),
) -> anyhow::Result<Finished> {
    let stop = session.stop().clone();
    let preflight = preflight_of(targets);
    let sampler = JobSampler::of(targets, session.tracing());
    let (outcome, recorded) = sampler.run(spec, |started| {
        let on_interval = &mut |iv: &Interval| {
            let (mut rep, at) = (IntervalReport::of(iv), iv.end.as_secs_f64());
            rep.system = sampler.live_system(iv);
            session.publish(&rep, at);
            show(at, &rep);
        };
        iogauge_engine::run_telling(spec, targets, log, &stop, on_interval, started)
    });
    let (report, histograms) = run_document(spec.clone(), targets, outcome?, recorded)?;
    let mut report = report;
    // A run warns of fragmented files; the span and chain, its own lines, stay in `preflight`.
    report
        .warnings
        .extend(iogauge_probe::layout_warnings(&preflight));
    report.preflight = Some(preflight);
    let mut doc = Document::from(report);
    doc.warnings_mut().extend(sampler.layers_warning());
    let ending = Ending::of(&doc);
    Ok(Finished::lead(doc, histograms, ending))
}

/// What the OS says about the opened targets (each created and pre-filled by now, so its
/// files' layout is the one the run reads).
fn preflight_of(targets: &[Target]) -> iogauge_model::preflight::Preflight {
    let facts: Vec<_> = targets
        .iter()
        .map(|t| (t.info.path.clone(), t.info.size))
        .collect();
    iogauge_probe::preflight(&facts)
}
