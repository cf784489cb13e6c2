//! The small messages of a running job over ranks: live counts up the ranks' [`Shape`] after
//! every interval, reduced on the way ([`LiveAgg`]), and a stop passed from neighbour to
//! neighbour (each rank's part at the end goes up in `gather`).

use super::live::{self, LiveAgg};
use super::tree::Shape;
use iogauge_stats::Interval;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Message tags: a rank's part at the end, its counts after each interval (to its parent),
/// and a stop (to its neighbours).
pub(crate) const PART: i32 = 1;
pub(crate) const LIVE: i32 = 2;
const STOP: i32 = 3;

/// The small messages of a running job, off the I/O threads (on the collecting thread,
/// between intervals), point to point so that ranks ending at different intervals never wait
/// on each other for long: after each interval a rank adds its counts to what its children
/// sent for that interval (waiting for them a tenth of an interval at most) and sends its
/// parent one entry per interval it holds; it looks for a stop from any rank; a rank that
/// stops (Ctrl-C, an error) tells its neighbours once, and each passes it on, so all stop at
/// their next interval boundary after at most `depth` hops.
pub struct Talk<'a> {
    pub(crate) world: &'a SimpleCommunicator,
    pub(crate) rank: u32,
    pub(crate) size: u32,
    pub(crate) shape: Shape,
    stop: Arc<AtomicBool>,
    told: bool,
    /// Live messages this rank sent its parent, and their bytes.
    pub live_sent: u64,
    pub live_sent_bytes: u64,
    /// Bytes of live messages this rank received from its children.
    pub live_received_bytes: u64,
    /// How long a rank waits after its own interval for its children's.
    wait: Duration,
    /// By rank (only its children's are ever filled in): live messages received, when last
    /// heard, the reads and writes they counted, and the latest interval reported.
    heard: Vec<u64>,
    pub(crate) heard_at: Vec<Instant>,
    reported: Vec<[u64; 2]>,
    last_key: Vec<Option<u64>>,
    /// Entries received or made, not yet passed up (rank 0: not yet shown), by interval.
    pending: BTreeMap<u64, LiveAgg>,
}

