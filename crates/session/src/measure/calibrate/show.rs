//! What a calibration shows as it goes.

use iogauge_model::calib::{CalibrationReport, Point};

/// What the calibration shows while it measures, on the process that prints: its head (the
/// preflight, before the first point) and each point.
pub struct Show<'a> {
    pub head: &'a mut dyn FnMut(&CalibrationReport) -> anyhow::Result<()>,
    pub point: &'a mut dyn FnMut(&Point),
}
