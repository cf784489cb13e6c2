//! The database sampler: on its own connection, reads the cumulative load counters at t0 and
//! at every interval boundary, and `pg_stat_activity` every 100 ms in between. The last
//! snapshot waits for the sessions to finish (they flush their statistics first), so the
//! totals include everything they did. The counters per relation are read only twice, as
//! the measured window starts (after the ramp) and after the last snapshot.

use crate::common::child::wait_until;
use crate::common::workload::shared::{Msg, Shared};
use crate::error::DbError;
use crate::postgres::dsn::connect;
use crate::postgres::sample::aas::{sample, AasAcc, SAMPLE_EVERY, SAMPLE_SQL};
use crate::postgres::sample::profile::{snapshot, snapshot_sql};
use crate::postgres::sample::relations::{snapshot_relations, RELATIONS_SQL};
use crate::postgres::workload::worker::{connect_failed, run_error};
use iogauge_model::db::relations::{RelationCounters, RelationWindow};
use postgres::Config;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// How long the final snapshot waits for sessions to leave after the end or a stop.
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

/// The sampler's run (see `drive::Sessions::sampler`).
pub(crate) fn sampler(
    sh: &Shared,
    cfg: &Config,
    version_num: i32,
    tx: &Sender<Msg>,
    started: &mut bool,
) -> Result<(), DbError> {
    let mut c = connect(cfg).map_err(|e| connect_failed("load-profile sampler", e))?;
    let err = |e: postgres::Error| run_error(cfg, "load-profile sampler", &e);
    let sql = snapshot_sql(version_num)
        .ok_or_else(|| DbError::Usage("PostgreSQL 14 or newer is needed (pg_stat_wal)".into()))?;
    let snap = c.prepare(&sql).map_err(err)?;
    let act = c.prepare(SAMPLE_SQL).map_err(err)?;
    let rel = c.prepare(RELATIONS_SQL).map_err(err)?;
    let Some(t0) = sh.gate.arrive() else {
        return Ok(());
    };
    *started = true;
    let snap_sql = |c: &mut postgres::Client| snapshot(c, &snap);
    let mut prev = snap_sql(&mut c).map_err(err)?;
    // The relations at the measured window's start: now, or as the ramp's last slot ends.
    let mut rel_start: Option<(Instant, Vec<RelationCounters>)> = None;
    if !sh.slots[0].ramp {
        rel_start = Some((
            Instant::now(),
            snapshot_relations(&mut c, &rel).map_err(err)?,
        ));
    }
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
            let s = snap_sql(&mut c).map_err(err)?;
            let _ = tx.send(Msg::Load {
                slot,
                end: b,
                load: Box::new(s.since(&prev)),
                aas: std::mem::take(&mut acc).finish(),
            });
            prev = s;
            slot += 1;
            if sh.slots[slot - 1].ramp && !sh.slots[slot].ramp {
                rel_start = Some((
                    Instant::now(),
                    snapshot_relations(&mut c, &rel).map_err(err)?,
                ));
            }
            continue;
        }
        if now >= next_sample {
            acc.add(&sample(&mut c, &act).map_err(err)?);
            while next_sample <= Instant::now() {
                next_sample += SAMPLE_EVERY;
            }
            continue;
        }
        let wake = boundary.map_or(next_sample, |b| b.min(next_sample));
        std::thread::sleep((wake - now).min(Duration::from_millis(20)));
    }
    wait_until(DRAIN_LIMIT, || sh.running.load(Ordering::SeqCst) == 0);
    let s = snap_sql(&mut c).map_err(err)?;
    let _ = tx.send(Msg::Load {
        slot,
        end: Instant::now(),
        load: Box::new(s.since(&prev)),
        aas: acc.finish(),
    });
    if let Some((at, start)) = rel_start {
        let end = snapshot_relations(&mut c, &rel).map_err(err)?;
        let _ = tx.send(Msg::Relations(RelationWindow {
            start,
            end,
            secs: at.elapsed().as_secs_f64(),
        }));
    }
    Ok(())
}
