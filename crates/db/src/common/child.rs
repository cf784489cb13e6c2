//! The private cluster's child processes (initdb, cp, the postmaster): they die with iogauge
//! even when it is killed with SIGKILL, and a Ctrl-C stops the ones iogauge waits for; waiting
//! on them and the tail of their logs for error messages.

use crate::common::cgroup::MemCgroup;
use crate::error::DbError;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
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

/// Puts the child in a process group of its own: a terminal's Ctrl-C or hangup goes to the
/// foreground group, and a child in it (cp, initdb) would die of it half-way, before iogauge
/// had seen its own flag, and look like a failed copy. iogauge stops it itself
/// ([`wait_or_stop`]), as it does the postmaster, which has its own group for the same reason.
pub fn own_group(cmd: &mut Command) {
    cmd.process_group(0);
}

/// Makes `cmd` a private server's process as iogauge runs one: in a process group of its own
/// ([`own_group`]), inside `cgroup` when the run caps its page cache, and sent `death` when
/// iogauge dies ([`die_with_parent`]).
pub(crate) fn as_server(cmd: &mut Command, cgroup: Option<&MemCgroup>, death: libc::c_int) {
    own_group(cmd);
    if let Some(cg) = cgroup {
        // SAFETY: the closure only calls async-signal-safe functions (see `joiner`).
        unsafe {
            cmd.pre_exec(cg.joiner());
        }
    }
    die_with_parent(cmd, death);
}

/// Waits for `child`, watching `stop`: once it is raised, SIGTERM, SIGKILL after 5 s, and
/// `Ok(None)` once the child is reaped. A child that failed while the flag was raised was
/// stopped too (a signal sent to it as well): `Ok(None)`, not its failure.
pub fn wait_or_stop(child: &mut Child, stop: &AtomicBool) -> io::Result<Option<ExitStatus>> {
    Ok(match wait_within(child, stop, None)? {
        Ended::Exited(st) => Some(st),
        Ended::Stopped | Ended::TimedOut => None,
    })
}

/// How a child iogauge waited for ended.
enum Ended {
    Exited(ExitStatus),
    /// `stop` was raised: stopped by iogauge.
    Stopped,
    /// Still running after the time allowed: stopped by iogauge.
    TimedOut,
}

