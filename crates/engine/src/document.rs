//! A finished job as the results model records it: the run's document (summary, interval
//! series with device figures, workload against hardware, the I/O path, steady state) and
//! its latency histograms (the whole window's per direction, and every interval's, so
//! `show --interval` can merge them exactly later).

use crate::job::{disks_of, JobOutcome};
use crate::target::Target;
use iogauge_model::regrid::interval_histograms;
use iogauge_model::run::{RunReport, SteadyWaitReport};
use iogauge_model::spec::JobSpec;
use iogauge_model::target::TargetInfo;
use iogauge_model::Histograms;
use iogauge_stats::{measured_totals, HistError};

/// The document and histograms of `outcome`, a job of `spec` on `targets`.
pub fn run_document(
    spec: JobSpec,
    targets: &[Target],
    outcome: JobOutcome,
) -> Result<(RunReport, Histograms), HistError> {
    let infos = targets.iter().map(|t| t.info.clone()).collect();
    document_of(spec, infos, &disks_of(targets), outcome)
}

/// As [`run_document`], from the targets' descriptions and the disks under them (a job over
/// MPI ranks: the ranks' targets, the merged series).
pub fn document_of(
    spec: JobSpec,
    infos: Vec<TargetInfo>,
    disks: &[String],
    outcome: JobOutcome,
) -> Result<(RunReport, Histograms), HistError> {
    let mut r = RunReport::from_series(
        spec,
        infos,
        outcome.started,
        &outcome.intervals,
        outcome.interrupted,
    )
    .with_samples(&outcome.intervals, outcome.samples, disks);
    r.warnings.extend(outcome.io_path.warnings());
    r.options.io_path = Some(outcome.io_path);
    r.warnings.extend(outcome.sample_error);
    if let Some(w) = &outcome.steady_wait {
        let wait = SteadyWaitReport::of(w, r.options.interval);
        if !wait.reached && !outcome.interrupted {
            r.warnings.push(format!(
                "steady state was not reached within --steady-timeout {:.0} s; the measured window started anyway",
                wait.measured_from_s
            ));
        }
        r.steady_wait = Some(wait);
    }
    if outcome.interrupted {
        r.warnings
            .push("interrupted: the summary covers only the part that ran".into());
    }
    let (total, _) = measured_totals(&outcome.intervals);
    let mut histograms = vec![
        ("read".to_string(), total.read.lat.encode()?),
        ("write".to_string(), total.write.lat.encode()?),
    ];
    histograms.extend(interval_histograms(&outcome.intervals)?);
    Ok((r, histograms))
}
