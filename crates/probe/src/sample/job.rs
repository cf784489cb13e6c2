//! The job's own CPU evidence: this process's CPU time (/proc/self/stat `utime + stime`), its
//! threads' run-queue wait (the `run_delay` of /proc/self/task/*/schedstat) and the
//! machine's CPU pressure (/proc/pressure/cpu). Parsed with procfs-core from text; reading
//! the live files is [`JobTasks::sample`].

use super::error::SampleError;
use iogauge_model::sched::{CpuPressure, JobCpu};
use procfs::FromRead;
use std::collections::HashMap;
use std::io;
use std::sync::{Mutex, PoisonError};

/// `(on-CPU ns, run-queue wait ns)`: the first two fields of a `schedstat` file
/// (`sum_exec_runtime run_delay pcount`, Documentation/scheduler/sched-stats.rst).
pub fn parse_schedstat(text: &str) -> Result<(u64, u64), SampleError> {
    let err = |reason: String| SampleError::Parse {
        file: "/proc/self/task/*/schedstat",
        line: text.trim_end().to_string(),
        reason,
    };
    // procfs-core's `expect!` panics on a short line where it should fail: count first.
    let cols: Vec<&str> = text.split_whitespace().collect();
    if cols.len() != 3 || cols.iter().any(|c| c.parse::<u64>().is_err()) {
        return Err(err(
            "want three counts: run time, run-queue wait, timeslices".into(),
        ));
    }
    let s = procfs::process::Schedstat::from_read(text.as_bytes())
        .map_err(|e| err(format!("procfs: {e}")))?;
    Ok((s.sum_exec_runtime, s.run_delay))
}

/// `utime + stime` of a /proc/PID/stat line, clock ticks (`proc(5)`: fields 14 and 15, after
/// the command in parentheses, which may itself hold spaces and parentheses).
pub fn parse_stat_cpu_ticks(text: &str) -> Result<u64, SampleError> {
    let err = |reason: String| SampleError::Parse {
        file: "/proc/self/stat",
        line: text.trim_end().to_string(),
        reason,
    };
    // procfs-core's parser panics (`expect!`) on a line cut short: check the part it reads.
    let after = text
        .rfind(')')
        .map(|i| &text[i + 1..])
        .ok_or_else(|| err("no `(comm)`".into()))?;
    if after.split_whitespace().count() < 13 {
        return Err(err("fewer fields than utime and stime".into()));
    }
    let s = procfs::process::Stat::from_read(text.as_bytes())
        .map_err(|e| err(format!("procfs: {e}")))?;
    Ok(s.utime + s.stime)
}

/// The `some` total (µs) of /proc/pressure/cpu: a `some` line with `total=` (kernels 5.13+
/// add a `full` line, all zeros for the whole machine).
pub fn parse_pressure_cpu(text: &str) -> Result<CpuPressure, SampleError> {
    let line = text
        .lines()
        .find(|l| l.starts_with("some "))
        .unwrap_or(text);
    let err = |reason: &str| SampleError::Parse {
        file: "/proc/pressure/cpu",
        line: line.trim_end().to_string(),
        reason: reason.into(),
    };
    if !line.starts_with("some ") {
        return Err(err("no `some` line"));
    }
    let r = procfs::parse_pressure_record(line)
        .map_err(|_| err("want avg10= avg60= avg300= total="))?;
    Ok(CpuPressure {
        some_total_us: r.total,
    })
}

/// The run-queue wait of this process's threads, kept across samples: the kernel drops a
/// thread's `schedstat` when the thread exits, so each thread's last value is remembered and
/// added to the sum once it has gone. A thread that calls [`retire_this_thread`] as it ends
/// (the engine's workers do) leaves its final value; for others (io_uring's io-wq workers)
/// what they waited between the last sample and their exit is lost, at most one interval.
#[derive(Debug, Default)]
pub struct JobTasks {
    state: Mutex<Waits>,
}

/// Final waits of threads that are ending: (thread id, run-queue wait ns).
static RETIRED: Mutex<Vec<(u32, u64)>> = Mutex::new(Vec::new());

/// Leaves this thread's run-queue wait for the job's sampler, to call as the thread ends: the
/// kernel forgets it once the thread has exited, which a job's workers do before the
/// sampler's last snapshot. Best effort: without a readable `schedstat` nothing is left.
pub fn retire_this_thread() {
    let Ok(text) = std::fs::read_to_string("/proc/thread-self/schedstat") else {
        return;
    };
    if let Ok((_, wait)) = parse_schedstat(&text) {
        let tid = u32::try_from(gettid()).unwrap_or(0);
        RETIRED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((tid, wait));
    }
}

/// This thread's id (`gettid(2)`, never fails).
fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and no failure mode.
    unsafe { libc::gettid() }
}

#[derive(Debug, Default)]
struct Waits {
    /// Each live thread's wait at the last sample, ns.
    last: HashMap<u32, u64>,
    /// The waits of threads that have exited since the first sample, ns.
    gone: u64,
}

