//! A calibration's caveats in words: what its curve says about its own figures, so a number
//! is never read without them (a cap never met, too few points under it, a ramp that ended
//! below the cap, a cache answering a rotating disk, points measured again, an interruption).
//! They are the result's warnings. What limits the storage (where the curve saturates,
//! memory answering every point) is the diagnosis's findings (`iogauge_diagnose`), no longer
//! said here.

use super::search::NOISE;
use iogauge_model::calib::{CalibrateSpec, Criterion, Outcome, Point, Step};

fn ms(us: f64) -> String {
    format!("{:.2} ms", us / 1e3)
}

/// Sentences about an outcome. `rotational`: whether the storage under test spins (from
/// preflight), used to judge whether latencies are plausible.
pub fn caveats(out: &Outcome, spec: &CalibrateSpec, rotational: Option<bool>) -> Vec<String> {
    let crit = spec.criterion;
    let cap = spec.max_latency_us;
    let cname = match crit {
        Criterion::Mean => "mean",
        Criterion::P95 => "p95",
        Criterion::P99 => "p99",
    };
    let mut small: Vec<&Point> = out.points(Step::Small).collect();
    small.sort_by_key(|p| p.outstanding);
    let mut v = Vec::new();
    if small.is_empty() {
        return v;
    }
    let met: Vec<&&Point> = small.iter().filter(|p| crit.of(&p.lat_us) <= cap).collect();
    if met.is_empty() {
        let best = small
            .iter()
            .max_by(|a, b| a.iops.total_cmp(&b.iops))
            .expect("non-empty");
        v.push(format!(
            "the {cname} latency cap of {} was never met: 1 outstanding I/O already took {}; \
             best point: {} outstanding, {:.0} IOPS at {} — max_iops is not defined under this cap",
            ms(cap),
            ms(crit.of(&small[0].lat_us)),
            best.outstanding,
            best.iops,
            ms(crit.of(&best.lat_us))
        ));
    } else if met.len() < 3 && !out.interrupted {
        v.push(format!(
            "only {} point{} met the cap of {}: too few to trust the shape below the knee; \
             check the device or raise --max-latency",
            met.len(),
            if met.len() == 1 { "" } else { "s" },
            ms(cap)
        ));
    }
    if !out.interrupted
        && met.len() == small.len()
        && small
            .last()
            .is_some_and(|p| p.outstanding >= spec.max_outstanding)
    {
        v.push(format!(
            "the cap of {} was not reached at {} outstanding I/Os (the ramp's ceiling): max_iops is a \
             lower bound; raise --disks to search further",
            ms(cap),
            spec.max_outstanding
        ));
    }
    let qd1 = small[0];
    // Below 5 µs memory answers: the `cache` finding says it.
    if qd1.outstanding == 1 && rotational == Some(true) && (5.0..1000.0).contains(&qd1.lat_us.mean)
    {
        v.push(format!(
            "latency at 1 outstanding I/O is {:.0} µs on a rotating disk, faster than a seek: \
             a cache (array or controller) is answering, not the platters",
            qd1.lat_us.mean
        ));
    }
    v.extend(remeasured(out));
    if out.interrupted {
        v.push("interrupted: the figures cover only the points that finished".into());
    }
    v
}

/// One sentence per point that went against its curve and was measured again.
fn remeasured(out: &Outcome) -> Vec<String> {
    let all: Vec<&Point> = out.measured.iter().map(|m| &m.point).collect();
    let mut v = Vec::new();
    for (i, first) in all.iter().enumerate().filter(|(_, p)| p.superseded) {
        let Some(again) = all[i + 1..]
            .iter()
            .find(|q| q.step == first.step && q.outstanding == first.outstanding)
        else {
            continue;
        };
        let (unit, a, b) = match first.step {
            Step::Small => ("IOPS", first.iops, again.iops),
            Step::Large | Step::Single => ("MiB/s", first.mbps, again.mbps),
        };
        let confirmed = b < a * (1.0 + NOISE);
        v.push(format!(
            "{} outstanding ({} I/O) fell below the curve ({a:.0} {unit}) and was measured again: {b:.0} {unit}{}",
            first.outstanding,
            first.step.name(),
            if confirmed {
                ": the fall is real (the device gives less under this many outstanding I/Os, or it was throttled)"
            } else {
                ": the first was noise"
            }
        ));
    }
    v
}
