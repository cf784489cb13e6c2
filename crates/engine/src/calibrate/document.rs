//! A finished calibration as the results model records it: the figures, every point with its
//! interval series, the verdicts judged on the whole curve, the memory the points ran on,
//! each point's latency histogram and each step's (its points merged).

use super::caveats::caveats;
use iogauge_model::calib::{point_label, CalibrateSpec, CalibrationReport, Outcome, Step};
use iogauge_model::preflight::Preflight;
use iogauge_model::regrid::interval_histograms;
use iogauge_model::target::TargetInfo;
use iogauge_model::Histograms;
use iogauge_stats::{HistError, LatHist};

/// The label of the matrix cells' small I/Os' merged histogram.
pub const MATRIX_SMALL: &str = "matrix small";

/// What a calibration was run on, besides its outcome.
pub struct Context {
    pub spec: CalibrateSpec,
    pub preflight: Preflight,
    pub targets: Vec<TargetInfo>,
    /// Whether io_uring works here ("supported …", or why not).
    pub io_uring: String,
    pub started_at: String,
}

/// The document before any point ran: the head a user sees while it measures.
pub fn head(ctx: &Context) -> CalibrationReport {
    report(ctx, &Outcome::default())
}

/// The document and histograms of a finished (or interrupted) calibration.
pub fn calibration_document(
    ctx: Context,
    outcome: &Outcome,
) -> Result<(CalibrationReport, Histograms), HistError> {
    let rotational = ctx
        .preflight
        .targets
        .iter()
        .filter_map(|t| t.rotational)
        .reduce(|a, b| a || b);
    let mut r = report(&ctx, outcome);
    r.warnings.extend(caveats(outcome, &ctx.spec, rotational));
    record_io_path(&mut r, outcome);
    if let Some(l) = &ctx.spec.setup.layout {
        for d in &l.degraded {
            // CALIBRATE_IO once "measured" one disk of a silently degraded mirror: say it.
            r.warnings.push(format!(
                "DEGRADED: {d} is treated as failed under --layout {}: reads go to its partners and its writes are dropped, so this calibrates a degraded array",
                l.spec
            ));
        }
    }
    // Each point's histogram, then its intervals' (`show ID --interval` merges them).
    let mut histograms = Vec::new();
    for (i, m) in outcome.measured.iter().enumerate() {
        let label = point_label(i, &m.point);
        for (l, h) in interval_histograms(&m.intervals)? {
            histograms.push((format!("{label}/{l}"), h));
        }
        histograms.push((label, m.hist.encode()?));
    }
    histograms.extend(step_histograms(outcome)?);
    Ok((r, histograms))
}

/// Each step's latency histogram, labelled by the step's name (`small`, `large`, `single`),
/// merged exactly from the points that count (a superseded first measurement is left out,
/// as the figures leave it out), and `matrix small` from every matrix cell's small I/Os; a
/// step without points has none. Labels without `/` or `:` are whole-run ones: campaigns
/// draw latency curves from them.
fn step_histograms(outcome: &Outcome) -> Result<Histograms, HistError> {
    let mut out = Vec::new();
    for step in [Step::Small, Step::Large, Step::Single] {
        let mut points = outcome
            .measured
            .iter()
            .filter(|m| m.point.step == step && !m.point.superseded)
            .peekable();
        if points.peek().is_none() {
            continue;
        }
        let mut h = LatHist::new();
        for m in points {
            h += &m.hist;
        }
        out.push((step.name().to_string(), h.encode()?));
    }
    if !outcome.matrix.is_empty() {
        out.push((MATRIX_SMALL.to_string(), outcome.matrix_small.encode()?));
    }
    Ok(out)
}

fn report(ctx: &Context, outcome: &Outcome) -> CalibrationReport {
    let mut r = CalibrationReport::new(
        ctx.spec.clone(),
        ctx.preflight.clone(),
        ctx.targets.clone(),
        outcome,
        ctx.started_at.clone(),
    );
    r.io_uring = ctx.io_uring.clone();
    r
}

/// The points' memory and I/O path: the first point's in `options.io_path`, its warnings,
/// and a warning for any point whose buffers were on other memory (results not comparable).
fn record_io_path(report: &mut CalibrationReport, outcome: &Outcome) {
    let mut paths = outcome.measured.iter().filter_map(|m| m.io_path.as_ref());
    let Some(first) = paths.next() else {
        return;
    };
    report.warnings.extend(first.warnings());
    for p in paths {
        if p.memory.mem != first.memory.mem || p.fixed_bufs != first.fixed_bufs {
            report.warnings.push(format!(
                "not every point ran on the same memory: one ran on {}; compare its figures with care",
                p.line()
            ));
            break;
        }
    }
    report.options.io_path = Some(first.clone());
}
