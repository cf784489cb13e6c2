//! The per-layer tracer of a session (`iogauge_trace`): started once, for the whole disks the
//! session's sampler samples, read with every snapshot on the interval grid
//! (`Snapshot::layers`). When it cannot start, the result carries one warning saying why and
//! the run goes on without the split; `--no-trace` leaves it off.

use iogauge_model::layers::{LayerCounters, RingCounters};
use iogauge_trace::{Disk, Tracer};
use std::path::Path;

/// The tracer of one session, or why there is none.
#[derive(Default)]
pub struct Layers {
    tracer: Option<Tracer>,
    warning: Option<String>,
}

impl Layers {
    /// No tracing (`--no-trace`, or nothing on a block device).
    pub fn off() -> Layers {
        Layers::default()
    }

    /// The tracer on the whole disks among `devices` (kernel names as the sampler keeps
    /// them: partitions are left out, their disk is traced), when `on`.
    pub fn start(on: bool, devices: &[String]) -> Layers {
        let disks: Vec<&String> = devices
            .iter()
            .filter(|d| Path::new("/sys/block").join(d.as_str()).exists())
            .collect();
        if !on || disks.is_empty() {
            return Layers::off();
        }
        let started = disks
            .iter()
            .map(|d| Disk::named(d))
            .collect::<Result<Vec<_>, _>>()
            .and_then(|d| Tracer::start(&d));
        match started {
            Ok(t) => Layers {
                tracer: Some(t),
                warning: None,
            },
            Err(e) => Layers {
                tracer: None,
                warning: Some(format!("per-layer latency unavailable: {e}")),
            },
        }
    }

    /// The disks' counters now; empty without a tracer.
    pub fn read(&self) -> Vec<LayerCounters> {
        self.tracer.as_ref().map(Tracer::read).unwrap_or_default()
    }

    /// This process's io_uring I/Os since the tracer started (`Tracer::ring`).
    pub fn ring(&self) -> Option<RingCounters> {
        self.tracer.as_ref().and_then(Tracer::ring)
    }

    /// The line the result's warnings carry when the tracer could not start.
    pub fn warning(&self) -> Option<String> {
        self.warning.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_or_nothing_to_trace_reads_nothing_and_warns_nothing() {
        for l in [
            Layers::off(),
            Layers::start(false, &["vda".into()]),
            Layers::start(true, &["no-such-disk".into()]),
        ] {
            assert!(l.read().is_empty() && l.warning().is_none());
        }
    }
}
