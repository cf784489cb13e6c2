//! A producer run with the one device sampler beside it: the sampler waits for the producer's
//! start signal (its t0, e.g. the database sessions' barrier release), then samples on the
//! producer's grid until the producer returns.

use crate::layers::Layers;
use iogauge_engine::calibrate::{Sampling, TellingJob};
use iogauge_engine::document::Recorded;
use iogauge_engine::{EngineError, JobOutcome, Target};
use iogauge_model::spec::JobSpec;
use iogauge_model::system::Snapshot;
use iogauge_probe::{sample_grid_with, Devices, Sampler};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Runs `produce` (on this thread), handing it the function to call at its t0, with `sampler` taking /proc
/// snapshots at t0, at each of `boundaries` (offsets from t0) and at the end, each with the
/// block-layer counters of `layers` read at the same moment. Returns the producer's result,
/// the snapshots, and why sampling stopped early, if it did.
pub fn sampled<T>(
    sampler: &Sampler,
    layers: &Layers,
    boundaries: impl IntoIterator<Item = Duration, IntoIter: Send>,
    produce: impl FnOnce(&(dyn Fn(Instant) + Sync)) -> T,
) -> (T, Vec<Snapshot>, Option<String>) {
    let boundaries = boundaries.into_iter();
    let t0: OnceLock<Instant> = OnceLock::new();
    let done = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let sampling = sc.spawn(|| {
            let sample = |ns| {
                sampler.sample(ns).map(|mut s| {
                    s.layers = layers.read();
                    s
                })
            };
            sample_grid_with(sample, || t0.get().copied(), boundaries, &done)
        });
        let started = |at: Instant| {
            let _ = t0.set(at);
        };
        let out = produce(&started);
        done.store(true, Ordering::Relaxed);
        let (samples, error) = sampling.join().expect("the sampler thread does not panic");
        (out, samples, error)
    })
}

/// The sampler beside a synthetic job: the devices under its targets (each chain resolved
/// once) and the CPU, on the job's interval grid, with the block-layer tracer on their whole
/// disks when `trace` (started once, for every job this sampler runs). Targets on no block
/// device (a tmpfs file) have nothing sampled, not even the CPU.
pub struct JobSampler {
    sampler: Option<Sampler>,
    devices: Devices,
    layers: Layers,
}

impl JobSampler {
    pub fn of(targets: &[Target], trace: bool) -> JobSampler {
        let devices = iogauge_engine::devices(targets);
        JobSampler {
            sampler: (!devices.sampled.is_empty())
                .then(|| Sampler::new(Some(devices.sampled.clone()))),
            layers: Layers::start(trace, &devices.sampled),
            devices,
        }
    }

    /// The warning the result carries when the tracer could not start.
    pub fn layers_warning(&self) -> Option<String> {
        self.layers.warning()
    }

    /// Runs `job`, a job of `spec` that tells its t0, with the sampler beside it.
    pub fn run<T>(
        &self,
        spec: &JobSpec,
        job: impl FnOnce(&(dyn Fn(Instant) + Sync)) -> T,
    ) -> (T, Recorded) {
        let (out, samples, error) = match &self.sampler {
            Some(s) => sampled(s, &self.layers, iogauge_engine::grid(spec), job),
            None => (job(&|_| {}), Vec::new(), None),
        };
        let recorded = Recorded {
            samples,
            error,
            disks: self.devices.disks.clone(),
        };
        (out, recorded)
    }
}

impl Sampling for JobSampler {
    fn beside(
        &self,
        spec: &JobSpec,
        job: &mut TellingJob<'_>,
    ) -> (Result<JobOutcome, EngineError>, Vec<Snapshot>) {
        let (out, recorded) = self.run(spec, |started| job(started));
        (out, recorded.samples)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_from_the_producers_start_to_its_end() {
        let s = Sampler::new(Some(vec![]));
        let ms = Duration::from_millis;
        let (out, snaps, err) = sampled(&s, &Layers::off(), [ms(50)], |started| {
            std::thread::sleep(ms(40)); // set-up before t0: not sampled
            started(Instant::now());
            std::thread::sleep(ms(120));
            7
        });
        assert_eq!((out, err), (7, None));
        let at: Vec<u64> = snaps.iter().map(|s| s.at_ns / 1_000_000).collect();
        assert_eq!(at.len(), 3, "t0, the boundary, the end: {at:?}");
        assert!(
            at[0] < 20 && (50..70).contains(&at[1]) && at[2] >= 120,
            "{at:?}"
        );
    }

    #[test]
    fn a_producer_that_never_starts_is_not_sampled() {
        let s = Sampler::new(Some(vec![]));
        let (_, snaps, err) = sampled(&s, &Layers::off(), [Duration::from_millis(1)], |_| ());
        assert!(snaps.is_empty() && err.is_none());
    }
}
