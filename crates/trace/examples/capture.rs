//! Captures every block request issued to the disks named on the command line for a while and
//! counts them: `bench/capture` runs it beside fio to measure what capturing costs the
//! workload it records.
//!
//! `capture DISK[,DISK…] SECS [RING_BYTES]` (the ring 16 MiB by default); prints `attached`
//! once the programs are, and `events N dropped D others O bytes B seconds S` when done.

use iogauge_trace::capture::{Capture, CaptureFilter, RING_BYTES};
use iogauge_trace::Disk;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (disks, secs, ring) = match &args[..] {
        [d, s] => (d, s, RING_BYTES),
        [d, s, r] => (d, s, r.parse().expect("RING_BYTES: a number of bytes")),
        _ => {
            eprintln!("usage: capture DISK[,DISK...] SECS [RING_BYTES]");
            std::process::exit(2);
        }
    };
    let secs: f64 = secs.parse().expect("SECS: seconds");
    let disks: Vec<Disk> = disks
        .split(',')
        .map(|d| Disk::named(d).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let mut capture =
        Capture::start(&disks, &CaptureFilter::default(), ring).unwrap_or_else(|e| panic!("{e}"));
    // Rust's stdout is line-buffered even into a pipe: the bench sees this at once.
    println!("attached");
    let (start, until) = (Instant::now(), Duration::from_secs_f64(secs));
    let mut events = 0u64;
    // Every event is looked at (its size summed), as a writer of them would.
    let mut bytes = 0u64;
    while start.elapsed() < until {
        let left = until.saturating_sub(start.elapsed());
        capture
            .poll(left.min(Duration::from_millis(100)), |e| {
                events += 1;
                bytes += u64::from(e.bytes);
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }
    println!(
        "events {events} dropped {} others {} bytes {bytes} seconds {:.3}",
        capture.dropped(),
        capture.others(),
        start.elapsed().as_secs_f64()
    );
}
