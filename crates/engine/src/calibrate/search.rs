//! The searches over outstanding I/Os (step 1's knee, step 2's throughput ceiling) and the
//! guard that keeps one noisy point from steering them: a point that goes against the
//! curve — more outstanding I/Os, yet IOPS (or MB/s) more than [`NOISE`] below a point with
//! fewer — is measured once more before anything is decided from it. The first measurement
//! stays in the record, marked superseded.
//!
//! Why: on a device whose throughput swings (a cloud volume, a VM's virtio disk) one point
//! of 11k IOPS between 22k at 1 outstanding and 71k at 16 once ended a calibration with
//! "the storage saturates near 1 outstanding". More outstanding I/Os never give a healthy
//! device fewer IOPS for long; when the second measurement falls too, the fall is real and
//! the verdicts say so.

use super::prober::Prober;
use iogauge_model::calib::{Criterion, Measured, Outcome, Point, Step};

/// How far a point may fall below an earlier, shallower point of its curve and still count
/// as the same level: successive 2-second points on this kind of device differ by up to
/// this much when nothing changed.
pub const NOISE: f64 = 0.10;

/// The rate a step's curve is judged by: IOPS for small I/O, MB/s for large.
fn rate(p: &Point) -> f64 {
    match p.step {
        Step::Small => p.iops,
        Step::Large | Step::Single => p.mbps,
    }
}

/// Measures `n` outstanding I/Os of `step`; if the point falls more than NOISE below the
/// best point of the step with fewer outstanding I/Os, measures it once more. Returns the
/// index of the point that counts in `out.measured`, or `None` when interrupted.
fn measure_checked<P: Prober>(
    p: &mut P,
    step: Step,
    bs: u64,
    n: u32,
    out: &mut Outcome,
) -> Result<Option<usize>, P::Error> {
    let Some(first) = p.measure(step, bs, n)? else {
        return Ok(None);
    };
    let floor = out
        .points(step)
        .filter(|q| q.outstanding < n)
        .map(rate)
        .max_by(f64::total_cmp);
    let against = floor.is_some_and(|f| rate(&first.point) < f * (1.0 - NOISE));
    out.measured.push(first);
    if !against {
        return Ok(Some(out.measured.len() - 1));
    }
    let Some(again) = p.measure(step, bs, n)? else {
        return Ok(None);
    };
    let i = out.measured.len() - 1;
    out.measured[i].point.superseded = true;
    out.measured.push(again);
    Ok(Some(out.measured.len() - 1))
}

/// Step 1's search: double the outstanding I/Os from 1 until the criterion exceeds the cap
/// (or `max` is reached), then bisect between the last passing and the first failing count
/// until they are within 1/8 of each other. Every point is kept.
pub fn knee_search<P: Prober>(
    p: &mut P,
    step: Step,
    bs: u64,
    cap_us: f64,
    crit: Criterion,
    max: u32,
    out: &mut Outcome,
) -> Result<(), P::Error> {
    let ok = |m: &Measured| crit.of(&m.point.lat_us) <= cap_us;
    let mut n = 1u32;
    let mut pass: Option<u32> = None;
    let mut fail: Option<u32> = None;
    loop {
        let Some(i) = measure_checked(p, step, bs, n, out)? else {
            out.interrupted = true;
            return Ok(());
        };
        if !ok(&out.measured[i]) {
            fail = Some(n);
            break;
        }
        pass = Some(n);
        if n >= max {
            break;
        }
        n = (n * 2).min(max);
    }
    if let (Some(mut lo), Some(mut hi)) = (pass, fail) {
        while hi - lo > 1 && hi - lo > lo / 8 {
            let mid = lo + (hi - lo) / 2;
            let Some(i) = measure_checked(p, step, bs, mid, out)? else {
                out.interrupted = true;
                return Ok(());
            };
            if ok(&out.measured[i]) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    Ok(())
}

/// Step 2's search: double the outstanding large I/Os until MB/s gains less than 5% over
/// the previous point, or `max` is reached. No latency cap: like CALIBRATE_IO's max_mbps and
/// ORION's large-I/O curve, this is the throughput ceiling.
pub fn throughput_search<P: Prober>(
    p: &mut P,
    bs: u64,
    max: u32,
    out: &mut Outcome,
) -> Result<(), P::Error> {
    let mut n = 1u32;
    let mut prev: Option<f64> = None;
    loop {
        let Some(i) = measure_checked(p, Step::Large, bs, n, out)? else {
            out.interrupted = true;
            return Ok(());
        };
        let mbps = out.measured[i].point.mbps;
        if prev.is_some_and(|pv| mbps < pv * 1.05) || n >= max {
            return Ok(());
        }
        prev = Some(mbps);
        n = (n * 2).min(max);
    }
}
