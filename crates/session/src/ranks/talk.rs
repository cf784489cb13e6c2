//! The small messages of a running job over ranks: live counts to rank 0 after every
//! interval, stops to every rank, and each rank's part at the end.

use iogauge_stats::Interval;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Message tags: a rank's part at the end, its counts after each interval (to rank 0), and a
/// stop (to every other rank).
pub(crate) const PART: i32 = 1;
pub(crate) const LIVE: i32 = 2;
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
