//! `calibrate` over ranks: CALIBRATE_IO across RAC instances. Rank 0 runs the search; for
//! each point it tells every rank the point (one broadcast), each rank takes its share of the
//! outstanding I/Os (`n / N`, the first `n mod N` ranks one more) over its own workers, all
//! flush and start together (the all-reduce agreeing that every flush went well is the
//! barrier between points), and the ranks' interval series and histograms are merged
//! exactly up the binomial tree (see [`crate::ranks::Shape`]) into the point the search
//! decides from. max_iops and max_mbps are the whole
//! job's; max_pmbps stays one process on one host (rank 0 alone runs step 3), as
//! CALIBRATE_IO's is one process.
//!
//! A rank that fails (an I/O error, no space) or is stopped (Ctrl-C) stops every rank at the
//! next interval boundary; the search sees an interrupted point and ends, and rank 0 stores
//! what was measured, with the failing rank and its error.

use super::bundle::{PointPart, PointRow};
use super::show::Show;
use crate::finish::Ending;
use crate::measure::Finished;
use crate::ranks::{hostname, rank_cores, Shape, Talk, Team, World};
use crate::{JobSampler, Session};
use anyhow::Context;
use iogauge_engine::calibrate::{
    self as search, calibration_document, cell_of, point_of, EngineProber, Prober,
};
use iogauge_engine::{JobOutcome, Target};
use iogauge_model::calib::{CalibRank, Cell, Measured, Point, Step};
use iogauge_model::iopath::IoPath;
use iogauge_model::preflight::Preflight;
use iogauge_model::spec::Region;
use iogauge_model::system::Snapshot;
use iogauge_model::Document;
use iogauge_stats::{measured_totals, Interval, LatHist};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// What rank 0 asks of every rank: `[what, step, bs, n, large_bs, large_n]`.
type Order = [u64; 6];
const END: u64 = 0;
const MEASURE: u64 = 1;
const MIXED: u64 = 2;

/// Each rank's facts, sent to rank 0 before the first point.
#[derive(Serialize, Deserialize)]
struct Intro {
    host: String,
    targets: Vec<PathBuf>,
    preflight: Preflight,
}

fn step_code(s: Step) -> u64 {
    match s {
        Step::Small => 0,
        Step::Large => 1,
        Step::Single => 2,
    }
}

fn step_of(code: u64) -> Step {
    match code {
        0 => Step::Small,
        1 => Step::Large,
        _ => Step::Single,
    }
}

/// Rank `rank`'s share of `n` outstanding I/Os over `size` ranks.
pub fn share(n: u32, rank: u32, size: u32) -> u32 {
    n / size + u32::from(rank < n % size)
}

/// Each rank's shares of an order: the small (or only) kind's and the large kind's.
fn shares(order: &Order, rank: u32, size: u32) -> [u32; 2] {
    let [what, step, _, n, _, large_n] = *order;
    let (n, large_n) = (n as u32, large_n as u32);
    match what {
        MIXED => [share(n, rank, size), share(large_n, rank, size)],
        // One process on one host: rank 0's.
        _ if step_of(step) == Step::Single => [if rank == 0 { n } else { 0 }, 0],
        _ => [share(n, rank, size), 0],
    }
}

/// A rank's side of the calibration: its own prober and the job's messages.
struct Ranks<'a> {
    world: &'a World,
    talk: Talk<'a>,
    prober: EngineProber<'a>,
    stop: &'a AtomicBool,
    rank: u32,
    size: u32,
    /// The device samples and I/O path of this rank's last job (rank 0's go in the record).
    last: Option<(Vec<Snapshot>, IoPath)>,
    /// Rank 0: each rank's failure, bytes each rank sent, whether all ran on one host, and
    /// whether to print each point.
    failures: Vec<(u32, String)>,
    sent: Vec<u64>,
    one_host: bool,
    /// Rank 0: shows each point as it is measured.
    on_point: &'a mut dyn FnMut(&Point),
}

