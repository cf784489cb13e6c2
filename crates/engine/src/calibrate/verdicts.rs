//! Verdicts in words: what a calibration's curve says about itself, so a number is never
//! read without its caveats (a cache answering, a cap never met, a saturated device).

use super::{CalibrateSpec, Criterion, Outcome, Point, Step};

fn ms(us: f64) -> String {
    format!("{:.2} ms", us / 1e3)
}

/// Sentences about an outcome. `rotational`: whether the storage under test spins (from
/// preflight), used to judge whether latencies are plausible.
pub fn verdicts(out: &Outcome, spec: &CalibrateSpec, rotational: Option<bool>) -> Vec<String> {
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
    if qd1.outstanding == 1 {
        if qd1.lat_us.mean < 5.0 {
            v.push(format!(
                "latency at 1 outstanding I/O is {:.1} µs, below what any storage device can do: \
                 memory (the page cache?) is answering",
                qd1.lat_us.mean
            ));
        } else if rotational == Some(true) && qd1.lat_us.mean < 1000.0 {
            v.push(format!(
                "latency at 1 outstanding I/O is {:.0} µs on a rotating disk, faster than a seek: \
                 a cache (array or controller) is answering, not the platters",
                qd1.lat_us.mean
            ));
        }
    }
    if let Some(w) = small.windows(2).find(|w| {
        w[1].iops < w[0].iops * 1.05 && crit.of(&w[1].lat_us) > crit.of(&w[0].lat_us) * 1.5
    }) {
        v.push(format!(
            "IOPS stayed flat from {} to {} outstanding I/Os ({:+.0}%) while {cname} latency grew {:+.0}%: \
             the storage saturates near {} outstanding",
            w[0].outstanding,
            w[1].outstanding,
            (w[1].iops / w[0].iops - 1.0) * 100.0,
            (crit.of(&w[1].lat_us) / crit.of(&w[0].lat_us) - 1.0) * 100.0,
            w[0].outstanding
        ));
    }
    if out.interrupted {
        v.push("interrupted: the figures cover only the points that finished".into());
    }
    v
}
