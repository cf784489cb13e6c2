//! Calibration (CALIBRATE_IO and ORION in one): search the number of outstanding I/Os for the
//! highest IOPS whose latency stays under a cap, the highest MB/s of large I/Os, and the MB/s
//! of one process.
//!
//! The search is written against [`Prober`], so it is tested on a deterministic device model;
//! [`EngineProber`] is the real one, running the engine on prepared targets.

use iogauge_model::calib::{CalibrateSpec, MatrixMode, Outcome, Step};

mod caveats;
mod document;
mod engine;
mod matrix;
mod prober;
mod search;
pub use caveats::caveats;
pub use document::{calibration_document, head, Context, MATRIX_SMALL};
pub use engine::{
    cell_of, check_planned, point_of, tested_bytes, workers_for, EngineProber, Sampling,
    TellingJob, Unsampled,
};
pub use matrix::{cells, levels};
pub use prober::Prober;
pub use search::{knee_search, throughput_search, NOISE};

#[cfg(test)]
mod tests;

/// Runs the three steps, then the matrix cells `spec.matrix` asks for.
pub fn calibrate<P: Prober>(p: &mut P, spec: &CalibrateSpec) -> Result<Outcome, P::Error> {
    let mut out = Outcome::default();
    let (cap, crit, max) = (spec.max_latency_us, spec.criterion, spec.max_outstanding);
    knee_search(p, Step::Small, spec.small_bs, cap, crit, max, &mut out)?;
    if !out.interrupted {
        throughput_search(p, spec.large_bs, (max / 4).max(16), &mut out)?;
    }
    if !out.interrupted {
        // One process at the (shallowest) depth where the array gave its best large-I/O MB/s.
        let best = out
            .points(Step::Large)
            .reduce(|a, b| if b.mbps > a.mbps { b } else { a })
            .map_or(1, |p| p.outstanding);
        match p.measure(Step::Single, spec.large_bs, best)? {
            Some(m) => out.measured.push(m),
            None => out.interrupted = true,
        }
    }
    if spec.matrix != MatrixMode::Basic && !out.interrupted {
        matrix::run(p, spec, &mut out)?;
    }
    Ok(out)
}