impl Ranks<'_> {
    /// Every rank, for one order: its share run, its part made.
    fn point(&mut self, order: Order) -> PointPart {
        let [what, step, bs, _, large_bs, _] = order;
        let step = step_of(step);
        let mine = shares(&order, self.rank, self.size);
        let busy = mine.iter().any(|s| *s > 0);
        let flushed = self.prober.begin_point(busy);
        // Every rank flushed (or failed to): the point starts together.
        let ok = self.world.all_ok(flushed.is_ok());
        let mut part = PointRow {
            rank: self.rank,
            ..PointRow::default()
        };
        let outcomes = match flushed {
            Err(e) => Err(e),
            Ok(()) if !ok => {
                // Another rank failed: it says why.
                part.interrupted = true;
                return PointPart::own(part, Vec::new());
            }
            Ok(()) if !busy => Ok((Vec::new(), Vec::new())),
            Ok(()) => {
                let talk = &mut self.talk;
                let mut watch = |iv: &Interval| {
                    talk.interval(iv);
                };
                match what {
                    MIXED => self
                        .prober
                        .run_mixed(bs, mine[0], large_bs, mine[1], &mut watch)
                        .map(|os| (os, Vec::new())),
                    _ => self
                        .prober
                        .run_point(step, bs, mine[0], &mut watch)
                        .map(|(o, samples)| (vec![o], samples)),
                }
            }
        };
        let series = match outcomes {
            Ok((os, samples)) => self.fill(&mut part, (os, samples), what, step, mine),
            Err(e) => {
                part.error = Some(e.to_string());
                Vec::new()
            }
        };
        if part.error.is_some() {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.talk.watch();
        PointPart::own(part, series)
    }

    /// A row from the outcomes of this rank's jobs (and the samples beside its first), and
    /// its series, one per kind.
    fn fill(
        &mut self,
        part: &mut PointRow,
        (os, samples): (Vec<JobOutcome>, Vec<Snapshot>),
        what: u64,
        step: Step,
        mine: [u32; 2],
    ) -> Vec<Vec<Interval>> {
        part.interrupted = os.iter().any(|o| o.interrupted);
        if what != MIXED && mine[0] > 0 {
            part.workers = self.prober.workers(step, mine[0]);
        }
        if let Some(o) = os.first() {
            let (t, _) = measured_totals(&o.intervals);
            part.ios = t.read.ios + t.write.ios;
        }
        let mut series = Vec::new();
        let mut samples = Some(samples);
        let mut jobs = os.into_iter();
        let kinds = if what == MIXED { 2 } else { 1 };
        for s in mine.iter().take(kinds) {
            // A kind this rank had no share of ran no job.
            let Some(o) = (*s > 0).then(|| jobs.next()).flatten() else {
                series.push(Vec::new());
                continue;
            };
            series.push(o.intervals);
            if series.len() == 1 {
                self.last = Some((samples.take().unwrap_or_default(), o.io_path));
            }
        }
        series
    }

    /// Rank 0: tells every rank the order, runs its own share, gathers the others' parts up
    /// the tree. `None` when a rank was interrupted or failed (its failure kept for the
    /// document).
    fn gather(&mut self, order: Order) -> anyhow::Result<Option<PointPart>> {
        let mut o = order;
        let since = std::time::Instant::now();
        self.world.broadcast(&mut o[..]);
        let own = self.point(order);
        let (whole, _) = self.talk.gather_at_root(own, since, beat())?;
        let mut complete = true;
        for p in &whole.rows {
            if let Some(e) = &p.error {
                self.failures.push((p.rank, e.clone()));
            }
            self.sent[p.rank as usize] += p.sent;
            complete &= p.error.is_none() && !p.interrupted;
        }
        Ok(complete.then_some(whole))
    }
}

/// The interval of a calibration's jobs: how often the ranks hear from each other.
fn beat() -> std::time::Duration {
    iogauge_model::spec::JobSpec::new(iogauge_model::spec::RwMode::RandRead).interval
}

impl Prober for Ranks<'_> {
    type Error = anyhow::Error;

    fn measure(&mut self, step: Step, bs: u64, n: u32) -> anyhow::Result<Option<Measured>> {
        let order = [MEASURE, step_code(step), bs, u64::from(n), 0, 0];
        self.last = None;
        let Some(mut whole) = self.gather(order)? else {
            return Ok(None);
        };
        let intervals = whole.kind(0)?;
        let workers = whole.rows.iter().map(|p| p.workers).sum();
        let (mut point, hist) = point_of(step, n, workers, &intervals);
        point.rank_ios = whole.rows.iter().map(|p| p.ios).collect();
        (self.on_point)(&point);
        // Rank 0 always has a share: its devices and I/O path go in the record.
        let (samples, io_path) = self
            .last
            .take()
            .map_or((Vec::new(), None), |(s, p)| (s, Some(p)));
        Ok(Some(Measured {
            point,
            intervals,
            samples: if self.one_host { samples } else { Vec::new() },
            hist,
            io_path,
        }))
    }

    fn measure_mixed(
        &mut self,
        small_bs: u64,
        small: u32,
        large_bs: u64,
        large: u32,
    ) -> anyhow::Result<Option<(Cell, LatHist)>> {
        let order = [
            MIXED,
            0,
            small_bs,
            u64::from(small),
            large_bs,
            u64::from(large),
        ];
        let Some(mut whole) = self.gather(order)? else {
            return Ok(None);
        };
        let s = (small > 0).then(|| whole.kind(0)).transpose()?;
        let l = (large > 0).then(|| whole.kind(1)).transpose()?;
        Ok(Some(cell_of(small, large, s.as_deref(), l.as_deref())))
    }
}

