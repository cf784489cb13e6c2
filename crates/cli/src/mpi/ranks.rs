//! `mpirun -np N iogauge run …`: every rank runs the job on its own targets (`{rank}` and
//! `{host}` in `--target` name per-rank files), all start together after a barrier, and rank
//! 0 gathers every rank's interval series with its HDR histograms, merges them exactly (the
//! same intervals by index, histograms added) and stores ONE run: `summary` and `intervals`
//! of the whole job, `ranks` with each rank's own summary and devices, and the start skew.
//! Only rank 0 opens the store and prints.
//!
//! Every step that can fail on one rank (the store, the engine, the targets) is agreed on by
//! all before the next collective step, so a failing rank never leaves the others waiting at
//! a barrier: each says its own error and the job ends with exit 1 (2 for usage).

use crate::run::options::RunOptions;
use crate::session::{check_engine, finish_run, prepare_targets};
use anyhow::{anyhow, Context};
use iogauge_engine::document::{document_of, run_document};
use iogauge_engine::JobOutcome;
use iogauge_model::run::{RankReport, RunReport};
use iogauge_model::spec::{Bound, Region};
use iogauge_model::{Document, Histograms, Kind};
use iogauge_report::job_line;
use iogauge_session::{Ending, Session};
use iogauge_stats::{merge_series, Interval, WireInterval};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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

/// Message tags: a rank's part at the end, its counts after each interval (to rank 0), and a
/// stop (to every other rank).
const PART: i32 = 1;
const LIVE: i32 = 2;
const STOP: i32 = 3;
/// One live report: six u64.
const LIVE_BYTES: u64 = 48;

/// The small messages of a running job, off the I/O threads (on the collecting thread,
/// between intervals), point to point so that ranks ending at different intervals never wait
/// on each other: after each interval a rank sends rank 0 its counts (one message of 6 × 8
/// bytes: rank, phase and index, reads, writes, read bytes, write bytes) and looks for a stop
/// from any rank; a rank that stops (Ctrl-C, an error) tells every other rank once, so all
/// stop at their next interval boundary.
struct Talk<'a> {
    world: &'a SimpleCommunicator,
    rank: u32,
    size: u32,
    stop: Arc<AtomicBool>,
    told: bool,
    live_sent: u64,
    /// Rank 0: every live report received, per rank, and their totals per interval.
    heard: Vec<u64>,
    totals: BTreeMap<u64, [u64; 4]>,
}

