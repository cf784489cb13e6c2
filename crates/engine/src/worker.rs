//! What every backend's worker shares: the start gate, the interval clock that cuts the
//! worker's own counters into slices on the job's common grid, the pacer for `--rate-iops`,
//! and the phase plan (ramp, then the measured window).

use crate::error::EngineError;
use crate::target::Target;
use iogauge_model::spec::JobSpec;
use iogauge_stats::{DirStats, Direction, Interval, Nanos, PerDir, Phase};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// Everything one worker thread needs; built by `job::run`, consumed by a backend.
pub(crate) struct WorkerCtx<'a> {
    pub id: usize,
    pub spec: &'a JobSpec,
    pub targets: &'a [Target],
    pub gen: crate::offsets::OpGen,
    /// A replay's requests, in place of `gen`'s (the job's one worker).
    pub script: Option<&'a mut crate::replay::Cursor>,
    pub plan: Plan,
    /// Outstanding I/Os for this worker: its slots `id * qd ..` of the pool.
    pub qd: u32,
    /// The job's buffers.
    pub pool: &'a crate::pool::BufPool,
    /// io_uring's setup, or `None` for psync.
    pub uring: Option<crate::uring::UringChoice>,
    pub gate: &'a Gate<'a>,
    pub halt: &'a AtomicBool,
    /// `--layout`: how logical I/Os become member I/Os (io_uring only).
    pub placement: Option<&'a crate::placement::Placement>,
    /// `--steady`: where the job announces the ramp's end.
    pub ramp_end: Option<&'a RampEnd>,
    pub tx: Sender<Msg>,
}

/// What a worker tells the job.
pub(crate) enum Msg {
    /// One finished slice of this worker's I/O.
    Part {
        worker: usize,
        interval: Box<Interval>,
    },
    /// The worker has stopped; its last part was already sent.
    Done {
        worker: usize,
        result: Result<(), EngineError>,
    },
}

/// All workers start together: each sets up (ring, buffers) and waits here; the last to
/// arrive stamps the job's time zero and lets everyone go. A job that cannot start every
/// worker (the OS refused a thread) aborts the gate instead, so nobody waits forever.
pub(crate) struct Gate<'a> {
    /// Workers arrived, and whether the gate was aborted.
    state: Mutex<(usize, bool)>,
    opened: Condvar,
    workers: usize,
    t0: OnceLock<(Instant, SystemTime)>,
    /// Told the job's t0 the moment it is stamped (the session's sampler starts there).
    on_open: Option<&'a (dyn Fn(Instant) + Sync)>,
}

impl<'a> Gate<'a> {
    pub fn new(workers: usize) -> Self {
        Gate {
            state: Mutex::new((0, false)),
            opened: Condvar::new(),
            workers,
            t0: OnceLock::new(),
            on_open: None,
        }
    }

    /// A gate that tells `on_open` the job's t0 when it opens.
    pub fn telling(workers: usize, on_open: &'a (dyn Fn(Instant) + Sync)) -> Self {
        Gate {
            on_open: Some(on_open),
            ..Gate::new(workers)
        }
    }

    /// Waits for every worker; the job's t0, or `None` when the gate was aborted.
    pub fn wait(&self) -> Option<Instant> {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.0 += 1;
        if s.0 == self.workers && !s.1 {
            let now = Instant::now();
            let _ = self.t0.set((now, SystemTime::now()));
            if let Some(tell) = self.on_open {
                tell(now);
            }
            self.opened.notify_all();
        }
        let s = self
            .opened
            .wait_while(s, |s| !s.1 && self.t0.get().is_none())
            .unwrap_or_else(PoisonError::into_inner);
        if s.1 {
            return None;
        }
        self.t0.get().map(|t| t.0)
    }

    /// Lets every waiting (and later) worker go without starting.
    pub fn abort(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
        self.opened.notify_all();
    }

    pub fn started(&self) -> Option<SystemTime> {
        self.t0.get().map(|t| t.1)
    }

    /// The job's time zero, once the workers have passed the gate.
    pub fn t0(&self) -> Option<Instant> {
        self.t0.get().map(|t| t.0)
    }
}

/// The end of a `--steady` ramp, decided by the job while the workers run: nanoseconds from
/// t0, `u64::MAX` until decided. Workers read it on every loop (one relaxed load).
pub(crate) struct RampEnd(AtomicU64);

impl RampEnd {
    pub fn new() -> Self {
        RampEnd(AtomicU64::new(u64::MAX))
    }

