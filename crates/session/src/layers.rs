//! The per-layer tracer of a session (`iogauge_trace`): started once, for the whole disks the
//! session's sampler samples, read with every snapshot on the interval grid
//! (`Snapshot::layers`, `Snapshot::ring`), each reading keeping only the histogram buckets
//! added since the one before (`iogauge_model::layers::StageHist`). When it cannot start, the result carries one warning saying why and
//! the run goes on without the split; `--no-trace` leaves it off.

use iogauge_model::layers::{LayerCounters, RingCounters};
use iogauge_trace::{Disk, Tracer};
use std::path::Path;
use std::sync::{Mutex, PoisonError};

/// The tracer of one session, or why there is none.
#[derive(Default)]
pub struct Layers {
    tracer: Option<Tracer>,
    warning: Option<String>,
    /// The tracer's previous reading, whole: what the next one's buckets are counted from.
    before: Mutex<Reading>,
}

/// What one reading of the tracer gives: the disks' counters and this process's io_uring's.
pub type Reading = (Vec<LayerCounters>, Option<RingCounters>);

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
        let (layers, ring) = t.reading();
        let mut before = self.before.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh = (
            LayerCounters::fresh_all(&layers, &before.0),
            ring.as_ref().map(|r| r.fresh_since(before.1.as_ref())),
        );
        *before = (layers, ring);
        fresh
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
            assert!(l.read() == Reading::default() && l.warning().is_none());
        }
    }
}
