//! Kernel counters read twice, at the two ends of an interval: their difference, and the
//! share of the interval a pressure (PSI) total grew by. `derive` and `sched` both read them.

/// `cur - prev` for a kernel counter. When `cur < prev` the counter either wrapped or was
/// reset: if `prev` still fits in 32 bits it is taken for a 32-bit counter that wrapped
/// (the diskstats time columns are printed `%u`, and 32-bit kernels keep `unsigned long`
/// counts), so the delta is `cur + 2^32 - prev`; otherwise a 64-bit counter cannot have
/// wrapped within an interval, the device was reset (or replaced under the same name) and
/// the delta is `cur`, counted from zero.
pub fn counter_delta(prev: u64, cur: u64) -> u64 {
    if cur >= prev {
        cur - prev
    } else if prev < 1 << 32 {
        cur + (1 << 32) - prev
    } else {
        cur
    }
}

/// Percent of the `secs` between two readings of a PSI `some` total (µs) during which some
/// task waited (/proc/pressure/io, /proc/pressure/cpu); 0 when the readings are not apart.
pub fn pressure_pct(prev_us: u64, cur_us: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        counter_delta(prev_us, cur_us) as f64 / (secs * 1e6) * 100.0
    } else {
        0.0
    }
}
