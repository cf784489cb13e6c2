//! CPU cost of the OS sampler: takes N snapshots (and derives each interval, as a run does)
//! at a fixed interval and prints the CPU time per sample (getrusage RUSAGE_SELF, user +
//! system) and its share of one core at that interval. Sleeping costs no CPU, so the
//! figure is the sampler's own work plus the loop around it.
//!
//! Usage: sampler_cost INTERVAL COUNT   (INTERVAL like 1000ms, 100ms or 1s)

use iogauge_model::derive::derive;
use iogauge_probe::Sampler;
use std::time::{Duration, Instant};

fn cpu_time() -> Duration {
    // SAFETY: `ru` is a properly sized, writable rusage that getrusage(2) fills in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    assert_eq!(rc, 0, "getrusage: {}", std::io::Error::last_os_error());
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn parse_interval(s: &str) -> Option<Duration> {
    if let Some(ms) = s.strip_suffix("ms") {
        return ms.parse().ok().map(Duration::from_millis);
    }
    s.strip_suffix('s')?
        .parse()
        .ok()
        .map(Duration::from_secs_f64)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: sampler_cost INTERVAL COUNT (e.g. 1000ms 20)";
    let (Some(interval), Some(count)) = (
        args.first().and_then(|s| parse_interval(s)),
        args.get(1).and_then(|s| s.parse::<u32>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let sampler = Sampler::new(None);
    let clock = Instant::now();
    let now = || clock.elapsed().as_nanos() as u64;
    let mut prev = sampler
        .sample(now())
        .unwrap_or_else(|e| panic!("error: {e}"));
    let start = cpu_time();
    for i in 1..=count {
        let due = interval * i;
        if let Some(wait) = due.checked_sub(clock.elapsed()) {
            std::thread::sleep(wait);
        }
        let cur = sampler
            .sample(now())
            .unwrap_or_else(|e| panic!("error: {e}"));
        std::hint::black_box(derive(&prev, &cur));
        prev = cur;
    }
    let per_sample = (cpu_time() - start) / count;
    let share = per_sample.as_secs_f64() / interval.as_secs_f64() * 100.0;
    println!(
        "interval {:>6.0?}  samples {count:>4}  cpu/sample {:>7.1} µs  share of one core {share:.4}%  ({} disks)",
        interval,
        per_sample.as_secs_f64() * 1e6,
        prev.disks.len(),
    );
}