    pub fn set(&self, from_t0: Duration) {
        self.0.store(from_t0.as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn get(&self) -> Option<Duration> {
        match self.0.load(Ordering::Relaxed) {
            u64::MAX => None,
            ns => Some(Duration::from_nanos(ns)),
        }
    }

    /// Moves a phase to the decided ramp end: the ramp's deadline, or the measured window's
    /// start (and its deadline, `time` later). True when the bounds changed.
    #[inline]
    pub fn apply(&self, b: &mut PhaseBounds, t0: Instant, time: Option<Duration>) -> bool {
        let Some(end) = self.get() else {
            return false;
        };
        let at = t0 + end;
        match b.phase {
            Phase::Ramp if b.deadline != Some(at) => {
                b.deadline = Some(at);
                true
            }
            Phase::Measure if b.start != at => {
                b.start = at;
                b.deadline = time.map(|t| at + t);
                true
            }
            _ => false,
        }
    }
}

/// The bounds of one phase for one worker.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PhaseBounds {
    pub phase: Phase,
    pub start: Instant,
    pub deadline: Option<Instant>,
    /// I/Os this worker may issue in the phase.
    pub quota: Option<u64>,
}

/// A worker's plan: the ramp (if any), then the measured window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub ramp: Duration,
    pub time: Option<Duration>,
    pub ios: Option<u64>,
    pub every: Duration,
    /// This worker's share of `--rate-iops`.
    pub rate: Option<f64>,
    /// `--steady`: the longest the ramp may last (its end comes through [`RampEnd`]).
    pub steady_timeout: Option<Duration>,
}

impl Plan {
    /// The ramp (if any) and the measured window. Under `--steady` the ramp runs until the
    /// timeout unless [`RampEnd::apply`] moves both phases earlier.
    pub fn phases(&self, t0: Instant) -> Vec<PhaseBounds> {
        let ramp = self.steady_timeout.unwrap_or(self.ramp);
        let mut out = Vec::with_capacity(2);
        if !ramp.is_zero() {
            out.push(PhaseBounds {
                phase: Phase::Ramp,
                start: t0,
                deadline: Some(t0 + ramp),
                quota: None,
            });
        }
        let start = t0 + ramp;
        out.push(PhaseBounds {
            phase: Phase::Measure,
            start,
            deadline: self.time.map(|t| start + t),
            quota: self.ios,
        });
        out
    }
}

/// Cuts one worker's completions into intervals on the common grid `start + k × every`.
pub(crate) struct Clock<'a> {
    worker: usize,
    t0: Instant,
    every: Duration,
    phase: Phase,
    index: u32,
    part_start: Instant,
    next: Instant,
    /// The phase's deadline: no interval starts at or after it, so the I/Os that drain after
    /// the deadline join the last interval instead of forming a sliver of their own.
    stop_at: Option<Instant>,
    cur: PerDir<DirStats>,
    /// Under a layout: member I/Os completed in the current interval, `[reads, writes]`.
    members: Vec<[u64; 2]>,
    tx: &'a Sender<Msg>,
}

impl<'a> Clock<'a> {
    pub fn new(worker: usize, t0: Instant, every: Duration, tx: &'a Sender<Msg>) -> Self {
        Clock {
            worker,
            t0,
            every,
            phase: Phase::Measure,
            index: 0,
            part_start: t0,
            next: t0 + every,
            stop_at: None,
            cur: PerDir::default(),
            members: Vec::new(),
            tx,
        }
    }

    /// A phase's deadline moved (`--steady` decided the ramp's end).
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.stop_at = deadline;
    }

    pub fn begin(&mut self, b: &PhaseBounds) {
        self.phase = b.phase;
        self.index = 0;
        self.part_start = b.start;
        self.next = b.start + self.every;
        self.stop_at = b.deadline;
    }

    /// Closes every interval that ended before `now`. Call before recording completions
    /// observed at `now`.
    #[inline]
    pub fn tick(&mut self, now: Instant) {
        if now >= self.next {
            self.roll(now);
        }
    }

    #[cold]
    fn roll(&mut self, now: Instant) {
        while now >= self.next && self.stop_at.is_none_or(|d| self.next < d) {
            let end = self.next;
            self.flush(end);
            self.index += 1;
            self.part_start = end;
            self.next = end + self.every;
        }
    }

    /// Counts member I/Os per target (layouts); `n` members.
    pub fn with_members(mut self, n: usize) -> Self {
        self.members = vec![[0, 0]; n];
        self
    }

    #[inline]
    pub fn record_member(&mut self, member: usize, dir: Direction) {
        self.members[member][usize::from(dir == Direction::Write)] += 1;
    }

    #[inline]
    pub fn record(&mut self, dir: Direction, bytes: u64, lat_ns: u64) {
        self.cur[dir].record(bytes, lat_ns);
    }

    /// Sends the last, partial interval of the phase, ending at `end`.
    pub fn finish(&mut self, end: Instant) {
        self.flush(end.max(self.part_start));
    }

    fn flush(&mut self, end: Instant) {
        let rel = |t: Instant| Nanos::from_duration(t.saturating_duration_since(self.t0));
        let n = self.members.len();
        let interval = Interval {
            phase: self.phase,
            index: self.index,
            start: rel(self.part_start),
            end: rel(end),
            io: std::mem::take(&mut self.cur),
            members: std::mem::replace(&mut self.members, vec![[0, 0]; n]),
        };
        // The receiver lives until every worker is done; a failed send means the job is
        // already tearing down, and there is nobody left to tell.
        let _ = self.tx.send(Msg::Part {
            worker: self.worker,
            interval: Box::new(interval),
        });
    }
}

/// How far behind its schedule a pacer may be and still catch up.
const CATCH_UP: Duration = Duration::from_millis(100);

