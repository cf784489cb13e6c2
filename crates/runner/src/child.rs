//! One run of a campaign: a child `iogauge` process with the case's command line, tagged with
//! its case and repetition so the child stores run and tag in one transaction. The case's
//! real DSN goes to the child in its environment ([`DSN_ENV`]), the only place a campaign's
//! unmasked DSN goes: a command line is readable by every local user in /proc/PID/cmdline, a
//! process's environment only by its own user and root.

use crate::error::RunnerError;
use iogauge_campaign::{Campaign, Case};
use iogauge_model::secret::DSN_ENV;
use iogauge_session::CAMPAIGN_ENV;
use iogauge_store::CampaignTag;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The exit code of an `iogauge` run stopped by Ctrl-C (128 + SIGINT, as a shell reports a
/// command the signal ended): a run that ends so was interrupted, not failed.
pub const INTERRUPTED_EXIT: i32 = 130;

/// Runs one child `iogauge` and returns its exit code. Its stdout (the JSON document, which
/// the child stores before printing) goes to /dev/null: nothing here reads it, and a pipe
/// would vanish with this process, failing the child's output. Its stderr (progress,
/// warnings, errors) passes through. Ctrl-C reaches the child too (same process group on a
/// terminal, and forwarded here otherwise); if this process dies, the kernel interrupts the
/// child, which stores what ran, marked interrupted. A raw stand-in runs `iogauge run
/// --like SOURCE` (`source`: the stored id of the run it replays).
pub(crate) fn run_child(
    c: &Campaign,
    case: &Case,
    source: Option<i64>,
    tag: &CampaignTag,
    store: &Path,
    stop: &AtomicBool,
) -> Result<i32, RunnerError> {
    let exe = std::env::current_exe().map_err(RunnerError::Exe)?;
    // Under a launcher (`mpirun -np 4 …`) the run is one job over its ranks.
    let mut cmd = match c.launcher.as_deref() {
        Some([first, rest @ ..]) => {
            let mut l = Command::new(first);
            l.args(rest).arg(exe);
            l
        }
        _ => Command::new(exe),
    };
    let (args, dsn) = dsn_off_argv(&case.args);
    cmd.args(case.command(c.command).words()).args(args);
    if let Some(dsn) = dsn {
        cmd.env(DSN_ENV, dsn);
    }
    if let Some(id) = source {
        cmd.arg("--like").arg(id.to_string());
    }
    cmd.arg("--json")
        .arg("--store")
        .arg(store)
        .env(CAMPAIGN_ENV, serde_json::to_string(tag)?)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: prctl(2), getppid(2) and _exit(2) are async-signal-safe and touch no memory of
    // the parent. PR_SET_PDEATHSIG only covers a parent that dies after it is set; one that
    // died before shows as a changed parent pid, and the run then never starts.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(INTERRUPTED_EXIT);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(RunnerError::StartRun)?;
    let mut forwarded = false;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(RunnerError::WaitRun)? {
            break s;
        }
        if stop.load(Ordering::Relaxed) && !forwarded {
            // SAFETY: kill(2) on our own child's pid, which has not been reaped yet.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            forwarded = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// `args` without `--dsn VALUE` (or `--dsn=VALUE`), and the value, the last one given as
/// `iogauge` takes it; the child reads it from [`DSN_ENV`]. An empty value stays on the
/// command line (it holds no password, and an empty variable reads as no `--dsn` at all).
pub(crate) fn dsn_off_argv(args: &[String]) -> (Vec<&str>, Option<&str>) {
    let mut kept = Vec::with_capacity(args.len());
    let mut dsn = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let value = match a.strip_prefix("--dsn") {
            Some(v) if v.starts_with('=') => Some((&v[1..], 1)),
            Some("") => args.get(i + 1).map(|v| (v.as_str(), 2)),
            _ => None,
        };
        match value {
            Some((v, n)) if !v.is_empty() => {
                dsn = Some(v);
                i += n;
            }
            _ => {
                kept.push(a);
                i += 1;
            }
        }
    }
    (kept, dsn)
}

#[cfg(test)]
mod tests {
    use super::dsn_off_argv;

    fn of(args: &[&str]) -> (Vec<String>, Option<String>) {
        let owned: Vec<String> = args.iter().map(ToString::to_string).collect();
        let (kept, dsn) = dsn_off_argv(&owned);
        (
            kept.into_iter().map(String::from).collect(),
            dsn.map(String::from),
        )
    }

    #[test]
    fn the_dsn_leaves_the_command_line() {
        let (kept, dsn) = of(&[
            "--readers",
            "2",
            "--dsn",
            "postgres://u:pw@h/db",
            "--time",
            "1s",
        ]);
        assert_eq!(kept, ["--readers", "2", "--time", "1s"]);
        assert_eq!(dsn.as_deref(), Some("postgres://u:pw@h/db"));
        let (kept, dsn) = of(&["--dsn=host=h password=pw", "--readers", "1"]);
        assert_eq!(kept, ["--readers", "1"]);
        assert_eq!(dsn.as_deref(), Some("host=h password=pw"));
        // The last one wins, as on a command line; none leaves the arguments as they are.
        let (kept, dsn) = of(&["--dsn", "a:1@h", "--dsn", "b:2@h"]);
        assert_eq!((kept.len(), dsn.as_deref()), (0, Some("b:2@h")));
        assert_eq!(
            of(&["--dir", "d"]),
            (vec!["--dir".into(), "d".into()], None)
        );
        // An empty value, or a flag that only starts like it, stays.
        assert_eq!(of(&["--dsn", ""]).1, None);
        assert_eq!(of(&["--dsnx", "v"]).0.len(), 2);
    }
}
