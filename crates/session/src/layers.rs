//! The per-layer tracer of a session (`iogauge_trace`): started once, for the whole disks the
//! session's sampler samples, read with every snapshot on the interval grid
//! (`Snapshot::layers`, `Snapshot::ring`), each reading keeping only the histogram buckets
//! added since the one before (`iogauge_model::layers::StageHist`). When it cannot start, the result carries one warning saying why and
//! the run goes on without the split; `--no-trace` leaves it off.

use iogauge_model::layers::{LayerCounters, Origin, RingCounters};
use iogauge_trace::{Attribution, Disk, FileKey, JobCgroup, Tracer};
use std::path::Path;
use std::sync::{Mutex, PoisonError};

/// The job's own cgroup (`iogauge_trace::JobCgroup`), or why it has none; entered once.
static JOB: Mutex<Option<Result<JobCgroup, String>>> = Mutex::new(None);

/// Moves this process into a cgroup of its own, once, so that the tracer can tell the job's
/// block requests from other processes' (everything started afterwards, a private database
/// server included, is born in it). Called before a measured job starts anything, with the
/// block devices it will use (their cgroup v1 limits keep it where it is); a process that
/// cannot have one is traced without attribution.
pub fn enter_job(devices: &[String]) {
    let mut job = JOB.lock().unwrap_or_else(PoisonError::into_inner);
    if job.is_none() {
        *job = Some(JobCgroup::enter(devices, mpi_job().as_deref()));
    }
}

/// The name of the MPI job this process is a rank of (its ranks on one host share a cgroup:
/// they are one job, not each other's neighbours): PMIx's namespace, Open MPI's job id or
/// Slurm's job and step; `None` outside one.
fn mpi_job() -> Option<String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    var("PMIX_NAMESPACE")
        .or_else(|| var("OMPI_MCA_ess_base_jobid"))
        .or_else(|| {
            var("SLURM_JOB_ID").map(|j| format!("{j}.{}", var("SLURM_STEP_ID").unwrap_or_default()))
        })
}

/// The job's cgroups (kernfs ids) once it entered one; empty when it has none.
pub fn job_cgroups() -> Vec<u64> {
    match &*JOB.lock().unwrap_or_else(PoisonError::into_inner) {
        Some(Ok(j)) => j.attribution().cgroups.clone(),
        _ => Vec::new(),
    }
}

/// Leaves and removes the job's cgroup (at the end of the command).
pub fn leave_job() {
    JOB.lock().unwrap_or_else(PoisonError::into_inner).take();
}

/// What the tracer attributes requests by, or why it cannot.
fn attribution(devices: &[String]) -> Result<Attribution, String> {
    enter_job(devices);
    match &*JOB.lock().unwrap_or_else(PoisonError::into_inner) {
        Some(Ok(j)) => Ok(j.attribution().clone()),
        Some(Err(e)) => Err(e.clone()),
        None => Err("the job's cgroup was left".into()),
    }
}

/// The tracer of one session, or why there is none.
#[derive(Default)]
pub struct Layers {
    tracer: Option<Tracer>,
    warning: Option<String>,
    /// Why the job's requests are not told from other processes' (the tracer ran without
    /// attribution).
    unattributed: Option<String>,
    /// The tracer's previous reading, whole: what the next one's buckets are counted from.
    before: Mutex<Reading>,
}

/// What one reading of the tracer gives: the disks' counters, this process's io_uring's and
/// other processes' bios since the reading before.
pub type Reading = (Vec<LayerCounters>, Option<RingCounters>, Vec<Origin>);

impl Layers {
    /// No tracing (`--no-trace`, or nothing on a block device).
    pub fn off() -> Layers {
        Layers::default()
    }

    /// The tracer on the whole disks among `devices` (kernel names as the sampler keeps
    /// them: partitions are left out, their disk is traced), when `on`; the page-cache
    /// writeback of `files` (the job's targets) counts as the job's.
    pub fn start(on: bool, devices: &[String], files: &[FileKey]) -> Layers {
        let disks: Vec<&String> = devices
            .iter()
            .filter(|d| Path::new("/sys/block").join(d.as_str()).exists())
            .collect();
        if !on || disks.is_empty() {
            return Layers::off();
        }
        let attribution = attribution(devices).map(|mut a| {
            a.files = files.to_vec();
            a
        });
        let started = disks
            .iter()
            .map(|d| Disk::named(d))
            .collect::<Result<Vec<_>, _>>()
            .and_then(|d| Tracer::start(&d, attribution.as_ref().ok()));
        match started {
            Ok(t) => Layers {
                tracer: Some(t),
                unattributed: attribution.err(),
                ..Layers::default()
            },
            Err(e) => Layers {
                warning: Some(format!("per-layer latency unavailable: {e}")),
                ..Layers::default()
            },
        }
    }

    /// The disks' counters and this process's io_uring I/Os (`Tracer::reading`) now, as a
    /// snapshot keeps them: cumulative, with the buckets added since the previous reading
    /// only. Nothing without a tracer.
    pub fn read(&self) -> Reading {
        let Some(t) = &self.tracer else {
            return Reading::default();
        };
        let r = t.reading();
        let mut before = self.before.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh = (
            LayerCounters::fresh_all(&r.layers, &before.0),
            r.ring.as_ref().map(|x| x.fresh_since(before.1.as_ref())),
            r.others,
        );
        *before = (r.layers, r.ring, Vec::new());
        fresh
    }

    /// The line the result's warnings carry when the tracer could not start, or ran without
    /// telling the job's requests from others'.
    pub fn warning(&self) -> Option<String> {
        self.warning.clone().or_else(|| {
            self.unattributed.as_ref().map(|e| {
                format!("the job's block requests are not told from other processes' ({e}): the split and the findings count every request on the devices")
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_or_nothing_to_trace_reads_nothing_and_warns_nothing() {
        for l in [
            Layers::off(),
            Layers::start(false, &["vda".into()], &[]),
            Layers::start(true, &["no-such-disk".into()], &[]),
        ] {
            assert!(l.read() == Reading::default() && l.warning().is_none());
        }
    }
}
