//! The database sampler's loop, whichever engine's: on its own connection it reads the
//! cumulative load counters at t0 and at every interval boundary, and the sessions' wait
//! events every 100 ms in between (where the engine shows them). The last snapshot waits for
//! the sessions to finish (they flush their statistics first), so the totals include
//! everything they did. Counters per relation, where the engine keeps them, are read only
//! twice: as the measured window starts (after the ramp) and after the last snapshot.
//!
//! What is read is the engine's [`Counters`]; when, and what goes to the collector, is here.

use crate::common::aas::{AasAcc, ActivityRow, SAMPLE_EVERY};
use crate::common::child::wait_until;
use crate::common::workload::shared::{Msg, Seat};
use crate::error::DbError;
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::db::relations::{RelationCounters, RelationWindow};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long the final snapshot waits for sessions to leave after the end or a stop.
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

/// What an engine's sampler reads, on the sampler's own connection.
pub(crate) trait Counters {
    /// The cumulative load-profile counters now.
    fn counters(&mut self) -> Result<LoadDelta, DbError>;

    /// Whether the engine shows its sessions' wait events (else no AAS is sampled).
    fn shows_waits(&self) -> bool;

    /// The test sessions' (and background writers') wait events now.
    fn waits(&mut self) -> Result<Vec<ActivityRow>, DbError>;

    /// Every user relation's counters now, or `None` where the engine keeps none.
    fn relations(&mut self) -> Result<Option<Vec<RelationCounters>>, DbError> {
        Ok(None)
    }
}

/// The sampler's run once its statements are ready: arrives at the gate (`started` set when
/// it let the sampler through), then samples `c` on the grid until the sessions are done.
pub(crate) fn sample_on_grid(c: &mut impl Counters, mut seat: Seat<'_>) -> Result<(), DbError> {
    let Some(t0) = seat.arrive() else {
        return Ok(());
    };
    let (sh, tx) = (seat.sh, seat.tx);
    let mut prev = c.counters()?;
    // The relations at the measured window's start: now, or as the ramp's last slot ends.
    let mut rel_start = None;
    if !sh.slots[0].ramp {
        rel_start = window_start(c)?;
    }
    let waits = c.shows_waits();
    let last = sh.slots.len() - 1;
    let mut slot = 0;
    let mut acc = AasAcc::default();
    // Samples sit half a period off the grid, so a 1 s interval holds exactly 10.
    let mut next_sample = t0 + SAMPLE_EVERY / 2;
    loop {
        if sh.halt.load(Ordering::Relaxed) || sh.running.load(Ordering::SeqCst) == 0 {
            break;
        }
        let now = Instant::now();
        let boundary = (slot < last).then(|| t0 + sh.slots[slot].end);
        if let Some(b) = boundary.filter(|&b| now >= b) {
            let s = c.counters()?;
            let _ = tx.send(Msg::Load {
                slot,
                end: b,
                load: Box::new(s.since(&prev)),
                aas: std::mem::take(&mut acc).finish(),
            });
            prev = s;
            slot += 1;
            if sh.slots[slot - 1].ramp && !sh.slots[slot].ramp {
                rel_start = window_start(c)?;
            }
            continue;
        }
        if waits && now >= next_sample {
            acc.add(&c.waits()?);
            while next_sample <= Instant::now() {
                next_sample += SAMPLE_EVERY;
            }
            continue;
        }
        let wake = match (boundary, waits) {
            (Some(b), true) => b.min(next_sample),
            (Some(b), false) => b,
            (None, true) => next_sample,
            (None, false) => now + Duration::from_millis(20),
        };
        std::thread::sleep((wake - now).min(Duration::from_millis(20)));
    }
    wait_until(DRAIN_LIMIT, || sh.running.load(Ordering::SeqCst) == 0);
    let s = c.counters()?;
    let _ = tx.send(Msg::Load {
        slot,
        end: Instant::now(),
        load: Box::new(s.since(&prev)),
        aas: acc.finish(),
    });
    if let Some((at, start)) = rel_start {
        if let Some(end) = c.relations()? {
            let _ = tx.send(Msg::Relations(RelationWindow {
                start,
                end,
                secs: at.elapsed().as_secs_f64(),
            }));
        }
    }
    Ok(())
}

/// The relations' counters as the measured window starts, with the time they were read.
fn window_start(
    c: &mut impl Counters,
) -> Result<Option<(Instant, Vec<RelationCounters>)>, DbError> {
    let at = Instant::now();
    Ok(c.relations()?.map(|r| (at, r)))
}
