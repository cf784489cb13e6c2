//! Replaying recorded requests: the job's one worker takes its I/Os from a [`Script`] (each
//! with its recorded time, target, offset and length, already mapped onto the targets by the
//! caller) instead of the offset generator. Timed, each request goes at its time from the
//! phase's start (open loop, as a recorded arrival stream goes whatever the device does):
//! its latency counts from that time, so a request that waited for a free slot or a late
//! wake-up shows that wait, and its lateness (actual submission minus its time) is kept.
//! Fast, the requests go in their order as soon as a slot is free (closed loop at the depth
//! asked).

use iogauge_model::spec::Pace;
use iogauge_stats::{Direction, LatHist};
use std::time::{Duration, Instant};

/// A request is late when it goes more than this after its time: the cost of one wake-up
/// and submission here is tens of microseconds, so below a millisecond is the replay's own
/// jitter, not a device that cannot keep up.
pub const LATE: Duration = Duration::from_millis(1);

/// One recorded request, mapped onto the targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptOp {
    /// Its time from the trace's start (not yet scaled by the pace's speed).
    pub at: Duration,
    pub dir: Direction,
    /// The target's index among the job's targets.
    pub target: u32,
    /// Bytes from the target's start, aligned for it.
    pub offset: u64,
    pub len: u32,
}

/// The requests to replay, in the order of their times, and how to pace them. Read as the
/// worker goes (a trace decodes chunk by chunk), so memory stays bounded.
pub struct Script {
    pub ops: Box<dyn Iterator<Item = ScriptOp> + Send>,
    pub pace: Pace,
}

/// What pacing the replay cost: how late its requests went.
#[derive(Clone, Debug, Default)]
pub struct ReplayOutcome {
    /// Requests issued.
    pub issued: u64,
    /// Requests issued more than [`LATE`] after their time (timed only).
    pub late: u64,
    /// Every request's lateness (timed only; 0 for one issued on time), nanoseconds.
    pub lateness: LatHist,
}

/// The worker's cursor over a script: the next request as the driver issues it.
pub(crate) struct Cursor {
    ops: Box<dyn Iterator<Item = ScriptOp> + Send>,
    /// Nanoseconds of the phase per recorded nanosecond (1 / speed); `None`: fast.
    scale: Option<f64>,
    pub outcome: ReplayOutcome,
}

impl Cursor {
    pub fn new(script: Script) -> Cursor {
        let scale = match script.pace {
            Pace::Timed { speed } => Some(1.0 / speed),
            Pace::Fast { .. } => None,
        };
        Cursor {
            ops: script.ops,
            scale,
            outcome: ReplayOutcome::default(),
        }
    }

    /// The next request and when it is due (`start` + its scaled time; `None`: now), or
    /// `None` at the script's end.
    #[inline]
    pub fn next(&mut self, start: Instant) -> Option<(ScriptOp, Option<Instant>)> {
        let op = self.ops.next()?;
        let due = self
            .scale
            .map(|s| start + Duration::from_nanos((op.at.as_nanos() as f64 * s) as u64));
        Some((op, due))
    }

    /// A request due at `due` went at `now`.
    #[inline]
    pub fn issued(&mut self, due: Option<Instant>, now: Instant) {
        self.outcome.issued += 1;
        if let Some(due) = due {
            let late = now.saturating_duration_since(due);
            self.outcome.late += u64::from(late > LATE);
            self.outcome.lateness.record(late.as_nanos() as u64);
        }
    }
}

#[cfg(test)]
mod job_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(times_ms: &[u64]) -> Box<dyn Iterator<Item = ScriptOp> + Send> {
        let v: Vec<ScriptOp> = times_ms
            .iter()
            .map(|&t| ScriptOp {
                at: Duration::from_millis(t),
                dir: Direction::Read,
                target: 0,
                offset: t * 4096,
                len: 4096,
            })
            .collect();
        Box::new(v.into_iter())
    }

    #[test]
    fn timed_requests_are_due_at_their_scaled_time_and_lateness_is_counted() {
        let start = Instant::now();
        let mut c = Cursor::new(Script {
            ops: ops(&[0, 10, 20]),
            pace: Pace::Timed { speed: 2.0 },
        });
        let (_, due) = c.next(start).unwrap();
        assert_eq!(due, Some(start));
        c.issued(due, start);
        let (op, due) = c.next(start).unwrap();
        assert_eq!(op.offset, 10 * 4096);
        assert_eq!(
            due,
            Some(start + Duration::from_millis(5)),
            "×2: half the time"
        );
        c.issued(due, start + Duration::from_millis(8));
        assert!(c.next(start).is_some());
        assert!(c.next(start).is_none(), "the script's end");
        assert_eq!((c.outcome.issued, c.outcome.late), (2, 1));
        assert_eq!(c.outcome.lateness.count(), 2);
        let max = c.outcome.lateness.max_ns();
        assert!((2_990_000..=3_010_000).contains(&max), "{max}");
    }

    #[test]
    fn fast_requests_are_due_now_and_never_late() {
        let start = Instant::now();
        let mut c = Cursor::new(Script {
            ops: ops(&[0, 1000]),
            pace: Pace::Fast { depth: 4 },
        });
        let (_, due) = c.next(start).unwrap();
        assert_eq!(due, None);
        c.issued(due, start + Duration::from_secs(5));
        assert_eq!((c.outcome.issued, c.outcome.late), (1, 0));
        assert!(c.outcome.lateness.is_empty());
    }
}
