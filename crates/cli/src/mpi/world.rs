//! What every command over ranks shares: the rank's name and host, the start steps agreed by
//! all ranks, the messages of a running job (live counts, stops), per-rank paths, seeds and
//! slices of a shared target.

use anyhow::anyhow;
use iogauge_model::spec::{Bound, Region};
use iogauge_stats::Interval;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Message tags: a rank's part at the end, its counts after each interval (to rank 0), and a
/// stop (to every other rank).
pub const PART: i32 = 1;
pub const LIVE: i32 = 2;
const STOP: i32 = 3;
/// One live report: six u64.
pub const LIVE_BYTES: u64 = 48;

/// The small messages of a running job, off the I/O threads (on the collecting thread,
/// between intervals), point to point so that ranks ending at different intervals never wait
/// on each other: after each interval a rank sends rank 0 its counts (one message of 6 × 8
/// bytes: rank, phase and index, reads, writes, read bytes, write bytes) and looks for a stop
/// from any rank; a rank that stops (Ctrl-C, an error) tells every other rank once, so all
/// stop at their next interval boundary.
pub struct Talk<'a> {
    world: &'a SimpleCommunicator,
    rank: u32,
    size: u32,
    stop: Arc<AtomicBool>,
    told: bool,
    pub live_sent: u64,
    /// Rank 0: every live report received, per rank, when each rank was last heard, and the
    /// reports' totals per interval.
    heard: Vec<u64>,
    heard_at: Vec<Instant>,
    /// Rank 0: reads and writes each rank reported live.
    reported: Vec<[u64; 2]>,
    totals: BTreeMap<u64, [u64; 4]>,
}

