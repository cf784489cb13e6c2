//! A finished job as the results model records it: the run's document (summary, interval
//! series with device figures, workload against hardware, the I/O path, steady state) and
//! its latency histograms (the whole window's per direction, and every interval's, so
//! `show --interval` can merge them exactly later).

use crate::job::JobOutcome;
use crate::target::Target;
use iogauge_model::regrid::interval_histograms;
use iogauge_model::run::{LogSummary, ReplayReport, RunReport, SteadyWaitReport};
use iogauge_model::spec::{JobSpec, Pace};
use iogauge_model::system::Snapshot;
use iogauge_model::target::TargetInfo;
use iogauge_model::Histograms;
use iogauge_stats::{measured_totals, HistError};

/// The system beside a job, as the session sampled it: /proc snapshots on the job's grid
/// (`at_ns` from its t0), why sampling stopped early if it did, and the whole disks under the
/// targets (what to sum for "the hardware").
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    pub samples: Vec<Snapshot>,
    pub error: Option<String>,
    pub disks: Vec<String>,
}

/// The document and histograms of `outcome`, a job of `spec` on `targets`, with the system
/// sampled beside it.
pub fn run_document(
    spec: JobSpec,
    targets: &[Target],
    outcome: JobOutcome,
    recorded: Recorded,
) -> Result<(RunReport, Histograms), HistError> {
    let infos = targets.iter().map(|t| t.info.clone()).collect();
    document_of(spec, infos, outcome, recorded)
}

/// As [`run_document`], from the targets' descriptions (a job over MPI ranks: the ranks'
/// targets, the merged series).
pub fn document_of(
    spec: JobSpec,
    infos: Vec<TargetInfo>,
    outcome: JobOutcome,
    recorded: Recorded,
) -> Result<(RunReport, Histograms), HistError> {
    let mut r = RunReport::from_series(
        spec,
        infos,
        outcome.started,
        &outcome.intervals,
        outcome.interrupted,
    )
    .with_samples(&outcome.intervals, recorded.samples, &recorded.disks);
    r.warnings.extend(outcome.io_path.warnings());
    r.options.io_path = Some(outcome.io_path);
    r.warnings.extend(recorded.error);
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
    if let Some(l) = &outcome.log {
        let (target, n) = (l.target.clone(), l.writes);
        r.log = Some(LogSummary::of(
            l.bs, target, n, l.elapsed, &l.write, &l.sync,
        ));
        histograms.push(("log_write".to_string(), l.write.encode()?));
        histograms.push(("log_sync".to_string(), l.sync.encode()?));
    }
    if let Some(rp) = &outcome.replay {
        let timed = matches!(
            r.options.replay.as_ref().map(|p| p.pace),
            Some(Pace::Timed { .. })
        );
        let late_ms = crate::replay::LATE.as_secs_f64() * 1e3;
        r.replay = Some(ReplayReport::of(
            rp.issued,
            timed.then_some((rp.late, late_ms, &rp.lateness)),
        ));
        if timed {
            histograms.push(("replay_lateness".to_string(), rp.lateness.encode()?));
        }
    }
    histograms.extend(interval_histograms(&outcome.intervals)?);
    Ok((r, histograms))
}
