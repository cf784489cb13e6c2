//! What the calibration search measures through: one point of a curve, or one cell of
//! ORION's matrix. The engine's prober runs real jobs; the tests' a device model.

use iogauge_model::calib::{Cell, Measured, Step};
use iogauge_stats::LatHist;

/// Runs one point. `Ok(None)`: interrupted before the point's window was complete.
pub trait Prober {
    type Error;
    fn measure(
        &mut self,
        step: Step,
        bs: u64,
        outstanding: u32,
    ) -> Result<Option<Measured>, Self::Error>;
    /// Small and large I/Os at the same time (one cell of ORION's matrix), with the small
    /// I/Os' latency histogram (empty without small I/Os).
    fn measure_mixed(
        &mut self,
        small_bs: u64,
        small: u32,
        large_bs: u64,
        large: u32,
    ) -> Result<Option<(Cell, LatHist)>, Self::Error>;
}
