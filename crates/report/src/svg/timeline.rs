//! Where a run's intervals sit on its time axis: where it ends, and the ramp-up and
//! steady-state spans the time charts shade.

use iogauge_campaign::RunDigest;

/// Seconds from the start to the end of the last interval (0 when there is none).
pub(crate) fn run_end(run: &RunDigest) -> f64 {
    run.series
        .iter()
        .map(|p| p.t_s + p.dur_s.max(0.0))
        .chain(run.aas.iter().map(|a| a.t_s))
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max)
}

/// The ramp-up intervals (merged when adjacent) and the steady-state window, as
/// (start, end, class) spans clamped to `0..end`.
pub(crate) fn spans(run: &RunDigest, end: f64) -> Vec<(f64, f64, &'static str)> {
    let mut v: Vec<(f64, f64, &'static str)> = Vec::new();
    for p in run.series.iter().filter(|p| p.ramp) {
        let (a, b) = (p.t_s, p.t_s + p.dur_s.max(0.0));
        match v.last_mut() {
            Some(last) if (last.1 - a).abs() < 1e-6 => last.1 = b,
            _ => v.push((a, b, "ramp")),
        }
    }
    if let Some(from) = run.steady_from_s {
        v.push((from, run.steady_left_s.unwrap_or(end), "steady"));
    }
    v.retain_mut(|s| {
        s.0 = s.0.clamp(0.0, end);
        s.1 = s.1.clamp(0.0, end);
        s.0.is_finite() && s.1.is_finite() && s.1 > s.0
    });
    v
}
