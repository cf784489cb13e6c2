//! ORION's mixed matrix: small random reads at each small level run at the same time as
//! large random reads at each large level, so a user sees how OLTP-like I/O fares while
//! scans stream (ORION `-run advanced -matrix detailed`).

use super::prober::Prober;
use iogauge_model::calib::{figures, CalibrateSpec, Outcome, Step};

fn doubling(top: u32) -> Vec<u32> {
    let mut v = vec![0];
    let mut n = 1;
    while n <= top {
        v.push(n);
        n *= 2;
    }
    if *v.last().expect("non-empty") < top {
        v.push(top);
    }
    v
}

/// The matrix levels from the curves already run: small 0, 1, 2, 4 … up to the depth of
/// max_iops (or the deepest small point when the cap was never met); large 0, 1, 2 … up to
/// the best large depth, at least 2.
pub fn levels(spec: &CalibrateSpec, out: &Outcome) -> (Vec<u32>, Vec<u32>) {
    let f = figures(out, spec.criterion, spec.max_latency_us);
    let small_top = f
        .outstanding
        .or_else(|| out.points(Step::Small).map(|p| p.outstanding).max())
        .unwrap_or(1);
    let large_top = out
        .points(Step::Large)
        .reduce(|a, b| if b.mbps > a.mbps { b } else { a })
        .map_or(2, |p| p.outstanding.max(2));
    (doubling(small_top), doubling(large_top))
}

/// Runs every cell but (0, 0), row by row (large level), into `out.matrix`.
pub fn run<P: Prober>(p: &mut P, spec: &CalibrateSpec, out: &mut Outcome) -> Result<(), P::Error> {
    let (small, large) = levels(spec, out);
    for &l in &large {
        for &s in &small {
            if s == 0 && l == 0 {
                continue;
            }
            match p.measure_mixed(spec.small_bs, s, spec.large_bs, l)? {
                Some(c) => out.matrix.push(c),
                None => {
                    out.interrupted = true;
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::doubling;

    #[test]
    fn levels_double_and_end_at_the_top() {
        assert_eq!(doubling(1), [0, 1]);
        assert_eq!(doubling(16), [0, 1, 2, 4, 8, 16]);
        assert_eq!(doubling(20), [0, 1, 2, 4, 8, 16, 20]);
    }
}
