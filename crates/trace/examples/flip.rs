//! Attaches the tracer to the disks named on the command line and detaches it again, over and
//! over, printing when each traced window began and ended: `bench/trace` runs it beside one
//! long untraced `iogauge run` and compares the run's intervals with the tracer on to the
//! untraced intervals right around them, on a disk whose speed changes within seconds
//! (separate runs are further apart).
//!
//! `flip DISK[,DISK…] ON_MS OFF_MS CYCLES [PID]`, io_uring traced for the process PID (the
//! run's, so its requests cost what they would in a traced run; flip's own by default); prints `on LOAD_NS START_NS END_NS` for each
//! traced window (the wall clock, as a result's `started_at` is stamped): loading began at
//! LOAD, the programs were attached from START to END.

use iogauge_trace::{Disk, Tracer};
use std::time::Duration;

fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_nanos()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (disks, on, off, cycles, pid) = match &args[..] {
        [d, on, off, c] => (d, on, off, c, std::process::id()),
        [d, on, off, c, pid] => (d, on, off, c, pid.parse().expect("a process id")),
        _ => {
            eprintln!("usage: flip DISK[,DISK...] ON_MS OFF_MS CYCLES [PID]");
            std::process::exit(2);
        }
    };
    let ms = |s: &str| Duration::from_millis(s.parse().expect("milliseconds"));
    let disks: Vec<Disk> = disks
        .split(',')
        .map(|d| Disk::named(d).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    for _ in 0..cycles.parse::<u32>().expect("cycles") {
        let load = now_ns();
        let tracer = Tracer::start_for(&disks, pid, None).unwrap_or_else(|e| panic!("{e}"));
        let start = now_ns();
        // Read as the session does, so the sampling adapts as in a run.
        let step = Duration::from_millis(100);
        let mut left = ms(on);
        while !left.is_zero() {
            let nap = left.min(step);
            std::thread::sleep(nap);
            left -= nap;
            let _ = tracer.reading();
        }
        let end = now_ns();
        drop(tracer);
        println!("on {load} {start} {end}");
        std::thread::sleep(ms(off));
    }
}
