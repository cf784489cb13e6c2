//! The watcher: the system sampled on the refresh grid, and the run in progress followed.

use crate::follow::{self, Follow};
use crate::shown::Shown;
use iogauge_model::derive::{derive, per_cpu, Derived, PerCpuRates};
use iogauge_model::system::Snapshot;
use iogauge_probe::{SampleError, Sampler};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What to watch, checked by the binary.
pub struct Scope {
    /// The refresh interval.
    pub every: Duration,
    /// Devices by kernel name; `None`: the whole disks (and stacked devices) of /sys/block,
    /// shown as `all` says.
    pub devices: Option<Vec<String>>,
    /// With `devices` `None`: every one that has done I/O since boot (`--devices all`), or
    /// only those that do I/O while watch runs (the default).
    pub all: bool,
    /// Each CPU's figures too, not only the machine's.
    pub each_cpu: bool,
    /// The results store (when there is one) beside which runs in progress are found.
    pub store: Option<PathBuf>,
}

/// Samples the system on the refresh grid and follows the newest run in progress.
pub struct Watcher {
    scope: Scope,
    sampler: Sampler,
    t0: Instant,
    /// The latest sample: the next look's starting point.
    prev: Snapshot,
    follow: Option<Follow>,
    shown: Shown,
}

/// What one refresh saw.
pub struct Look {
    /// When, to the second (RFC 3339).
    pub timestamp: String,
    /// The system since the previous sample.
    pub system: Derived,
    /// Each CPU's figures with `each_cpu`, else `None`.
    pub cpus: Option<Vec<PerCpuRates>>,
    /// The devices to show, in order (see [`Scope::devices`]).
    pub devices: Vec<String>,
}

impl Watcher {
    /// Starts the clock and takes the first sample.
    pub fn start(scope: Scope) -> Result<Watcher, SampleError> {
        let sampler = Sampler::new(scope.devices.clone());
        let t0 = Instant::now();
        let prev = sampler.sample(0)?;
        Ok(Watcher {
            scope,
            sampler,
            t0,
            prev,
            follow: None,
            shown: Shown::default(),
        })
    }

    /// What is watched.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The latest sample (after [`Watcher::start`], the first).
    pub fn latest(&self) -> &Snapshot {
        &self.prev
    }

    /// When refresh `k` (1, 2, …) is due.
    pub fn due(&self, k: u64) -> Instant {
        self.t0 + self.scope.every * k as u32
    }

    /// Sleeps until refresh `k` is due, waking early when `stop` is raised; true if stopped.
    pub fn sleep_until(&self, k: u64, stop: &AtomicBool) -> bool {
        let at = self.due(k);
        loop {
            if stop.load(Ordering::Relaxed) {
                return true;
            }
            let now = Instant::now();
            if now >= at {
                return false;
            }
            std::thread::sleep((at - now).min(Duration::from_millis(50)));
        }
    }

    /// One refresh: the system since the previous sample, and the followed run brought up
    /// to date.
    pub fn look(&mut self) -> Result<Look, SampleError> {
        let cur = self.sampler.sample(self.t0.elapsed().as_nanos() as u64)?;
        let system = derive(&self.prev, &cur);
        let cpus = self.scope.each_cpu.then(|| per_cpu(&self.prev, &cur));
        self.prev = cur;
        follow::refresh(self.scope.store.as_deref(), &mut self.follow);
        let devices = self
            .shown
            .names(self.scope.devices.as_deref(), self.scope.all, &system);
        Ok(Look {
            timestamp: timestamp(),
            system,
            cpus,
            devices,
        })
    }

    /// The run in progress being followed, if any.
    pub fn following(&self) -> Option<&Follow> {
        self.follow.as_ref()
    }
}

fn timestamp() -> String {
    let t = jiff::Timestamp::now();
    t.round(jiff::Unit::Second).unwrap_or(t).to_string()
}