impl<'a> Talk<'a> {
    pub fn new(world: &'a SimpleCommunicator, stop: Arc<AtomicBool>) -> Talk<'a> {
        Talk {
            world,
            rank: world.rank() as u32,
            size: world.size() as u32,
            stop,
            told: false,
            live_sent: 0,
            heard: vec![0; world.size() as usize],
            heard_at: vec![Instant::now(); world.size() as usize],
            reported: vec![[0; 2]; world.size() as usize],
            totals: BTreeMap::new(),
        }
    }

    fn key(iv: &Interval) -> u64 {
        (u64::from(iv.phase == iogauge_stats::Phase::Measure) << 32) | u64::from(iv.index)
    }

    /// After interval `iv`: report it (rank ≠ 0), hear and pass on stops; rank 0 gets the
    /// other ranks' counts of this interval received so far.
    pub fn interval(&mut self, iv: &Interval) -> [u64; 4] {
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
        self.watch();
        self.totals.remove(&Self::key(iv)).unwrap_or_default()
    }

    /// Between intervals of a job that reports no counts (a database run): rank 0 takes in
    /// what arrived; the others send a beat at most once per `every`, so rank 0 can tell a
    /// rank alive from one gone; stops are heard and passed on.
    pub fn tick(&mut self, every: Duration, last: &mut Instant) {
        if self.rank == 0 {
            self.drain_live();
        } else if last.elapsed() >= every {
            *last = Instant::now();
            let msg = [u64::from(self.rank), u64::MAX, 0, 0, 0, 0];
            self.world.process_at_rank(0).send_with_tag(&msg[..], LIVE);
            self.live_sent += 1;
        }
        self.watch();
    }

    /// Hears a stop from another rank and passes on this rank's own (no counts sent).
    pub fn watch(&mut self) {
        self.hear_stop();
        self.pass_stop();
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
            self.heard_at[rank as usize] = Instant::now();
            let rep = &mut self.reported[rank as usize];
            rep[0] += r;
            rep[1] += w;
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
    pub fn pass_stop(&mut self) {
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

    /// Rank 0: every other rank's part (its last message, tag PART), by rank; `None` for a
    /// rank given up as lost. Polled, never a blocking receive, so that a rank that died
    /// (killed outright, its host gone) does not keep what the others measured from being
    /// stored: a rank alive reports after every `interval`, so one silent for a beat and a
    /// bit after this job was stopped (`since` or its last report, whichever is later) is
    /// gone; a job ending normally waits ten beats and ten seconds.
    pub fn parts(&mut self, since: Instant, interval: Duration) -> Vec<Option<Vec<u8>>> {
        let n = self.size as usize;
        let mut got: Vec<Option<Vec<u8>>> = vec![None; n];
        let mut waiting: Vec<bool> = (0..n).map(|r| r != 0).collect();
        while waiting.iter().any(|w| *w) {
            self.drain_live();
            self.hear_stop();
            if let Some(m) = self
                .world
                .any_process()
                .immediate_matched_probe_with_tag(PART)
            {
                let r = m.1.source_rank() as usize;
                let (bytes, _) = m.matched_receive_vec::<u8>();
                got[r] = Some(bytes);
                waiting[r] = false;
                continue;
            }
            let grace = if self.stop.load(Ordering::Relaxed) {
                interval.mul_f64(1.2) + Duration::from_millis(100)
            } else {
                interval * 10 + Duration::from_secs(10)
            };
            for (r, w) in waiting.iter_mut().enumerate() {
                if *w && self.heard_at[r].max(since).elapsed() > grace {
                    *w = false;
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        got
    }

    /// Rank 0: the live reports heard from rank `r`, and the reads and writes they counted.
    pub fn live_heard(&self, r: u32) -> (u64, [u64; 2]) {
        (self.heard[r as usize], self.reported[r as usize])
    }

    /// Rank 0, after rank `r`'s part: the live reports it sent that are still unread.
    pub fn finish_live(&mut self, r: u32, sent: u64) {
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

/// A mistake every rank finds alike once MPI is up: rank 0 says it, then all end together
/// (a rank ending first would have the launcher tear the job down before rank 0 printed).
pub fn said_by_rank_zero(world: &SimpleCommunicator, e: crate::usage::UsageError) -> anyhow::Error {
    if world.rank() == 0 {
        crate::exit::report(&e.into());
    }
    world.barrier();
    super::Quiet(crate::exit_code::USAGE).into()
}

/// `{rank}` and `{host}` replaced in every target; whether any target is shared by every
/// rank (named without either).
pub fn rank_targets(specs: &mut [iogauge_engine::TargetSpec], rank: u32, host: &str) -> bool {
    let shared = specs
        .iter()
        .any(|t| !names_a_rank(&t.path.to_string_lossy()));
    for t in specs {
        t.path = per_rank(&t.path, rank, host);
    }
    shared
}

/// The start every command over ranks makes: the store opened on rank 0 (agreed: a bad
/// --store ends every rank), and the stop flag (Ctrl-C, SIGTERM, and the launcher's
/// teardown).
pub fn begin(
    world: &SimpleCommunicator,
    store: Option<&Path>,
    label: Option<String>,
) -> anyhow::Result<(Option<iogauge_session::Session>, Arc<AtomicBool>)> {
    let session = agreed(
        world,
        if world.rank() == 0 {
            iogauge_session::Session::begin(store)
                .map(|mut s| {
                    s.set_label(label);
                    Some(s)
                })
                .map_err(Into::into)
        } else {
            Ok(None)
        },
    )?;
    let stop = match &session {
        Some(s) => s.stop().clone(),
        None => iogauge_session::stop_flag()?,
    };
    stop_on_teardown(&stop)?;
    Ok((session, stop))
}

/// Every rank's targets prepared, rank 0 first: a target all ranks share is pre-filled once,
/// then the others find it ready. Agreed at each turn.
pub fn prepare_in_turn(
    world: &SimpleCommunicator,
    targets: &crate::target::options::Targets,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<Vec<iogauge_engine::Target>> {
    let rank = world.rank();
    let mine = |turn: bool| turn.then(|| crate::session::prepare_targets(targets, stop));
    let first = agreed(world, mine(rank == 0).transpose())?;
    match agreed(world, mine(rank != 0).transpose())? {
        Some(t) => Ok(t),
        None => first.ok_or_else(|| anyhow!("rank 0 prepared no targets")),
    }
}

/// What rank 0 records for a rank that sent no part.
pub const LOST: &str = "sent no part: the rank died (killed outright, or its host or network failed); the job was stored without it";

/// Under a launcher, SIGCONT stops the job too: Open MPI's mpirun, when a rank dies, sends
/// the others SIGCONT, then SIGTERM a second later, then SIGKILL a second after that; taking
/// the first as the stop leaves rank 0 the time to store what the ranks alive measured. (A
/// job resumed after Ctrl-Z ends too: its figures were paused anyway.)
pub fn stop_on_teardown(stop: &Arc<AtomicBool>) -> anyhow::Result<()> {
    signal_hook::flag::register(signal_hook::consts::SIGCONT, Arc::clone(stop))?;
    Ok(())
}

/// Rank `rank`'s seed: every rank draws its own offsets (ranks reading one shared target with
/// the job's seed would read the same blocks at the same time, and an array's cache would
/// serve all but the first). Rank 0 keeps the job's seed, as stored.
pub fn rank_seed(seed: u64, rank: u32) -> u64 {
    seed.wrapping_add(u64::from(rank).wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// The cores this rank may spread its workers over: the host's, shared with the other ranks
/// on it (Open MPI's `OMPI_COMM_WORLD_LOCAL_SIZE`; without it, all of them).
pub fn rank_cores() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let local = std::env::var("OMPI_COMM_WORLD_LOCAL_SIZE")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(1)
        .max(1);
    (cores / local).max(1)
}

/// `{rank}` and `{host}` in a target path.
pub fn per_rank(path: &Path, rank: u32, host: &str) -> PathBuf {
    PathBuf::from(per_rank_text(&path.to_string_lossy(), rank, host))
}

/// `{rank}` and `{host}` in a path or a DSN.
pub fn per_rank_text(text: &str, rank: u32, host: &str) -> String {
    text.replace("{rank}", &rank.to_string())
        .replace("{host}", host)
}

/// Whether a path or DSN names something per rank (`{rank}` or `{host}` in it).
pub fn names_a_rank(text: &str) -> bool {
    text.contains("{rank}") || text.contains("{host}")
}

/// How a rank other than 0 ends once its part is sent: its own failure said as its own
/// (rank 0 stores it with the job), else success.
pub fn rank_end(rank: u32, error: Option<String>) -> anyhow::Result<std::process::ExitCode> {
    match error {
        Some(e) => Err(anyhow!("rank {rank}: {e}")),
        None => Ok(std::process::ExitCode::SUCCESS),
    }
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Whether `ok` holds on every rank (a collective: every rank must call it at this point).
pub fn all_ok(world: &SimpleCommunicator, ok: bool) -> bool {
    let mine = i32::from(ok);
    let mut all = 0i32;
    world.all_reduce_into(&mine, &mut all, SystemOperation::min());
    all == 1
}

/// `r` on this rank, once every rank has reached this point: an error here is this rank's;
/// an error elsewhere ends this rank too, quietly (the failing rank says why).
pub fn agreed<T>(world: &SimpleCommunicator, r: anyhow::Result<T>) -> anyhow::Result<T> {
    let ok = all_ok(world, r.is_ok());
    match r {
        Err(e) => Err(e.context(format!("rank {}", world.rank()))),
        Ok(_) if !ok => Err(anyhow!(super::Quiet(crate::exit_code::RUNTIME))),
        ok => ok,
    }
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
    fn ranks_draw_their_own_offsets() {
        assert_eq!(rank_seed(42, 0), 42);
        let seeds: std::collections::BTreeSet<u64> = (0..64).map(|r| rank_seed(42, r)).collect();
        assert_eq!(seeds.len(), 64);
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
