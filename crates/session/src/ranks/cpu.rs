//! What the end of a job over ranks costs a rank, in its own CPU time.

/// This thread's CPU time, ms (`CLOCK_THREAD_CPUTIME_ID`; 0 if the clock cannot be read).
pub fn thread_cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    match unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } {
        0 => t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6,
        _ => 0.0,
    }
}