/// [`wait_or_stop`], and stopped the same way once `limit` has passed.
fn wait_within(child: &mut Child, stop: &AtomicBool, limit: Option<Duration>) -> io::Result<Ended> {
    let started = Instant::now();
    loop {
        if let Some(st) = child.try_wait()? {
            if !st.success() && stop.load(Ordering::Relaxed) {
                return Ok(Ended::Stopped);
            }
            return Ok(Ended::Exited(st));
        }
        let late = limit.is_some_and(|l| started.elapsed() > l);
        if stop.load(Ordering::Relaxed) || late {
            terminate(child)?;
            return Ok(if late {
                Ended::TimedOut
            } else {
                Ended::Stopped
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM to the child's process group (a script's own children too: `own_group` made the
/// child its leader; to the child alone if it leads none), SIGKILL after 5 s, then reaped.
fn terminate(child: &mut Child) -> io::Result<()> {
    let pid = child.id() as libc::pid_t;
    // SAFETY: kill(2) on our own child's group, or the child itself, not yet reaped.
    unsafe {
        if libc::kill(-pid, libc::SIGTERM) != 0 {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let gone = wait_until(Duration::from_secs(5), || {
        matches!(child.try_wait(), Ok(Some(_)) | Err(_))
    });
    if !gone {
        // SAFETY: as above; the group's other members may outlive the leader's reaping.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = child.kill();
    }
    child.wait()?;
    Ok(())
}

/// How long a setup program (initdb, mariadb-install-db) may run: they take seconds; one
/// still running after this is hung, and is stopped rather than holding setup forever.
pub const SETUP_TIME: Duration = Duration::from_secs(600);

/// Runs `cmd` (initdb, mariadb-install-db) with its output appended to `log` (never through
/// a link), dying with iogauge, stopped by `stop` and after `limit`; an error carries the
/// log's error lines.
pub fn run_logged(
    mut cmd: Command,
    what: &str,
    log: &Path,
    stop: &AtomicBool,
    limit: Duration,
) -> Result<(), DbError> {
    let f = File::options()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(log)
        .map_err(|e| DbError::io(log, e))?;
    let f2 = f.try_clone().map_err(|e| DbError::io(log, e))?;
    die_with_parent(&mut cmd, libc::SIGTERM);
    own_group(&mut cmd);
    let failed = |e: io::Error| DbError::Command {
        what: what.into(),
        log: log.to_path_buf(),
        why: e.to_string(),
    };
    let mut child = cmd.stdout(f).stderr(f2).spawn().map_err(failed)?;
    match wait_within(&mut child, stop, Some(limit)).map_err(failed)? {
        Ended::Stopped => Err(DbError::interrupted(format!("running {what}"))),
        Ended::TimedOut => Err(DbError::Command {
            what: what.into(),
            why: format!(
                "still running after {} s, so stopped (hung?): {}",
                limit.as_secs(),
                log_errors(log, 5)
            ),
            log: log.to_path_buf(),
        }),
        Ended::Exited(st) if st.success() => Ok(()),
        Ended::Exited(st) => Err(DbError::Command {
            what: what.into(),
            why: format!("{st}: {}", log_errors(log, 5)),
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

/// The last `n` lines `log` gained since it was `from` bytes long: what the server said
/// since iogauge started it, not what an earlier run left there.
pub(crate) fn log_since(log: &Path, from: u64, n: usize) -> String {
    let lines = fresh_lines(log, from);
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

fn fresh_lines(log: &Path, from: u64) -> Vec<String> {
    use std::io::{Read, Seek};
    let mut text = String::new();
    if let Ok(mut f) = File::open(log) {
        let len = f.metadata().map_or(0, |m| m.len());
        // A log shorter than before was replaced: all of it is new.
        let at = if from <= len { from } else { 0 };
        let _ = f.seek(io::SeekFrom::Start(at));
        let _ = f.take(1 << 20).read_to_string(&mut text);
    }
    text.lines().map(String::from).collect()
}

/// What the server's log says of a crash since it was `from` bytes long (see [`crash_in`]).
pub(crate) fn crash_lines(log: &Path, from: u64) -> Option<String> {
    crash_in(&fresh_lines(log, from))
}

/// A crash in the server's log lines: a server process killed or failed, after which
/// PostgreSQL ends every other one and restarts (crash recovery), or a PANIC. Its lines,
/// without their time stamps; `None` if there was none.
fn crash_in(lines: &[String]) -> Option<String> {
    const RESTART: &str = "terminating any other active server processes";
    if !lines
        .iter()
        .any(|l| l.contains(RESTART) || l.contains("PANIC:"))
    {
        return None;
    }
    let said: Vec<String> = lines
        .iter()
        .filter(|l| {
            l.contains(RESTART)
                || l.contains("PANIC:")
                || (l.contains("(PID ")
                    && (l.contains("terminated by signal") || l.contains("exited with exit code")))
        })
        .take(3)
        // `2026-11-25 20:58:41.324 UTC [19090] LOG:  server process …`: from the level on.
        .map(|l| {
            let at = l.find("] ").map_or(0, |i| i + 2);
            l[at..].replace(":  ", ": ")
        })
        .collect();
    Some(said.join(" | "))
}

/// What a failed setup command's log says went wrong: its last `n` error lines (initdb's
/// `initdb: error: …`, MariaDB's `[ERROR] …` and `ERROR: 1017 …`), else its last `n` lines.
/// `mariadb-install-db` ends a failure with a page on how to report a bug, which says nothing
/// of the cause.
fn log_errors(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let errors: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            ["ERROR", "FATAL", "PANIC", "error:"]
                .iter()
                .any(|e| l.contains(e))
        })
        .collect();
    let shown = if errors.is_empty() { &lines } else { &errors };
    shown[shown.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const EARLIER: &str = "2026-11-25 20:58:32.850 UTC [19006] LOG:  server process (PID 1) was terminated by signal 9: Killed
2026-11-25 20:58:32.850 UTC [19006] LOG:  terminating any other active server processes
";
    const CRASH: &str = "2026-11-25 20:58:35.273 UTC [19090] LOG:  database system is ready to accept connections
2026-11-25 20:58:41.324 UTC [19090] LOG:  server process (PID 19113) was terminated by signal 9: Killed
2026-11-25 20:58:41.324 UTC [19090] DETAIL:  Failed process was running: CALL iogauge_1.slob_batch($1)
2026-11-25 20:58:41.324 UTC [19090] LOG:  terminating any other active server processes
2026-11-25 20:58:41.333 UTC [19090] LOG:  all server processes terminated; reinitializing
2026-11-25 20:58:41.360 UTC [19161] FATAL:  the database system is in recovery mode
";

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(String::from).collect()
    }

    #[test]
    fn a_crash_is_its_cause_and_the_restart() {
        assert_eq!(
            crash_in(&lines(CRASH)).unwrap(),
            "LOG: server process (PID 19113) was terminated by signal 9: Killed | \
             LOG: terminating any other active server processes"
        );
        let calm = "2026-11-25 20:58:32.850 UTC [19006] LOG:  background worker \"logical replication launcher\" (PID 19013) exited with exit code 1\n\
                    2026-11-25 20:58:32.901 UTC [19006] LOG:  database system is shut down";
        assert_eq!(crash_in(&lines(calm)), None, "a clean shutdown is no crash");
        let panic = "2026-11-25 20:58:32.850 UTC [1] PANIC:  could not write to file \"pg_wal/x\"";
        assert_eq!(
            crash_in(&lines(panic)).unwrap(),
            "PANIC: could not write to file \"pg_wal/x\""
        );
    }

    /// From a `mariadb-install-db` that failed (2 of 6 when two ranks bootstrapped in one
    /// /tmp): the error, not the page on reporting bugs that follows it.
    #[test]
    fn a_failed_command_is_its_error_lines() {
        let log = std::env::temp_dir().join(format!("iogauge-cmd-log-{}", std::process::id()));
        std::fs::write(
            &log,
            "Installing MariaDB/MySQL system tables in './data' ...\n\
             2026-11-27 16:41:10 1 [Warning] Could not remove temporary table: '/tmp/#sql-temptable-53bb-1-4', error: 2\n\
             ERROR: 1017  Can't find file: '/tmp/#sql-temptable-53bb-1-4.MAI' (errno: 2 \"No such file or directory\")\n\
             2026-11-27 16:41:10 0 [ERROR] Aborting\n\
             \n\
             Installation of system tables failed!  Examine the logs in\n\
             Please check all of the above before submitting a bug report\n\
             at https://mariadb.org/jira\n",
        )
        .unwrap();
        assert_eq!(
            log_errors(&log, 5),
            "2026-11-27 16:41:10 1 [Warning] Could not remove temporary table: '/tmp/#sql-temptable-53bb-1-4', error: 2 | \
             ERROR: 1017  Can't find file: '/tmp/#sql-temptable-53bb-1-4.MAI' (errno: 2 \"No such file or directory\") | \
             2026-11-27 16:41:10 0 [ERROR] Aborting"
        );
        std::fs::write(&log, "one\ntwo\nthree\n").unwrap();
        assert_eq!(
            log_errors(&log, 2),
            "two | three",
            "no error line: the tail"
        );
        std::fs::remove_file(&log).unwrap();
    }

    #[test]
    fn only_the_lines_since_the_start_count() {
        let log = std::env::temp_dir().join(format!("iogauge-pg-log-{}", std::process::id()));
        std::fs::write(&log, format!("{EARLIER}{CRASH}")).unwrap();
        let from = EARLIER.len() as u64;
        assert_eq!(fresh_lines(&log, from), lines(CRASH));
        let tail = log_since(&log, from, 2);
        assert!(
            tail.starts_with("2026-11-25 20:58:41.333") && !tail.contains("PID 1)"),
            "{tail}"
        );
        std::fs::write(&log, EARLIER).unwrap();
        assert_eq!(
            crash_lines(&log, from),
            None,
            "an earlier run's crash is not this one's"
        );
        // A log replaced by a shorter one is read whole.
        std::fs::write(&log, CRASH).unwrap();
        assert!(crash_lines(&log, 1 << 40).is_some());
        std::fs::remove_file(&log).unwrap();
    }

    /// A setup program that hangs (the L1 row of issue #44: a hanging installer) is stopped
    /// after its limit, with the children it started, and its log's last words named.
    #[test]
    fn a_hung_setup_program_is_stopped_with_its_children() {
        let d = std::env::temp_dir().join(format!("iogauge-hung-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let (log, pid) = (d.join("log"), d.join("pid"));
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!(
            "sleep 300 & echo $! > {}; echo 'ERROR: waiting'; wait",
            pid.display()
        ));
        let started = Instant::now();
        let e = run_logged(
            cmd,
            "installer",
            &log,
            &AtomicBool::new(false),
            Duration::from_secs(1),
        )
        .unwrap_err()
        .to_string();
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{:?}",
            started.elapsed()
        );
        assert!(
            e.contains("still running after 1 s, so stopped (hung?): ERROR: waiting"),
            "{e}"
        );
        let child: i32 = std::fs::read_to_string(&pid)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Running, not a zombie waiting for init to reap it.
        let alive = || {
            std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| !r.trim_start().starts_with('Z'))
            })
        };
        assert!(
            wait_until(Duration::from_secs(5), || !alive()),
            "its child lives on"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
