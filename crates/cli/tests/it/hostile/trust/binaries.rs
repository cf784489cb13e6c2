//! Rows 19 and 22: a `postgres` that hangs or floods is killed with memory bounded; a WAL or
//! tablespace on tmpfs is named in a warning.

use super::*;

/// A bin directory whose `postgres` runs `script` (initdb and pg_ctl do nothing).
fn hostile_postgres(at: &Path, script: &str) {
    let programs = [
        ("initdb", "exit 0"),
        ("pg_ctl", "exit 0"),
        ("postgres", script),
    ];
    fake_bin(at, &programs, None);
}

/// Runs `iogauge ARGS` to its end (killed after `secs`): its stderr, exit code, time taken and
/// peak memory (KiB): the highest VmHWM read while it ran as iogauge. Not wait4's ru_maxrss:
/// Linux carries that over exec from the forked copy of this test binary, which is hundreds
/// of MB while other tests run beside it.
// The child is reaped by waitpid(2) (WNOHANG while it runs, so it can be read and killed).
#[allow(clippy::zombie_processes)]
fn run_measured(args: &[&str], secs: u64) -> (String, Option<i32>, Duration, i64) {
    let t = Instant::now();
    let child = command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut err = child.stderr.unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let mut status = 0;
    let mut killed = false;
    let mut peak_kib = 0i64;
    let exe = exe();
    loop {
        if std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe) {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            if let Some(kib) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
            {
                peak_kib = peak_kib.max(kib);
            }
        }
        let flags = if killed { 0 } else { libc::WNOHANG };
        // SAFETY: waitpid(2) on our own child with a valid out-pointer; WNOHANG while it runs,
        // so it is read and killed (not yet reaped, its pid still its own) until it ends.
        let got = unsafe { libc::waitpid(pid, &mut status, flags) };
        if got == pid {
            break;
        }
        assert_eq!(got, 0, "wait4: {}", std::io::Error::last_os_error());
        if t.elapsed() > Duration::from_secs(secs) {
            // SAFETY: kill(2) on our own child, not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = t.elapsed();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (reader.join().unwrap(), code, took, peak_kib)
}

// Row 19: a `--pg-bin` whose `postgres --version` never returns, or prints 500 MB: killed
// (with its children) after 10 s or 4 KiB, exit 1 naming the binary, memory bounded.
#[test]
fn row19_a_postgres_that_hangs_or_floods_is_killed() {
    let _g = shared();
    let w = workdir();
    let hangs = w.path().join("hangs");
    hostile_postgres(&hangs, "sleep 918273");
    let floods = w.path().join("floods");
    hostile_postgres(
        &floods,
        "yes 'postgres (PostgreSQL) 15.0' | head -c 524288001",
    );
    let dir = w.path().join("pg");
    let (e, code, took, _) = run_measured(
        &["db", "setup", "--dir", s(&dir), "--pg-bin", s(&hangs)],
        60,
    );
    assert_eq!(code, Some(1), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.starts_with(&format!(
            "error: {}/postgres: `postgres --version` gave no answer within 10 s",
            hangs.display()
        )),
        "{e}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    wait_gone("918273");
    let (e, code, took, rss_kib) = run_measured(
        &[
            "db",
            "run",
            "--dir",
            s(&dir),
            "--pg-bin",
            s(&floods),
            "--time",
            "1s",
        ],
        60,
    );
    assert_eq!(code, Some(1), "{e}");
    assert!(
        e.contains(&format!(
            "{}/postgres: `postgres --version` printed more than 4096 bytes",
            floods.display()
        )),
        "{e}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(rss_kib < 100 << 10, "iogauge grew to {rss_kib} KiB");
    wait_gone("524288001");
    assert!(!dir.exists());
}

// Row 22: a WAL or tablespace directory on tmpfs is memory: db setup's preflight says so, and
// so does the stored db run.
#[test]
fn row22_a_wal_or_tablespace_on_tmpfs_is_named_in_a_warning() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let mem = w.path().join("mem");
    let _m = Mount::new(&mem, "tmpfs", "size=512m");
    let dir = w.path().join("pg");
    let (wal, ts) = (mem.join("wal"), mem.join("ts"));
    let out = setup(&dir, &["--wal-dir", s(&wal), "--target", s(&ts)]);
    let text = String::from_utf8_lossy(&out.stdout);
    for (role, p) in [("wal", &wal), ("tablespace", &ts)] {
        assert!(
            text.contains(&format!(
                "WARNING: {role} {} is on tmpfs, which is memory: the database's I/O there measures RAM, not storage",
                p.display()
            )),
            "{text}"
        );
    }
    assert!(
        !text.contains(&format!("data {}/data is on tmpfs", dir.display())),
        "{text}"
    );
    let db = Db::at(Engine::Postgres, dir.clone());
    let out = db.ok("run", &["--readers", "1", "--time", "1s", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with(&format!("wal {} is on tmpfs", wal.display()))),
        "{warnings:?}"
    );
    db.drop_it();
}
