//! `mpirun -np N iogauge calibrate …`: CALIBRATE_IO across RAC instances. Rank 0 runs the
//! search; for each point it tells every rank the point (one broadcast), each rank takes its
//! share of the outstanding I/Os (`n / N`, the first `n mod N` ranks one more) over its own
//! workers, all flush and start together (the all-reduce agreeing that every flush went well
//! is the barrier between points), and rank 0 merges the ranks' interval series and
//! histograms exactly into the point the search decides from. max_iops and max_mbps are the
//! whole job's; max_pmbps stays one process on one host (rank 0 alone runs step 3), as
//! CALIBRATE_IO's is one process.
//!
//! A rank that fails (an I/O error, no space) or is stopped (Ctrl-C) stops every rank at the
//! next interval boundary; the search sees an interrupted point and ends, and rank 0 stores
//! what was measured, with the failing rank and its error.

use super::world::{
    agreed, all_ok, begin, hostname, prepare_in_turn, rank_cores, rank_end, rank_seed,
    rank_targets, slice_of, Talk, LOST, PART,
};
use crate::calibrate::options::CalibrateOptions;
use crate::calibrate::{context, finish};
use crate::session::{check_engine, print_stdout};
use anyhow::{anyhow, Context};
use iogauge_engine::calibrate::{
    self as search, calibration_document, cell_of, point_of, EngineProber, Prober,
};
use iogauge_engine::JobOutcome;
use iogauge_model::calib::{CalibRank, Cell, Measured, Step};
use iogauge_model::iopath::IoPath;
use iogauge_model::preflight::Preflight;
use iogauge_model::system::Snapshot;
use iogauge_report::{calibration_head, point_line};
use iogauge_session::{Ending, Session};
use iogauge_stats::{measured_totals, merge_series, Interval, LatHist, WireInterval};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::{Deserialize, Serialize};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
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

/// One rank's part of one point.
#[derive(Default, Serialize, Deserialize)]
struct PointPart {
    workers: u32,
    /// The I/Os of its measured window (of its first job).
    ios: u64,
    /// Its series: for a curve's point one; for a matrix cell two (small, then large), one
    /// left empty when the rank had no share of that kind.
    series: Vec<Vec<WireInterval>>,
    interrupted: bool,
    error: Option<String>,
    /// Live reports the rank has sent rank 0 so far (one after each interval of its jobs).
    live_sent: u64,
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
    world: &'a SimpleCommunicator,
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
    live: bool,
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
        let ok = all_ok(self.world, flushed.is_ok());
        let mut part = PointPart::default();
        let outcomes = match flushed {
            Err(e) => Err(e),
            Ok(()) if !ok => {
                // Another rank failed: it says why.
                part.interrupted = true;
                return part;
            }
            Ok(()) if !busy => Ok(Vec::new()),
            Ok(()) => {
                let talk = &mut self.talk;
                let mut watch = |iv: &Interval| {
                    talk.interval(iv);
                };
                match what {
                    MIXED => self
                        .prober
                        .run_mixed(bs, mine[0], large_bs, mine[1], &mut watch),
                    _ => self
                        .prober
                        .run_point(step, bs, mine[0], &mut watch)
                        .map(|o| vec![o]),
                }
            }
        };
        match outcomes {
            Ok(os) => self.fill(&mut part, os, what, step, mine),
            Err(e) => part.error = Some(e.to_string()),
        }
        if part.error.is_some() {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.talk.watch();
        part.live_sent = self.talk.live_sent;
        part
    }