impl<'a> Talk<'a> {
    fn new(world: &'a SimpleCommunicator, stop: Arc<AtomicBool>) -> Talk<'a> {
        Talk {
            world,
            rank: world.rank() as u32,
            size: world.size() as u32,
            stop,
            told: false,
            live_sent: 0,
            heard: vec![0; world.size() as usize],
            totals: BTreeMap::new(),
        }
    }

    fn key(iv: &Interval) -> u64 {
        (u64::from(iv.phase == iogauge_stats::Phase::Measure) << 32) | u64::from(iv.index)
    }

    /// After interval `iv`: report it (rank ≠ 0), hear and pass on stops; rank 0 gets the
    /// other ranks' counts of this interval received so far.
    fn interval(&mut self, iv: &Interval) -> [u64; 4] {
        if self.rank != 0 {
            let msg = [
                u64::from(self.rank),
                Self::key(iv),
                iv.io.read.ios,
                iv.io.write.ios,
                iv.io.read.bytes.0,
                iv.io.write.bytes.0,
            ];
            self.world.process_at_rank(0).send_with_tag(&msg[..], LIVE);
            self.live_sent += 1;
        } else {
            self.drain_live();
        }
        self.hear_stop();
        self.pass_stop();
        self.totals.remove(&Self::key(iv)).unwrap_or_default()
    }

    fn drain_live(&mut self) {
        while let Some(m) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(LIVE)
        {
            let (v, _) = m.matched_receive_vec::<u64>();
            self.count_live(&v);
        }
    }

    fn count_live(&mut self, v: &[u64]) {
        if let [rank, key, r, w, rb, wb] = *v {
            self.heard[rank as usize] += 1;
            let t = self.totals.entry(key).or_default();
            for (a, b) in t.iter_mut().zip([r, w, rb, wb]) {
                *a += b;
            }
        }
    }

    fn hear_stop(&mut self) {
        while let Some(m) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(STOP)
        {
            let _ = m.matched_receive_vec::<u8>();
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Tells every other rank to stop, once, when this one is stopping.
    fn pass_stop(&mut self) {
        if self.told || !self.stop.load(Ordering::Relaxed) {
            return;
        }
        self.told = true;
        for r in (0..self.size).filter(|&r| r != self.rank) {
            self.world
                .process_at_rank(r as i32)
                .send_with_tag(&[1u8][..], STOP);
        }
    }

    /// Rank 0, after rank `r`'s part: the live reports it sent that are still unread.
    fn finish_live(&mut self, r: u32, sent: u64) {
        while self.heard[r as usize] < sent {
            let (v, _) = self
                .world
                .process_at_rank(r as i32)
                .receive_vec_with_tag::<u64>(LIVE);
            self.count_live(&v);
        }
    }
}

/// Rank `rank`'s 1/`size` of `region` (as IOR splits a shared file into segments), in the
/// region's own unit; bounds of mixed units cannot be split.
pub fn slice_of(region: Region, rank: u32, size: u32) -> anyhow::Result<Region> {
    let cut = |a: f64, b: f64, i: u32| a + (b - a) * f64::from(i) / f64::from(size);
    match (region.start, region.end) {
        (Bound::Pct(a), Bound::Pct(b)) => Ok(Region {
            start: Bound::Pct(cut(a, b, rank)),
            end: Bound::Pct(cut(a, b, rank + 1)),
        }),
        (Bound::Bytes(a), Bound::Bytes(b)) => {
            let at = |i: u32| a + (b - a) / u64::from(size) * u64::from(i);
            let end = if rank + 1 == size { b } else { at(rank + 1) };
            Ok(Region {
                start: Bound::Bytes(at(rank)),
                end: Bound::Bytes(end),
            })
        }
        _ => Err(crate::usage::UsageError(
            "--region with one bound in % and one in bytes cannot be split between ranks writing one shared target: give both in % or both in bytes, or --shared-offsets".into(),
        )
        .into()),
    }
}

/// `{rank}` and `{host}` in a target path.
pub fn per_rank(path: &Path, rank: u32, host: &str) -> PathBuf {
    PathBuf::from(
        path.to_string_lossy()
            .replace("{rank}", &rank.to_string())
            .replace("{host}", host),
    )
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Whether `ok` holds on every rank (a collective: every rank must call it at this point).
fn all_ok(world: &SimpleCommunicator, ok: bool) -> bool {
    let mine = i32::from(ok);
    let mut all = 0i32;
    world.all_reduce_into(&mine, &mut all, SystemOperation::min());
    all == 1
}

/// `r` on this rank, once every rank has reached this point: an error here is this rank's;
/// an error elsewhere ends this rank too, quietly (the failing rank says why).
fn agreed<T>(world: &SimpleCommunicator, r: anyhow::Result<T>) -> anyhow::Result<T> {
    let ok = all_ok(world, r.is_ok());
    match r {
        Err(e) => Err(e.context(format!("rank {}", world.rank()))),
        Ok(_) if !ok => Err(anyhow!(OtherRankFailed)),
        ok => ok,
    }
}

/// Another rank failed and said so; this one stops with exit 1 and nothing to add.
#[derive(Debug, thiserror::Error)]
#[error("another rank failed")]
pub struct OtherRankFailed;

pub fn run(mut opts: RunOptions) -> anyhow::Result<ExitCode> {
    let universe = mpi::initialize().ok_or_else(|| anyhow!("MPI was initialised already"))?;
    let world = universe.world();
    let (rank, size) = (world.rank() as u32, world.size() as u32);
    let host = hostname();
    let shared = opts.targets.specs.iter().any(|t| {
        let p = t.path.to_string_lossy();
        !p.contains("{rank}") && !p.contains("{host}")
    });
    for t in &mut opts.targets.specs {
        t.path = per_rank(&t.path, rank, &host);
    }
    // Writes to a target every rank shares: each rank its own slice of the region.
    let split = shared && opts.spec.rw.writes() && !opts.shared_offsets && size > 1;
    if split {
        opts.spec.region = agreed(&world, slice_of(opts.spec.region, rank, size))?;
    }
    let session = agreed(
        &world,
        if rank == 0 {
            Session::begin(opts.store.as_deref())
                .map(Some)
                .map_err(Into::into)
        } else {
            Ok(None)
        },
    )?;
    agreed(&world, check_engine(opts.spec.engine))?;
    let stop = match &session {
        Some(s) => s.stop().clone(),
        None => iogauge_session::stop_flag()?,
    };
    // A target shared by every rank is pre-filled once: rank 0 first, the others after it.
    let mine = |turn: bool| turn.then(|| prepare_targets(&opts.targets, &stop));
    let first = agreed(&world, mine(rank == 0).transpose())?;
    let targets = match agreed(&world, mine(rank != 0).transpose())? {
        Some(t) => t,
        None => first.expect("rank 0 prepared its targets"),
    };
    let mut session = session;
    if let Some(s) = &mut session {
        s.go_live(
            Kind::Run,
            format!("{} x {size} ranks", job_line(&opts.spec)),
            None,
        );
    }
    let mut talk = Talk::new(&world, stop.clone());
    world.barrier();
    let started_ns = now_ns();
    let outcome = iogauge_engine::run(&opts.spec, &targets, &stop, &mut |iv| {
        let others = talk.interval(iv);
        if let Some(s) = &mut session {
            // The job's counts live; the latency shown is rank 0's own.
            let mut all = iv.clone();
            all.io.read.ios += others[0];
            all.io.write.ios += others[1];
            all.io.read.bytes.0 += others[2];
            all.io.write.bytes.0 += others[3];
            let rep = iogauge_model::run::IntervalReport::of(&all);
            s.publish(&rep, iv.end.as_secs_f64());
        }
    });
    if outcome.is_err() {
        stop.store(true, Ordering::Relaxed);
    }
    talk.pass_stop();
    let (mut part, own) = part_of(&opts, &targets, rank, &host, started_ns, outcome);
    part.live_sent = talk.live_sent;
    part.region = split.then_some(opts.spec.region);
    if rank != 0 {
        let bytes = serde_json::to_vec(&part)?;
        world.process_at_rank(0).send_with_tag(&bytes[..], PART);
        return match part.error {
            Some(e) => Err(anyhow!("rank {rank}: {e}")),
            None => Ok(ExitCode::SUCCESS),
        };
    }
    let gather = std::time::Instant::now();
    let mut parts = vec![part];
    for r in 1..size {
        let (bytes, _) = world
            .process_at_rank(r as i32)
            .receive_vec_with_tag::<u8>(PART);
        let mut p: Part = serde_json::from_slice(&bytes).context("a rank's part")?;
        p.bytes = bytes.len() as u64;
        talk.finish_live(r, p.live_sent);
        parts.push(p);
    }
    let gather_ms = gather.elapsed().as_secs_f64() * 1e3;
    let session = session.expect("rank 0 holds the session");
    let failed: Vec<String> = parts
        .iter()
        .filter_map(|p| Some(format!("rank {}: {}", p.rank, p.error.as_deref()?)))
        .collect();
    let (mut doc, histograms) = merged(&opts, parts, own)?;
    if let Document::Run(r) = &mut doc {
        r.gather_ms = Some(gather_ms);
    }
    let ending = match failed.is_empty() {
        true => Ending::of(&doc),
        false => Ending::Failed(failed.join("; ")),
    };
    finish_run(session, doc, &histograms, opts.json, ending)
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Rank 0's own outcome, kept whole for the merged document (its samples and I/O path).
struct Own {
    started: SystemTime,
    samples: Vec<iogauge_model::system::Snapshot>,
    disks: Vec<String>,
    io_path: Option<iogauge_model::iopath::IoPath>,
}

/// This rank's part: its document and its series on the wire.
fn part_of(
    opts: &RunOptions,
    targets: &[iogauge_engine::Target],
    rank: u32,
    host: &str,
    started_ns: u64,
    outcome: Result<JobOutcome, iogauge_engine::EngineError>,
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
        samples: Vec::new(),
        disks: iogauge_engine::disks_of(targets),
        io_path: None,
    };
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            part.error = Some(e.to_string());
            return (part, own);
        }
    };
    own.started = outcome.started;
    own.samples = outcome.samples.clone();
    own.io_path = Some(outcome.io_path.clone());
    let wire: Result<Vec<WireInterval>, _> =
        outcome.intervals.iter().map(Interval::to_wire).collect();
    match wire.map_err(|e| e.to_string()).and_then(|w| {
        run_document(opts.spec.clone(), targets, outcome)
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

/// The job's one document: the ranks' series merged, each rank's part in `ranks`.
fn merged(opts: &RunOptions, parts: Vec<Part>, own: Own) -> anyhow::Result<(Document, Histograms)> {
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
    // The job's devices: the host's own, when every rank ran on rank 0's host.
    let one_host = parts.iter().all(|p| p.host == parts[0].host);
    let outcome = JobOutcome {
        started: own.started,
        intervals: merge_series(&series),
        interrupted,
        samples: if one_host { own.samples } else { Vec::new() },
        sample_error: None,
        steady_wait: None,
        io_path: own.io_path.ok_or_else(|| {
            anyhow!(
                "rank 0 did not run: {}",
                parts[0].error.as_deref().unwrap_or("")
            )
        })?,
    };
    let (mut report, histograms) = document_of(
        opts.spec.clone(),
        infos,
        if one_host { &own.disks } else { &[] },
        outcome,
    )?;
    let starts: Vec<u64> = parts.iter().map(|p| p.started_ns).collect();
    let skew = starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0);
    report.start_skew_ms = Some(skew as f64 / 1e6);
    if !one_host {
        report.warnings.push(
            "the ranks ran on several hosts: the job's device figures are per rank (ranks[].hardware)"
                .into(),
        );
    }
    for p in &parts {
        if let Some(e) = &p.error {
            report
                .warnings
                .push(format!("rank {} on {} failed: {e}", p.rank, p.host));
        }
        for w in p.report.iter().flat_map(|r| &r.warnings) {
            // Said once for the job when it is the job's too (an interruption).
            let ranked = format!("rank {}: {w}", p.rank);
            if !report.warnings.contains(w) && !report.warnings.contains(&ranked) {
                report.warnings.push(ranked);
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_split_between_ranks() {
        let pct = |a, b| Region {
            start: Bound::Pct(a),
            end: Bound::Pct(b),
        };
        assert_eq!(slice_of(pct(0.0, 100.0), 1, 4).unwrap(), pct(25.0, 50.0));
        assert_eq!(slice_of(pct(20.0, 80.0), 2, 3).unwrap(), pct(60.0, 80.0));
        let bytes = |a, b| Region {
            start: Bound::Bytes(a),
            end: Bound::Bytes(b),
        };
        assert_eq!(slice_of(bytes(0, 10), 0, 3).unwrap(), bytes(0, 3));
        assert_eq!(
            slice_of(bytes(0, 10), 2, 3).unwrap(),
            bytes(6, 10),
            "the last takes the rest"
        );
        let mixed = Region {
            start: Bound::Pct(0.0),
            end: Bound::Bytes(1 << 30),
        };
        assert!(slice_of(mixed, 0, 2)
            .unwrap_err()
            .to_string()
            .contains("--shared-offsets"));
    }

    #[test]
    fn rank_and_host_in_paths() {
        assert_eq!(
            per_rank(Path::new("/d/f.{rank}.{host}"), 3, "n1"),
            PathBuf::from("/d/f.3.n1")
        );
        assert_eq!(
            per_rank(Path::new("/d/shared"), 3, "n1"),
            PathBuf::from("/d/shared")
        );
    }
}