/// Paces issues to a rate: one I/O per `period`, catching up at most `CATCH_UP` after a stall.
pub(crate) struct Pacer {
    period: Duration,
    next: Instant,
}

impl Pacer {
    pub fn new(rate: f64, start: Instant) -> Self {
        Pacer {
            period: Duration::from_secs_f64(1.0 / rate),
            next: start,
        }
    }

    /// When the next I/O may go; `None` means now.
    #[inline]
    pub fn wait_for(&self, now: Instant) -> Option<Duration> {
        (self.next > now).then(|| self.next - now)
    }

    #[inline]
    pub fn take(&mut self, now: Instant) {
        // A late wake-up or a slow I/O puts the schedule behind; catch up on at most
        // CATCH_UP of it (the device's queue bounds the burst), so the average rate holds
        // without a flood after a long stall.
        if self.next + CATCH_UP < now {
            self.next = now - CATCH_UP;
        }
        self.next += self.period;
    }
}

/// Whether the phase still issues new I/Os.
#[inline]
pub(crate) fn may_issue(b: &PhaseBounds, now: Instant, issued: u64, halt: bool) -> bool {
    !halt && b.deadline.is_none_or(|d| now < d) && b.quota.is_none_or(|q| issued < q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn clock_cuts_on_the_grid_and_sends_empty_slices() {
        let (tx, rx) = channel();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut c = Clock::new(3, t0, ms(100), &tx);
        let plan = Plan {
            ramp: ms(50),
            time: Some(ms(400)),
            ios: None,
            every: ms(100),
            rate: None,
            steady_timeout: None,
        };
        let phases = plan.phases(t0);
        assert_eq!(phases.len(), 2);
        c.begin(&phases[1]);
        c.tick(t0 + ms(60));
        c.record(Direction::Read, 4096, 10);
        c.tick(t0 + ms(390)); // closes [50,150), [150,250), [250,350)
        c.record(Direction::Write, 8192, 10);
        c.finish(t0 + ms(400));
        drop(tx);
        let parts: Vec<(u32, u64, u64, u64, u64)> = rx
            .iter()
            .map(|m| match m {
                Msg::Part {
                    worker,
                    interval: i,
                } => {
                    assert_eq!(worker, 3);
                    (
                        i.index,
                        i.start.0 / 1_000_000,
                        i.end.0 / 1_000_000,
                        i.io.read.ios,
                        i.io.write.ios,
                    )
                }
                Msg::Done { .. } => unreachable!(),
            })
            .collect();
        assert_eq!(
            parts,
            [
                (0, 50, 150, 1, 0),
                (1, 150, 250, 0, 0),
                (2, 250, 350, 0, 0),
                (3, 350, 400, 0, 1)
            ]
        );
    }

    #[test]
    fn drain_after_the_deadline_joins_the_last_interval() {
        let (tx, rx) = channel();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut c = Clock::new(0, t0, ms(100), &tx);
        let plan = Plan {
            ramp: Duration::ZERO,
            time: Some(ms(200)),
            ios: None,
            every: ms(100),
            rate: None,
            steady_timeout: None,
        };
        c.begin(&plan.phases(t0)[0]);
        c.tick(t0 + ms(150));
        c.record(Direction::Read, 4096, 10);
        c.tick(t0 + ms(203)); // past the deadline: completions of the drain
        c.record(Direction::Read, 4096, 10);
        c.finish(t0 + ms(204));
        drop(tx);
        let parts: Vec<(u32, u64, u64, u64)> = rx
            .iter()
            .map(|m| match m {
                Msg::Part { interval: i, .. } => (
                    i.index,
                    i.start.0 / 1_000_000,
                    i.end.0 / 1_000_000,
                    i.io.read.ios,
                ),
                Msg::Done { .. } => unreachable!(),
            })
            .collect();
        assert_eq!(parts, [(0, 0, 100, 0), (1, 100, 204, 2)]);
    }

    #[test]
    fn pacer_spaces_issues_and_limits_catch_up() {
        let t = Instant::now();
        let mut p = Pacer::new(1000.0, t);
        assert_eq!(p.wait_for(t), None);
        p.take(t);
        assert_eq!(p.wait_for(t), Some(Duration::from_millis(1)));
        // 500 ms late: 100 ms of schedule (101 I/Os, both ends) may go at once, not 500.
        let later = t + Duration::from_millis(500);
        for i in 0..=100 {
            assert_eq!(p.wait_for(later), None, "catch-up I/O {i}");
            p.take(later);
        }
        assert!(p.wait_for(later).is_some(), "catch-up is bounded");
    }

    #[test]
    fn issue_bounds() {
        let now = Instant::now();
        let b = PhaseBounds {
            phase: Phase::Measure,
            start: now,
            deadline: None,
            quota: Some(2),
        };
        assert!(may_issue(&b, now, 1, false));
        assert!(!may_issue(&b, now, 2, false));
        assert!(!may_issue(&b, now, 0, true));
        let b = PhaseBounds {
            deadline: Some(now),
            quota: None,
            ..b
        };
        assert!(!may_issue(&b, now, 0, false));
    }
}
