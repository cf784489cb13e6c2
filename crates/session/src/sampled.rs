//! A producer run with the one device sampler beside it: the sampler waits for the producer's
//! start signal (its t0, e.g. the database sessions' barrier release), then samples on the
//! producer's grid until the producer returns.

use iogauge_model::system::Snapshot;
use iogauge_probe::{sample_grid, Sampler};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Runs `produce` (on this thread), handing it the function to call at its t0, with `sampler` taking /proc
/// snapshots at t0, at each of `boundaries` (offsets from t0) and at the end. Returns the
/// producer's result, the snapshots, and why sampling stopped early, if it did.
pub fn sampled<T>(
    sampler: &Sampler,
    boundaries: &[Duration],
    produce: impl FnOnce(&(dyn Fn(Instant) + Sync)) -> T,
) -> (T, Vec<Snapshot>, Option<String>) {
    let t0: OnceLock<Instant> = OnceLock::new();
    let done = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let sampling = sc.spawn(|| {
            sample_grid(
                sampler,
                || t0.get().copied(),
                boundaries.iter().copied(),
                &done,
            )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_from_the_producers_start_to_its_end() {
        let s = Sampler::new(Some(vec![]));
        let ms = Duration::from_millis;
        let (out, snaps, err) = sampled(&s, &[ms(50)], |started| {
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
        let (_, snaps, err) = sampled(&s, &[Duration::from_millis(1)], |_| ());
        assert!(snaps.is_empty() && err.is_none());
    }
}
