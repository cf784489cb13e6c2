//! A producer run with the one device sampler beside it: the sampler waits for the producer's
//! start signal (its t0, e.g. the database sessions' barrier release), then samples on the
//! producer's grid until the producer returns.

use crate::layers::Layers;
use iogauge_engine::calibrate::{Sampling, TellingJob};
use iogauge_engine::document::Recorded;
use iogauge_engine::{EngineError, JobOutcome, Target};
use iogauge_model::derive::derive;
use iogauge_model::derive::Derived;
use iogauge_model::spec::JobSpec;
use iogauge_model::system::Snapshot;
use iogauge_probe::{sample_grid_with, Devices, Sampler};
use iogauge_stats::Interval;
use iogauge_trace::FileKey;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
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
    sampled_live(sampler, layers, None, boundaries, produce)
}

/// [`sampled`], each snapshot also handed to `live` as it is taken.
fn sampled_live<T>(
    sampler: &Sampler,
    layers: &Layers,
    live: Option<&LiveSystem>,
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
                    (s.layers, s.ring, s.others) = layers.read();
                    if let Some(l) = live {
                        l.push(&s);
                    }
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
/// once), the CPU and the job's own threads (this process: the workers are its threads), on the job's interval grid, with the block-layer tracer on their whole
/// disks when `trace` (started once, for every job this sampler runs). Targets on no block
/// device (a tmpfs file) have nothing sampled, not even the CPU.
pub struct JobSampler {
    sampler: Option<Sampler>,
    devices: Devices,
    layers: Layers,
    live: LiveSystem,
}

/// The system figures of the interval the sampler closed last, for the live feed: the
/// engine closes an interval on the same grid as the sampler, a moment before or after it.
#[derive(Default)]
pub struct LiveSystem {
    last: Mutex<Last>,
}

/// The last snapshot, and the figures between it and the one before (at its `at_ns`).
type Last = (Option<Snapshot>, Option<(u64, Derived)>);

impl LiveSystem {
    fn push(&self, s: &Snapshot) {
        let mut g = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(prev) = &g.0 {
            g.1 = Some((s.at_ns, derive(prev, s)));
        }
        g.0 = Some(s.clone());
    }

    /// The figures of the interval that ended at `end` (run time, from t0), waiting up to
    /// `patience` for the sampler to take its closing snapshot; `None` when it has not (a
    /// live line then shows the job's figures alone, never another interval's).
    pub fn ending_at(&self, end: Duration, patience: Duration) -> Option<Derived> {
        // The sampler's snapshot lands within a few ms of the boundary; a tenth of the
        // patience (≥ 5 ms) tells the closing snapshot from the one before.
        let near = (patience / 10).max(Duration::from_millis(5)).as_nanos() as u64;
        let end_ns = end.as_nanos() as u64;
        let waited = Instant::now();
        loop {
            {
                let g = self.last.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some((at, d)) = &g.1 {
                    if at.abs_diff(end_ns) <= near {
                        return Some(d.clone());
                    }
                    if *at > end_ns + near {
                        return None;
                    }
                }
            }
            if waited.elapsed() >= patience {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl JobSampler {
    pub fn of(targets: &[Target], trace: bool) -> JobSampler {
        let devices = iogauge_engine::devices(targets);
        JobSampler {
            sampler: (!devices.sampled.is_empty())
                .then(|| Sampler::new(Some(devices.sampled.clone())).with_job()),
            layers: Layers::start(
                trace,
                &devices.sampled,
                &targets
                    .iter()
                    .filter_map(|t| Some(FileKey::of(&t.file.metadata().ok()?)))
                    .collect::<Vec<_>>(),
            ),
            devices,
            live: LiveSystem::default(),
        }
    }

    /// The warning the result carries when the tracer could not start.
    pub fn layers_warning(&self) -> Option<String> {
        self.layers.warning()
    }

    /// The system figures of the job's interval `iv` for the live feed: the sampler's
    /// snapshot closing it is taken on the same grid, a few ms apart, so the interval waits
    /// for it up to 50 ms or a twentieth of its length, whichever is less. (The run's last
    /// interval waits in vain: the sampler takes its last snapshot once the job returns, and
    /// a longer wait would put that snapshot nearer the next boundary than this one's end,
    /// 50 ms late on a 33 ms run.)
    pub fn live_system(&self, iv: &Interval) -> Option<Derived> {
        let len = Duration::from_nanos(iv.end.0.saturating_sub(iv.start.0));
        let patience = (len / 20).min(Duration::from_millis(50));
        self.live
            .ending_at(Duration::from_nanos(iv.end.0), patience)
    }

    /// Runs `job`, a job of `spec` that tells its t0, with the sampler beside it.
    pub fn run<T>(
        &self,
        spec: &JobSpec,
        job: impl FnOnce(&(dyn Fn(Instant) + Sync)) -> T,
    ) -> (T, Recorded) {
        let (out, samples, error) = match &self.sampler {
            Some(s) => sampled_live(
                s,
                &self.layers,
                Some(&self.live),
                iogauge_engine::grid(spec),
                job,
            ),
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
    fn a_live_interval_gets_the_figures_of_the_snapshot_closing_it() {
        let live = LiveSystem::default();
        let snap = |ms: u64, reads: u64| {
            let cpu = iogauge_model::system::CpuCounters {
                user: reads,
                ..Default::default()
            };
            Snapshot {
                at_ns: ms * 1_000_000,
                disks: Vec::new(),
                cpu,
                mem: Default::default(),
                psi: None,
                cpus: Vec::new(),
                load: None,
                layers: Vec::new(),
                ring: None,
                others: Vec::new(),
                swap: None,
                job: None,
                psi_cpu: None,
            }
        };
        let ms = Duration::from_millis;
        // Only one snapshot: nothing to derive yet, and the wait is bounded.
        live.push(&snap(0, 0));
        let t = Instant::now();
        assert!(live.ending_at(ms(1000), ms(20)).is_none());
        assert!(t.elapsed() < ms(200));
        live.push(&snap(1000, 100));
        assert!(live.ending_at(ms(1000), ms(20)).is_some());
        // An interval the sampler has gone past gets nothing, at once.
        live.push(&snap(2000, 300));
        let t = Instant::now();
        assert!(live.ending_at(ms(1000), ms(500)).is_none());
        assert!(t.elapsed() < ms(100));
        // The sampler a moment late: the interval waits for it.
        std::thread::scope(|sc| {
            sc.spawn(|| {
                std::thread::sleep(ms(30));
                live.push(&snap(3002, 400));
            });
            assert!(live.ending_at(ms(3000), ms(500)).is_some());
        });
    }

    #[test]
    fn a_producer_that_never_starts_is_not_sampled() {
        let s = Sampler::new(Some(vec![]));
        let (_, snaps, err) = sampled(&s, &Layers::off(), [Duration::from_millis(1)], |_| ());
        assert!(snaps.is_empty() && err.is_none());
    }
}
