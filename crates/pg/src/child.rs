//! The private cluster's child processes (initdb, cp, the postmaster): they die with iogauge
//! even when it is killed with SIGKILL, and a Ctrl-C stops the ones iogauge waits for; waiting
//! on them and the tail of their logs for error messages.

use crate::error::PgError;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Has the kernel send `sig` to the child when the thread that spawns it ends
/// (PR_SET_PDEATHSIG, prctl(2)), and makes it give up at once if iogauge is already gone.
///
/// Set in `pre_exec`, which std runs after the uid and gid switch: the kernel clears the
/// death signal whenever credentials change, so it must be set after them; it survives the
/// exec of a binary that is not set-user-ID. The "parent" is the spawning thread, not the
/// process: spawn from the thread that owns the child for its whole life (iogauge's main
/// thread does).
pub fn die_with_parent(cmd: &mut Command, sig: libc::c_int) {
    // SAFETY: getpid(2) cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure calls only prctl(2) and getppid(2), both async-signal-safe, and
    // allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // iogauge died between fork and prctl: the signal will never come.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Waits for `child`, watching `stop`: once it is raised, SIGTERM, SIGKILL after 5 s, and
/// `Ok(None)` once the child is reaped.
pub fn wait_or_stop(child: &mut Child, stop: &AtomicBool) -> io::Result<Option<ExitStatus>> {
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(Some(st));
        }
        if stop.load(Ordering::Relaxed) {
            let pid = child.id() as libc::pid_t;
            // SAFETY: kill(2) on our own child, not yet reaped (try_wait said so).
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let gone = wait_until(Duration::from_secs(5), || {
                matches!(child.try_wait(), Ok(Some(_)) | Err(_))
            });
            if !gone {
                child.kill()?;
            }
            child.wait()?;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `cmd` (initdb) with its output appended to `log`, dying with iogauge and stopped by
/// `stop`; an error carries the log's tail.
pub fn run_logged(
    mut cmd: Command,
    what: &str,
    log: &Path,
    stop: &AtomicBool,
) -> Result<(), PgError> {
    let f = File::options()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| PgError::io(log, e))?;
    let f2 = f.try_clone().map_err(|e| PgError::io(log, e))?;
    die_with_parent(&mut cmd, libc::SIGTERM);
    let failed = |e: io::Error| PgError::Command {
        what: what.into(),
        log: log.to_path_buf(),
        why: e.to_string(),
    };
    let mut child = cmd.stdout(f).stderr(f2).spawn().map_err(failed)?;
    match wait_or_stop(&mut child, stop).map_err(failed)? {
        None => Err(PgError::interrupted(format!("running {what}"))),
        Some(st) if st.success() => Ok(()),
        Some(st) => Err(PgError::Command {
            what: what.into(),
            why: format!("{st}: {}", log_tail(log, 5)),
            log: log.to_path_buf(),
        }),
    }
}

/// Why [`bounded_output`] gave up.
#[derive(Debug)]
pub(crate) enum Bounded {
    /// It could not be started or read (the error is the program's: it does not run).
    Failed,
    TimedOut,
    TooLong,
}

/// Runs `cmd` for its stdout, at most `limit` bytes within `time`: a program that hangs or
/// floods is killed (its whole process group: a script's children too) instead of holding
/// iogauge or its memory. Stdin and stderr are closed.
pub(crate) fn bounded_output(
    mut cmd: Command,
    limit: usize,
    time: Duration,
) -> Result<(ExitStatus, Vec<u8>), Bounded> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    die_with_parent(&mut cmd, libc::SIGKILL);
    let mut child = cmd.spawn().map_err(|_| Bounded::Failed)?;
    let mut out = child.stdout.take().expect("stdout is piped");
    let deadline = Instant::now() + time;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut over = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break Some(Bounded::TimedOut);
        }
        let mut pfd = libc::pollfd {
            fd: out.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one valid pollfd; the fd stays open (owned by `out`).
        let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis().clamp(1, 1000) as i32) };
        if n <= 0 {
            continue; // a timeout (the deadline is checked above) or EINTR
        }
        match out.read(&mut chunk) {
            Ok(0) => break None,
            Ok(k) => {
                buf.extend_from_slice(&chunk[..k]);
                if buf.len() > limit {
                    break Some(Bounded::TooLong);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break Some(Bounded::Failed),
        }
    };
    if over.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        if !wait_until(left, || matches!(child.try_wait(), Ok(Some(_)))) {
            over = Some(Bounded::TimedOut);
        }
    }
    if let Some(why) = over {
        // SAFETY: kill(2) on the process group of our own child, which is not reaped yet
        // (try_wait never saw it end), so its pid names that group still.
        unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
        let _ = child.wait();
        return Err(why);
    }
    let st = child.wait().map_err(|_| Bounded::Failed)?;
    Ok((st, buf))
}

/// Polls `done` every 20 ms for up to `limit`; true if it became true.
pub(crate) fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last `n` lines of a log file, for error messages.
pub(crate) fn log_tail(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}
