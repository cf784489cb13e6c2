//! The CPU evidence a run keeps beside its device counters: how much CPU the job's own
//! threads used and how long they waited for one ([`JobCpu`], this process's threads), and how
//! long the machine's tasks waited for a CPU ([`CpuPressure`], /proc/pressure/cpu). Raw
//! counters in a [`crate::system::Snapshot`]; their rates over an interval ([`JobCpuRates`],
//! `psi_cpu_some_pct` of [`crate::derive::Derived`]) are what the CPU rule reads: a CPU is
//! blamed for I/O time only when the job's threads ran or waited to run for it, never as the
//! part of the latency no other layer explains.

use crate::counter::counter_delta;
use serde::{Deserialize, Serialize};

/// The job's own threads (the process running the workload) at one instant, cumulative.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCpu {
    /// CPU time of the process, user and system, ns: /proc/self/stat's `utime + stime`
    /// (clock ticks, `proc(5)`), which keeps the time of threads that have exited.
    pub cpu_ns: u64,
    /// Time the process's threads were runnable but waiting for a CPU, ns: the sum over
    /// /proc/self/task/*/schedstat of the second field (`run_delay`, the scheduler's
    /// run-queue wait, Documentation/scheduler/sched-stats.rst). A thread that has exited
    /// counts with its last sampled value (the kernel forgets a thread's figures when it
    /// exits), so the sum never goes back.
    pub wait_ns: u64,
    /// The process's threads at the moment of sampling.
    pub threads: u32,
}

/// /proc/pressure/cpu's `some` line (kernel 4.20+ with PSI): time at least one runnable task
/// waited for a CPU, µs since boot. (Its `full` line, 5.13+, is always 0 for the whole
/// machine, so it is not kept.)
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPressure {
    pub some_total_us: u64,
}

/// The job's threads over one interval, per second of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobCpuRates {
    /// CPU-seconds the job used per second (2.0: two CPUs' worth).
    pub cpu_s: f64,
    /// Seconds its threads together spent runnable, waiting for a CPU, per second (a sum
    /// over threads: 3.0 is three threads waiting all the time).
    pub wait_s: f64,
    /// The job's threads at the end of the interval.
    pub threads: u32,
}

impl JobCpuRates {
    /// Between two readings `secs` apart (0 when they are not apart).
    pub fn between(prev: &JobCpu, cur: &JobCpu, secs: f64) -> JobCpuRates {
        let per_s = |a: u64, b: u64| {
            if secs > 0.0 {
                counter_delta(a, b) as f64 / 1e9 / secs
            } else {
                0.0
            }
        };
        JobCpuRates {
            cpu_s: per_s(prev.cpu_ns, cur.cpu_ns),
            wait_s: per_s(prev.wait_ns, cur.wait_ns),
            threads: cur.threads,
        }
    }

    /// `parts` (seconds, rates), consecutive, as one interval: rates weighted by duration,
    /// threads as of the last part. `None` without parts.
    pub fn combine(parts: &[(f64, JobCpuRates)]) -> Option<JobCpuRates> {
        let (_, last) = parts.last()?;
        let secs: f64 = parts.iter().map(|(t, _)| t).sum();
        let mean = |f: fn(&JobCpuRates) -> f64| {
            if secs > 0.0 {
                parts.iter().map(|(t, r)| t * f(r)).sum::<f64>() / secs
            } else {
                0.0
            }
        };
        Some(JobCpuRates {
            cpu_s: mean(|r| r.cpu_s),
            wait_s: mean(|r| r.wait_s),
            threads: last.threads,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_per_second_and_combined_by_duration() {
        let a = JobCpu {
            cpu_ns: 1_000_000_000,
            wait_ns: 0,
            threads: 3,
        };
        let b = JobCpu {
            cpu_ns: 2_000_000_000,
            wait_ns: 4_000_000_000,
            threads: 5,
        };
        let r = JobCpuRates::between(&a, &b, 2.0);
        assert_eq!(
            r,
            JobCpuRates {
                cpu_s: 0.5,
                wait_s: 2.0,
                threads: 5
            }
        );
        assert_eq!(JobCpuRates::between(&a, &b, 0.0).cpu_s, 0.0);
        let idle = JobCpuRates {
            threads: 2,
            ..JobCpuRates::default()
        };
        let both = JobCpuRates::combine(&[(1.0, r), (3.0, idle)]).unwrap();
        assert_eq!((both.cpu_s, both.wait_s, both.threads), (0.125, 0.5, 2));
        assert_eq!(JobCpuRates::combine(&[]), None);
        // /proc/pressure/cpu's total grew 0.5 s in 2 s.
        assert_eq!(
            crate::counter::pressure_pct(1_000_000, 1_500_000, 2.0),
            25.0
        );
        assert_eq!(crate::counter::pressure_pct(1_000_000, 1_500_000, 0.0), 0.0);
    }
}