    /// A part from the outcomes of this rank's jobs.
    fn fill(
        &mut self,
        part: &mut PointPart,
        os: Vec<JobOutcome>,
        what: u64,
        step: Step,
        mine: [u32; 2],
    ) {
        part.interrupted = os.iter().any(|o| o.interrupted);
        if what != MIXED && mine[0] > 0 {
            part.workers = self.prober.workers(step, mine[0]);
        }
        if let Some(o) = os.first() {
            let (t, _) = measured_totals(&o.intervals);
            part.ios = t.read.ios + t.write.ios;
        }
        let mut wire = Vec::new();
        let mut jobs = os.into_iter();
        let kinds = if what == MIXED { 2 } else { 1 };
        for s in mine.iter().take(kinds) {
            // A kind this rank had no share of ran no job.
            let Some(o) = (*s > 0).then(|| jobs.next()).flatten() else {
                wire.push(Vec::new());
                continue;
            };
            match o.intervals.iter().map(Interval::to_wire).collect() {
                Ok(w) => wire.push(w),
                Err(e) => part.error = Some(e.to_string()),
            }
            if wire.len() == 1 {
                self.last = Some((o.samples, o.io_path));
            }
        }
        part.series = wire;
    }

    /// Rank 0: tells every rank the order, runs its own share, gathers the others' parts.
    /// `None` when a rank was interrupted or failed (its failure kept for the document).
    fn gather(&mut self, order: Order) -> anyhow::Result<Option<Vec<PointPart>>> {
        let mut o = order;
        let since = std::time::Instant::now();
        self.world.process_at_rank(0).broadcast_into(&mut o[..]);
        let mut parts = vec![self.point(order)];
        let beat =
            iogauge_model::spec::JobSpec::new(iogauge_model::spec::RwMode::RandRead).interval;
        for (r, bytes) in self.talk.parts(since, beat).into_iter().enumerate().skip(1) {
            let p = match bytes {
                Some(bytes) => {
                    self.sent[r] += bytes.len() as u64;
                    let p: PointPart = serde_json::from_slice(&bytes).context("a rank's point")?;
                    self.talk.finish_live(r as u32, p.live_sent);
                    p
                }
                None => PointPart {
                    error: Some(LOST.into()),
                    ..PointPart::default()
                },
            };
            parts.push(p);
        }
        let mut whole = true;
        for (r, p) in parts.iter().enumerate() {
            if let Some(e) = &p.error {
                self.failures.push((r as u32, e.clone()));
            }
            whole &= p.error.is_none() && !p.interrupted;
        }
        Ok(whole.then_some(parts))
    }