impl Waits {
    /// The sum after a sample that saw `now` (thread id, wait ns): threads not seen any
    /// more move to `gone`, with the final wait they left in `retired` when it is there.
    /// Retired entries of threads no longer alive are dropped once read.
    fn update(&mut self, now: HashMap<u32, u64>, retired: &mut Vec<(u32, u64)>) -> u64 {
        for (tid, w) in &self.last {
            if !now.contains_key(tid) {
                let last = retired
                    .iter()
                    .filter(|(t, _)| t == tid)
                    .map(|(_, w)| *w)
                    .max()
                    .unwrap_or(0);
                self.gone += last.max(*w);
            }
        }
        retired.retain(|(t, _)| now.contains_key(t));
        self.last = now;
        self.gone + self.last.values().sum::<u64>()
    }
}

impl JobTasks {
    /// This process's figures now; `None` where the kernel keeps no `schedstat` (built
    /// without `CONFIG_SCHED_INFO`): not measured.
    pub fn sample(&self) -> Result<Option<JobCpu>, SampleError> {
        let stat = read("/proc/self/stat")?;
        let ticks = parse_stat_cpu_ticks(&stat)?;
        let hz = procfs::ticks_per_second().max(1);
        let dir = "/proc/self/task";
        let rerr = |source| SampleError::Read {
            path: dir.into(),
            source,
        };
        let mut now = HashMap::new();
        for entry in std::fs::read_dir(dir).map_err(rerr)? {
            let entry = entry.map_err(rerr)?;
            let Ok(tid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let path = entry.path().join("schedstat");
            match std::fs::read_to_string(&path) {
                Ok(t) => {
                    now.insert(tid, parse_schedstat(&t)?.1);
                }
                // The thread exited since the directory was read: its last sample counts.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound && !now.is_empty() => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(source) => return Err(SampleError::Read { path, source }),
            }
        }
        let threads = u32::try_from(now.len()).unwrap_or(u32::MAX);
        let mut retired = RETIRED.lock().unwrap_or_else(PoisonError::into_inner);
        let wait_ns = self
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .update(now, &mut retired);
        Ok(Some(JobCpu {
            cpu_ns: ticks.saturating_mul(1_000_000_000 / hz),
            wait_ns,
            threads,
        }))
    }
}

fn read(path: &str) -> Result<String, SampleError> {
    std::fs::read_to_string(path).map_err(|source| SampleError::Read {
        path: path.into(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_lines() {
        assert_eq!(
            parse_schedstat("1523012 2073391 14\n").unwrap(),
            (1_523_012, 2_073_391)
        );
        for bad in ["", "1 2", "1 2 x", "1 2 3 4", "-1 2 3"] {
            assert!(parse_schedstat(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn stat_cpu_ticks_with_an_odd_command() {
        // Captured on kernel 6.18 (a thread named with a space and a parenthesis).
        let line = "2073 (iogauge w) 0) R 2060 2073 2060 34816 2073 4194304 118 0 0 0 452 37 0 0 20 0 3 0 1382400 9551872 640 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
        assert_eq!(parse_stat_cpu_ticks(line).unwrap(), 489);
        for bad in ["", "2073 iogauge R 1", "2073 (x) R 1 2 3"] {
            assert!(parse_stat_cpu_ticks(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cpu_pressure_old_and_new_kernels() {
        let new = "some avg10=3.73 avg60=16.61 avg300=28.75 total=5340190703\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(
            parse_pressure_cpu(new).unwrap().some_total_us,
            5_340_190_703
        );
        // 4.20–5.12: no `full` line.
        let old = "some avg10=0.00 avg60=0.00 avg300=0.00 total=12\n";
        assert_eq!(parse_pressure_cpu(old).unwrap().some_total_us, 12);
        for bad in [
            "",
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0",
            "some total=x",
        ] {
            assert!(parse_pressure_cpu(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn an_exited_thread_keeps_its_wait() {
        let mut w = Waits::default();
        let mut none = Vec::new();
        assert_eq!(w.update(HashMap::from([(1, 10), (2, 5)]), &mut none), 15);
        assert_eq!(w.update(HashMap::from([(1, 12)]), &mut none), 17, "2 gone");
        assert_eq!(w.update(HashMap::from([(1, 12), (3, 1)]), &mut none), 18);
        // Thread 3 left its final wait as it ended, thread 1 did not: 3's counts in full.
        let mut retired = vec![(3, 9), (7, 100)];
        assert_eq!(
            w.update(HashMap::new(), &mut retired),
            26,
            "every thread gone"
        );
        assert!(
            retired.is_empty(),
            "entries of gone threads are dropped: {retired:?}"
        );
    }

    #[test]
    fn this_process_is_measured() {
        let t = JobTasks::default();
        let a = t.sample().unwrap().expect("this kernel keeps schedstat");
        // Burn a little CPU so the counters move.
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(60) {
            std::hint::black_box(0);
        }
        let b = t.sample().unwrap().unwrap();
        assert!(b.cpu_ns > a.cpu_ns, "{a:?} {b:?}");
        assert!(b.wait_ns >= a.wait_ns && b.threads >= 1);
    }
}
