//! ORION's mixed matrix: small random I/Os at each small level run at the same time as
//! large I/Os at each large level, so a user sees how OLTP-like I/O fares while scans
//! stream (ORION `-run advanced -matrix detailed|row|col|point`).

use super::prober::Prober;
use iogauge_model::calib::{figures, CalibrateSpec, MatrixMode, Outcome, Step};

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

/// The cells `spec.matrix` asks for as (small, large), row by row (large level): every
/// combination of the levels (detailed), one row at `num_large`, one column at `num_small`,
/// or the one cell; never (0, 0), which does no I/O.
pub fn cells(spec: &CalibrateSpec, out: &Outcome) -> Vec<(u32, u32)> {
    let (small, large) = levels(spec, out);
    let fixed = |n: Option<u32>| vec![n.unwrap_or(0)];
    let (small, large) = match spec.matrix {
        MatrixMode::Basic => return Vec::new(),
        MatrixMode::Detailed => (small, large),
        MatrixMode::Row => (small, fixed(spec.num_large)),
        MatrixMode::Col => (fixed(spec.num_small), large),
        MatrixMode::Point => (fixed(spec.num_small), fixed(spec.num_large)),
    };
    large
        .iter()
        .flat_map(|&l| small.iter().map(move |&s| (s, l)))
        .filter(|&c| c != (0, 0))
        .collect()
}

/// Runs the cells of `spec.matrix` into `out.matrix`, merging their small I/Os' latencies
/// into `out.matrix_small`.
pub fn run<P: Prober>(p: &mut P, spec: &CalibrateSpec, out: &mut Outcome) -> Result<(), P::Error> {
    for (s, l) in cells(spec, out) {
        match p.measure_mixed(spec.small_bs, s, spec.large_bs, l)? {
            Some((c, hist)) => {
                out.matrix.push(c);
                out.matrix_small += &hist;
            }
            None => {
                out.interrupted = true;
                return Ok(());
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