impl<'a> Talk<'a> {
    /// `interval`: the job's, for how long a rank waits for its children's counts.
    pub fn new(
        world: &'a SimpleCommunicator,
        stop: Arc<AtomicBool>,
        shape: Shape,
        interval: Duration,
    ) -> Talk<'a> {
        let n = world.size() as usize;
        Talk {
            world,
            rank: world.rank() as u32,
            size: world.size() as u32,
            shape,
            stop,
            told: false,
            live_sent: 0,
            live_sent_bytes: 0,
            live_received_bytes: 0,
            wait: (interval / 10).min(Duration::from_millis(100)),
            heard: vec![0; n],
            heard_at: vec![Instant::now(); n],
            reported: vec![[0; 2]; n],
            last_key: vec![None; n],
            pending: BTreeMap::new(),
        }
    }

    /// No live view is shown (a calibration's points): a rank passes its counts up at once,
    /// without waiting for its children's.
    pub fn without_live_view(mut self) -> Self {
        self.wait = Duration::ZERO;
        self
    }

    fn key(iv: &Interval) -> u64 {
        (u64::from(iv.phase == iogauge_stats::Phase::Measure) << 32) | u64::from(iv.index)
    }

    /// After interval `iv`: its counts, with the children's for it, go up (rank ≠ 0); stops
    /// are heard and passed on. Rank 0 gets the job's entry for this interval: every rank
    /// whose counts reached it in time (a later one is left out of the live view; the
    /// stored result has all).
    pub fn interval(&mut self, iv: &Interval) -> Option<LiveAgg> {
        let key = Self::key(iv);
        let io = [
            iv.io.read.ios,
            iv.io.write.ios,
            iv.io.read.bytes.0,
            iv.io.write.bytes.0,
        ];
        self.pending
            .entry(key)
            .or_default()
            .add(&LiveAgg::one(key, self.rank, io));
        self.wait_for_children(key);
        self.watch();
        match self.shape.parent(self.rank) {
            Some(p) => {
                self.send_pending(p);
                None
            }
            None => {
                let got = self.pending.remove(&key);
                // Entries for intervals shown already are late: left out.
                self.pending = self.pending.split_off(&key);
                got
            }
        }
    }

    /// Until every child has reported interval `key` or a tenth of an interval has passed.
    fn wait_for_children(&mut self, key: u64) {
        if self.wait.is_zero() {
            self.drain_live();
            return;
        }
        let until = Instant::now() + self.wait;
        let kids = self.shape.children(self.rank, self.size);
        loop {
            self.drain_live();
            let all = kids
                .iter()
                .all(|c| self.last_key[*c as usize].is_some_and(|k| k >= key));
            if all || Instant::now() >= until {
                return;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Every entry this rank holds, to its parent `to`, in one message (none: a beat).
    fn send_pending(&mut self, to: u32) {
        let entries: Vec<LiveAgg> = std::mem::take(&mut self.pending).into_values().collect();
        let msg = live::encode(self.rank, &entries);
        self.world
            .process_at_rank(to as i32)
            .send_with_tag(&msg[..], LIVE);
        self.live_sent += 1;
        self.live_sent_bytes += 8 * msg.len() as u64;
    }

    /// Between intervals of a job that reports no counts (a database run), and while a rank
    /// waits for its children's parts: what arrived is taken in; a rank sends its parent a
    /// beat at most once per `every`, so the parent can tell a rank alive from one gone;
    /// stops are heard and passed on.
    pub fn tick(&mut self, every: Duration, last: &mut Instant) {
        self.drain_live();
        if let Some(p) = self.shape.parent(self.rank) {
            if last.elapsed() >= every {
                *last = Instant::now();
                // Counts a rank holds go with its beat.
                self.send_pending(p);
            }
        }
        self.watch();
    }

    /// Hears a stop from another rank and passes on this rank's own (no counts sent).
    pub fn watch(&mut self) {
        self.hear_stop();
        self.pass_stop();
    }

    pub(crate) fn drain_live(&mut self) {
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
        let Some((from, entries)) = live::decode(v) else {
            return;
        };
        let Some(f) = (from < self.size).then_some(from as usize) else {
            return;
        };
        self.live_received_bytes += 8 * v.len() as u64;
        self.heard[f] += 1;
        self.heard_at[f] = Instant::now();
        for e in entries {
            self.reported[f][0] += e.io[0];
            self.reported[f][1] += e.io[1];
            self.last_key[f] = self.last_key[f].max(Some(e.key));
            self.pending.entry(e.key).or_default().add(&e);
        }
    }

    pub(crate) fn hear_stop(&mut self) {
        while let Some(m) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(STOP)
        {
            let _ = m.matched_receive_vec::<u8>();
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Whether this job is stopping (a stop of its own or heard).
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Tells this rank's neighbours to stop, once, when this one is stopping (each passes it
    /// on in turn: every rank hears it, from at most 2(N−1) messages in all).
    pub fn pass_stop(&mut self) {
        if self.told || !self.stopping() {
            return;
        }
        self.told = true;
        for r in self.shape.neighbours(self.rank, self.size) {
            self.world
                .process_at_rank(r as i32)
                .send_with_tag(&[1u8][..], STOP);
        }
    }

    /// How long a rank silent since `since` (or its last message, whichever is later) is
    /// waited for before it is given up as lost: a beat and a bit once the job was stopped,
    /// ten beats and ten seconds for a job ending normally.
    pub fn grace(&self, interval: Duration) -> Duration {
        if self.stopping() {
            interval.mul_f64(1.2) + Duration::from_millis(100)
        } else {
            interval * 10 + Duration::from_secs(10)
        }
    }

    /// The live reports heard from rank `r` (a child), and the reads and writes they counted
    /// (over its subtree).
    pub fn live_heard(&self, r: u32) -> (u64, [u64; 2]) {
        (self.heard[r as usize], self.reported[r as usize])
    }

    /// After child `r`'s part: the live reports it sent that are still unread.
    pub fn finish_live(&mut self, r: u32, sent: u64) {
        while self.heard[r as usize] < sent {
            let (v, _) = self
                .world
                .process_at_rank(r as i32)
                .receive_vec_with_tag::<u64>(LIVE);
            let before = self.heard[r as usize];
            self.count_live(&v);
            if self.heard[r as usize] == before {
                // Not a message this build sends: counted so the loop ends.
                self.heard[r as usize] += 1;
            }
        }
    }
}