/// The calibration over ranks, once every rank's targets are prepared and its `ctx` made
/// (its seed and slice in `ctx.spec`; `job` the job's own seed and region, which the
/// document records).
pub(super) fn calibrate(
    session: &mut Session,
    targets: &[Target],
    mut ctx: search::Context,
    job: (u64, Region),
    show: Show<'_>,
) -> anyhow::Result<Finished> {
    let stop = session.stop().clone();
    let Team::Ranks(world) = &session.team else {
        unreachable!("called over ranks only")
    };
    let (rank, size, host) = (world.rank(), world.size(), hostname());
    let intro = Intro {
        host: host.clone(),
        targets: targets.iter().map(|t| t.info.path.clone()).collect(),
        preflight: ctx.preflight.clone(),
    };
    let spec = ctx.spec.clone();
    let mut no_point = |_: &Point| {};
    let sampler = JobSampler::of(targets, session.tracing());
    let prober = EngineProber {
        targets,
        spec: &spec,
        stop: &stop,
        on_point: &mut no_point,
        cores: rank_cores(),
        runs: 0,
        sampling: &sampler,
    };
    let mut ranks = Ranks {
        world,
        talk: world
            .talk(stop.clone(), Shape::Binomial, beat())
            .without_live_view(),
        prober,
        stop: &stop,
        rank,
        size,
        last: None,
        failures: Vec::new(),
        sent: vec![0; size as usize],
        one_host: true,
        on_point: show.point,
    };
    if rank != 0 {
        world.send_part(&serde_json::to_vec(&intro)?);
        let mut failed = None;
        loop {
            let mut order: Order = [END; 6];
            world.broadcast(&mut order[..]);
            if order[0] == END {
                break;
            }
            let since = std::time::Instant::now();
            let part = ranks.point(order);
            failed = failed.or(part.rows[0].error.clone());
            ranks.talk.gather(part, since, beat())?;
        }
        return Ok(Finished::Member {
            rank,
            error: failed,
            warnings: sampler.layers_warning().into_iter().collect(),
        });
    }
    let mut rows = vec![CalibRank {
        rank: 0,
        host: host.clone(),
        targets: intro.targets,
        error: None,
        sent_bytes: 0,
    }];
    for r in 1..size {
        let bytes = world.receive_part(r);
        let i: Intro = serde_json::from_slice(&bytes).context("a rank's preflight")?;
        ranks.sent[r as usize] += bytes.len() as u64;
        ranks.one_host &= i.host == host;
        join_preflight(&mut ctx.preflight, i.preflight, r);
        rows.push(CalibRank {
            rank: r,
            host: i.host,
            targets: i.targets,
            error: None,
            sent_bytes: 0,
        });
    }
    // The document records what the job was asked, not rank 0's seed and slice.
    (ctx.spec.setup.seed, ctx.spec.setup.region) = job;
    (show.head)(&search::head(&ctx))?;
    let outcome = search::calibrate(&mut ranks, &spec);
    // Made first (a rank that died may keep the broadcast below from returning before the
    // launcher ends this rank), then every rank waiting for its next order is told to end.
    let finished = lead_document(ctx, outcome, &ranks, rows).map(|mut f| {
        if let Finished::Lead { doc, .. } = &mut f {
            doc.warnings_mut().extend(sampler.layers_warning());
        }
        f
    });
    world.broadcast(&mut [END; 6][..]);
    finished
}

/// Rank 0: the calibration's one document, the ranks' rows and failures in it.
fn lead_document(
    ctx: search::Context,
    outcome: anyhow::Result<iogauge_model::calib::Outcome>,
    ranks: &Ranks<'_>,
    mut rows: Vec<CalibRank>,
) -> anyhow::Result<Finished> {
    let mut outcome = outcome?;
    if !ranks.failures.is_empty() {
        outcome.interrupted = true;
    }
    let (mut report, histograms) = calibration_document(ctx, &outcome)?;
    if !ranks.one_host {
        report.warnings.push(
            "the ranks ran on several hosts: each point's device figures are rank 0's host's"
                .into(),
        );
    }
    for (r, e) in &ranks.failures {
        let row = &mut rows[*r as usize];
        row.error.get_or_insert_with(|| e.clone());
        report
            .warnings
            .push(format!("rank {r} on {} failed: {e}", row.host));
    }
    for (row, sent) in rows.iter_mut().zip(&ranks.sent) {
        row.sent_bytes = *sent;
    }
    report.ranks = rows;
    let ending = match ranks.failures.first() {
        Some((r, e)) => Ending::Failed(format!("rank {r}: {e}")),
        None => Ending::of_meta(&report.meta),
    };
    Ok(Finished::lead(Document::from(report), histograms, ending))
}

/// Another rank's preflight into rank 0's: its targets, and its warnings rank 0's does not
/// already give.
fn join_preflight(into: &mut Preflight, other: Preflight, rank: u32) {
    into.targets.extend(other.targets);
    for a in other.md_arrays {
        if !into.md_arrays.contains(&a) {
            into.md_arrays.push(a);
        }
    }
    for w in other.warnings {
        if !into.warnings.contains(&w) {
            into.warnings.push(format!("rank {rank}: {w}"));
        }
    }
}