    /// The ranks' series of kind `k` (0: small or only, 1: large), merged.
    fn merged(
        &self,
        parts: &[PointPart],
        order: &Order,
        k: usize,
    ) -> anyhow::Result<Vec<Interval>> {
        let mut series = Vec::new();
        for (r, p) in parts.iter().enumerate() {
            if shares(order, r as u32, self.size)[k] == 0 {
                continue;
            }
            let wire = p
                .series
                .get(k)
                .ok_or_else(|| anyhow!("rank {r}'s point has no series"))?;
            series.push(
                wire.iter()
                    .map(Interval::from_wire)
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        Ok(merge_series(&series))
    }
}

impl Prober for Ranks<'_> {
    type Error = anyhow::Error;

    fn measure(&mut self, step: Step, bs: u64, n: u32) -> anyhow::Result<Option<Measured>> {
        let order = [MEASURE, step_code(step), bs, u64::from(n), 0, 0];
        self.last = None;
        let Some(parts) = self.gather(order)? else {
            return Ok(None);
        };
        let intervals = self.merged(&parts, &order, 0)?;
        let workers = parts.iter().map(|p| p.workers).sum();
        let (mut point, hist) = point_of(step, n, workers, &intervals);
        point.rank_ios = parts.iter().map(|p| p.ios).collect();
        if self.live {
            eprintln!("  {}", point_line(&point));
        }
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
        let Some(parts) = self.gather(order)? else {
            return Ok(None);
        };
        let s = (small > 0)
            .then(|| self.merged(&parts, &order, 0))
            .transpose()?;
        let l = (large > 0)
            .then(|| self.merged(&parts, &order, 1))
            .transpose()?;
        Ok(Some(cell_of(small, large, s.as_deref(), l.as_deref())))
    }
}

pub fn calibrate(mut opts: CalibrateOptions) -> anyhow::Result<ExitCode> {
    let universe = mpi::initialize().ok_or_else(|| anyhow!("MPI was initialised already"))?;
    let world = universe.world();
    let (rank, size) = (world.rank() as u32, world.size() as u32);
    let host = hostname();
    let shared = rank_targets(&mut opts.targets.specs, rank, &host);
    // Writes to a target every rank shares, or sequential streams over it: each rank its
    // own slice of the region (the streams of two ranks would otherwise start together).
    let streams = opts.spec.large_type == iogauge_model::calib::LargeType::Seq;
    let job_region = opts.spec.setup.region;
    if shared && (opts.spec.write_pct > 0 || streams) && size > 1 {
        opts.spec.setup.region = agreed(&world, slice_of(opts.spec.setup.region, rank, size))?;
    }
    let job_seed = opts.spec.setup.seed;
    opts.spec.setup.seed = rank_seed(job_seed, rank);
    let (session, stop) = begin(&world, opts.store.as_deref(), opts.label.clone())?;
    agreed(&world, check_engine(opts.spec.setup.engine))?;
    let targets = prepare_in_turn(&world, &opts.targets, &stop)?;
    let mut ctx = agreed(&world, context(&opts, &targets))?;
    let intro = Intro {
        host: host.clone(),
        targets: targets.iter().map(|t| t.info.path.clone()).collect(),
        preflight: ctx.preflight.clone(),
    };
    let mut no_point = |_: &iogauge_model::calib::Point| {};
    let prober = EngineProber {
        targets: &targets,
        spec: &opts.spec,
        stop: &stop,
        on_point: &mut no_point,
        cores: rank_cores(),
        runs: 0,
    };
    let mut ranks = Ranks {
        world: &world,
        talk: Talk::new(&world, stop.clone()),
        prober,
        stop: &stop,
        rank,
        size,
        last: None,
        failures: Vec::new(),
        sent: vec![0; size as usize],
        one_host: true,
        live: std::io::stderr().is_terminal(),
    };
    if rank != 0 {
        let bytes = serde_json::to_vec(&intro)?;
        world.process_at_rank(0).send_with_tag(&bytes[..], PART);
        let mut failed = None;
        loop {
            let mut order: Order = [END; 6];
            world.process_at_rank(0).broadcast_into(&mut order[..]);
            if order[0] == END {
                break;
            }
            let part = ranks.point(order);
            failed = failed.or(part.error.clone());
            let bytes = serde_json::to_vec(&part)?;
            world.process_at_rank(0).send_with_tag(&bytes[..], PART);
        }
        return rank_end(rank, failed);
    }
    let session = session.expect("rank 0 holds the session");
    let mut rows = vec![CalibRank {
        rank: 0,
        host: host.clone(),
        targets: intro.targets,
        error: None,
        sent_bytes: 0,
    }];
    for r in 1..size {
        let (bytes, _) = world
            .process_at_rank(r as i32)
            .receive_vec_with_tag::<u8>(PART);
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
    ctx.spec.setup.seed = job_seed;
    ctx.spec.setup.region = job_region;
    if !opts.json {
        print_stdout(&calibration_head(&search::head(&ctx)))
            .context("writing the result to stdout (nothing was measured)")?;
    }
    let outcome = search::calibrate(&mut ranks, &opts.spec);
    // Stored first (a rank that died may keep the broadcast below from returning before the
    // launcher ends this rank), then every rank waiting for its next order is told to end.
    let stored = store(session, ctx, outcome, &ranks, rows, &opts);
    world.process_at_rank(0).broadcast_into(&mut [END; 6][..]);
    stored
}

/// Rank 0: the calibration's one document, the ranks' rows and failures in it, stored.
fn store(
    session: Session,
    ctx: search::Context,
    outcome: anyhow::Result<iogauge_model::calib::Outcome>,
    ranks: &Ranks<'_>,
    mut rows: Vec<CalibRank>,
    opts: &CalibrateOptions,
) -> anyhow::Result<ExitCode> {
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
    finish(session, report, &histograms, opts, ending)
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
