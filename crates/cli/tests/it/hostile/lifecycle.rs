//! A private cluster's life under signals and crashes (issue #25, rows 3, 4, 6, 7, 16 and
//! 22's second half): a setup killed or hung up on during its pristine copy, a terminal's
//! Ctrl-C that reaches the copy too, SIGHUP (a closed terminal) during a measured run, a
//! backend killed during a run and while its sessions connect, and the memory cgroups of
//! killed runs. Real PostgreSQL 15, real signals (SIGKILL, SIGHUP, SIGINT to a process
//! group), real cgroups; as root.

use crate::common::*;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

fn signal(pid: i32, sig: libc::c_int) {
    // SAFETY: plain kill(2) on a process (or, negative, a process group) this test started.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill({pid}, {sig})");
}

fn err_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A small loaded cluster in `w`.
fn small_cluster(w: &tempfile::TempDir) -> Db {
    let db = Db::new(w, Engine::Postgres);
    db.setup_small();
    db
}

/// A setup whose load and copy take seconds (4 × 64 MiB): time to hit the copy.
const BIG: [&str; 4] = ["--schemas", "4", "--scale", "64M"];

fn setup_args(dir: &Path) -> Vec<&str> {
    let mut a = vec!["db", "setup", "--dir", s(dir)];
    a.extend(BIG);
    a
}

/// `iogauge ARGS` in a process group of its own, as a terminal's foreground job is: a signal
/// to the group reaches its children too.
fn spawn_job(args: &[&str]) -> Child {
    command()
        .args(args)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iogauge")
}

/// Until setup's pristine copy is under way (under its temporary name, or its final one).
fn copying(dir: &Path) -> bool {
    dir.join("pristine.new").exists() || dir.join("pristine").exists()
}

/// The backends serving iogauge's database: children of the postmaster whose title names
/// the database (`postgres: postgres iogauge [local] …`), oldest first.
fn backends(dir: &Path) -> Vec<i32> {
    let Some(pm) = std::fs::read_to_string(dir.join("data").join("postmaster.pid"))
        .ok()
        .and_then(|t| t.lines().next()?.trim().parse::<i32>().ok())
    else {
        return Vec::new();
    };
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // pid (comm) state ppid …: the fields after the command's closing parenthesis.
            let ppid = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok());
            let title = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            ppid == Some(pm) && String::from_utf8_lossy(&title).contains(" iogauge ")
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// The bytes of the regular files under `p`.
fn tree_bytes(p: &Path) -> u64 {
    let m = std::fs::symlink_metadata(p).unwrap();
    if m.is_dir() {
        std::fs::read_dir(p)
            .unwrap()
            .map(|e| tree_bytes(&e.unwrap().path()))
            .sum()
    } else if m.is_file() {
        m.len()
    } else {
        0
    }
}

fn show(id: i64) -> Value {
    show_json(id, &[])
}

fn seconds_between(a: &str, b: jiff::Timestamp) -> f64 {
    let a: jiff::Timestamp = a.parse().unwrap_or_else(|e| panic!("{a}: {e}"));
    (a.as_millisecond() - b.as_millisecond()).abs() as f64 / 1000.0
}

// Row 3: `db setup` killed with SIGKILL during its pristine copy. The partial copy is never
// taken for a whole one: `db reset` and `db run` refuse the unfinished cluster and say to
// set up again, which replaces it.
#[test]
fn a_setup_killed_during_its_copy_is_never_taken_for_complete() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let db = Db::new(&w, Engine::Postgres);
    let (dir, d) = (&db.dir, db.d());
    let mut child = spawn(&setup_args(dir));
    assert!(within(120, || copying(dir)), "setup never began its copy");
    child.kill().unwrap();
    child.wait().unwrap();
    wait_gone(d);
    let whole = dir.join("pristine").join("data");
    assert!(
        !whole.exists() || tree_bytes(&whole) < tree_bytes(&dir.join("data")),
        "the copy was complete before the kill: nothing tested"
    );
    let e = fails(&["db", "reset", "--dir", d], 2);
    assert!(
        e.contains("pristine copy is incomplete") && e.contains("db setup --dir"),
        "{e}"
    );
    let e = fails(&["db", "run", "--dir", d, "--time", "1s"], 2);
    assert!(
        e.contains("did not finish") && e.contains("db setup"),
        "{e}"
    );
    let out = db.ok("setup", &["--schemas", "1", "--scale", "2000"]);
    assert!(
        err_of(&out).contains("removing the cluster of a setup that did not finish"),
        "{}",
        err_of(&out)
    );
    assert!(!dir.join("pristine.new").exists());
    let out = db.ok("reset", &[]);
    assert!(err_of(&out).contains("back to the data as loaded"));
    db.drop_it();
    assert!(!dir.exists(), "drop removes the directory setup made");
}

// Row 3: SIGHUP (the terminal closed) during setup's copy is handled as SIGTERM is: setup
// stops, removes what it made, exits 130.
#[test]
fn sighup_during_the_setup_copy_cleans_up() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let dir = w.path().join("pg");
    let child = spawn(&setup_args(&dir));
    assert!(within(120, || copying(&dir)), "setup never began its copy");
    signal(child.id() as i32, libc::SIGHUP);
    let out = finish(child, 30);
    stopped(&out, &["removed what it had created"]);
    assert!(!dir.exists(), "left behind: {dir:?}");
    assert!(server_procs(&dir).is_empty());
    wait_gone(s(&dir));
}

// Row 6: a terminal's Ctrl-C reaches the whole foreground group, cp included. Setup and
// reset still say they were stopped (exit 130), not that the copy failed.
#[test]
fn ctrl_c_to_the_group_during_a_copy_is_a_stop_not_a_failure() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let db = Db::new(&w, Engine::Postgres);
    let (dir, d) = (&db.dir, db.d());
    let child = spawn_job(&setup_args(dir));
    assert!(within(120, || copying(dir)), "setup never began its copy");
    signal(-(child.id() as i32), libc::SIGINT);
    let out = finish(child, 30);
    stopped(
        &out,
        &[
            "stopped by Ctrl-C while copying",
            "removed what it had created",
        ],
    );
    assert!(!dir.exists(), "left behind: {dir:?}");

    let args = setup_args(dir);
    db_ok(&args[1..]);
    let fresh = dir.join("data.new");
    let child = spawn_job(&["db", "reset", "--dir", d]);
    assert!(within(60, || fresh.exists()), "reset never began its copy");
    signal(-(child.id() as i32), libc::SIGINT);
    let out = finish(child, 30);
    stopped(
        &out,
        &["stopped by Ctrl-C while copying", "as it was before"],
    );
    assert!(!fresh.exists(), "the partial copy is removed");
    db.ok("reset", &[]);
    db.drop_it();
}

// Row 4: one backend killed with SIGKILL during `db run`. PostgreSQL ends every other one
// and recovers; iogauge ends within seconds (no fast shutdown waiting on the recovery),
// stores what ran with the end time of the run and the server's own account of the crash.
#[test]
fn a_backend_killed_during_a_db_run_ends_it_within_seconds() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let db = small_cluster(&w);
    let dir = &db.dir;
    let child = db.spawn(
        "run",
        &["--readers", "2", "--writers", "1", "--time", "120s"],
    );
    assert!(
        within(60, || backends(dir).len() >= 4),
        "the sessions never connected"
    );
    std::thread::sleep(Duration::from_secs(2));
    let victim = backends(dir)[0];
    let killed_at = jiff::Timestamp::now();
    signal(victim, libc::SIGKILL);
    let t = Instant::now();
    let out = finish(child, 60);
    let err = err_of(&out);
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "took {:?} after the kill: {err}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("terminated by signal 9"), "{err}");
    let v = show(stored_id(&out.stderr));
    assert_eq!(v["interrupted"], true, "{v}");
    let why = v["error"]
        .as_str()
        .expect("the document says why it stopped");
    assert!(
        why.contains(&format!("(PID {victim}) was terminated by signal 9")),
        "{why}"
    );
    let ended = v["ended_at"].as_str().unwrap();
    let late = seconds_between(ended, killed_at);
    assert!(late < 3.0, "ended_at {ended} is {late} s from the kill");
    assert!(within(10, || server_procs(dir).is_empty()), "server left");
    db.ok("run", &["--readers", "1", "--time", "1s"]);
    db.drop_it();
}

// Row 22: a backend killed while the sessions connect is the server's failure (exit 1),
// said with the lines its log gained during this run only, never a DSN to check (exit 2).
#[test]
fn a_backend_killed_while_sessions_connect_is_the_servers_failure() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let db = small_cluster(&w);
    let dir = &db.dir;
    // An earlier run's crash in the log: not this run's.
    let log = dir.join("server.log");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(
        "2020-01-01 00:00:00.000 UTC [1] LOG:  server process (PID 424242) was terminated by signal 11: Segmentation fault\n\
         2020-01-01 00:00:00.000 UTC [1] LOG:  terminating any other active server processes\n",
    );
    std::fs::write(&log, text).unwrap();
    let child = db.spawn("run", &["--readers", "200", "--time", "5s"]);
    assert!(
        within(60, || backends(dir).len() >= 20),
        "the sessions never connected"
    );
    signal(*backends(dir).last().unwrap(), libc::SIGKILL);
    let out = finish(child, 60);
    let err = err_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!err.contains("stored as run"), "the run had started: {err}");
    assert!(!err.contains("check the DSN"), "{err}");
    assert!(err.contains("terminated by signal 9"), "{err}");
    assert!(!err.contains("424242"), "an old log line: {err}");
    assert!(within(10, || server_procs(dir).is_empty()), "server left");
    db.drop_it();
}

/// Where iogauge's memory cgroup of `pid` lives (cgroup v2 or the v1 memory controller).
fn cgroup_of(pid: u32) -> PathBuf {
    let root = Path::new("/sys/fs/cgroup");
    let parent = if root.join("cgroup.controllers").exists() {
        root.to_path_buf()
    } else {
        root.join("memory")
    };
    parent.join(format!("iogauge-pg-{pid}"))
}

// Row 16: `db run --cache-limit` killed with SIGKILL leaves its (empty) memory cgroup; the
// next start of a private server removes it, and never a group of a live process.
#[test]
fn stale_cgroups_of_killed_runs_are_removed_at_the_next_start() {
    // Exclusive: any private server's start removes the groups of dead runs, so another
    // test's db run (the docs' examples) could remove this one's before it looks.
    let (_g, w) = root_test(exclusive);
    let db = small_cluster(&w);
    let dir = &db.dir;
    let mut child = db.spawn(
        "run",
        &["--readers", "1", "--time", "60s", "--cache-limit", "128M"],
    );
    let stale = cgroup_of(child.id());
    assert!(
        within(60, || stale.exists() && backends(dir).len() >= 2),
        "the run never started in its cgroup"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(within(10, || server_procs(dir).is_empty()), "server left");
    assert!(stale.exists(), "SIGKILL leaves the cgroup: nothing tested");
    // A group named after a live process (this test) stays.
    let live = cgroup_of(std::process::id());
    std::fs::create_dir(&live).unwrap();
    let out = db.ok("run", &["--readers", "1", "--time", "1s"]);
    stored_id(&out.stderr);
    let kept = live.exists();
    let _ = std::fs::remove_dir(&live);
    assert!(!stale.exists(), "{stale:?} outlived the next start");
    assert!(kept, "the group of a live process was removed");
    db.drop_it();
}

/// SIGHUP to a spawned measurement after `after`: exit 130, the partial result printed as
/// JSON, stored and marked interrupted.
fn hang_up(child: Child, after: Duration) -> Value {
    std::thread::sleep(after);
    signal(child.id() as i32, libc::SIGHUP);
    let out = finish(child, 60);
    let err = err_of(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("the partial result is printed");
    assert_eq!(v["interrupted"], true, "{v}");
    assert_eq!(show(stored_id(&out.stderr))["interrupted"], true);
    v
}

// Row 7: SIGHUP (the terminal closed) during run, calibrate and db run: what ran is stored,
// marked interrupted, exit 130, as for Ctrl-C and SIGTERM.
#[test]
fn sighup_keeps_what_ran_of_run_calibrate_and_db_run() {
    let (_g, w) = db_test(Engine::Postgres, heavy);
    let t = w.path().join("data");
    let run = spawn(&[
        "run",
        "--target",
        s(&t),
        "--size",
        "32m",
        "--time",
        "60s",
        "--json",
    ]);
    let v = hang_up(run, Duration::from_millis(2500));
    assert!(u(&v["summary"]["read"]["ios"]) > 0, "{v}");

    let cal = w.path().join("cal");
    let calibrate = spawn(&[
        "calibrate",
        "--target",
        s(&cal),
        "--size",
        "64m",
        "--point-time",
        "1s",
        "--max-latency",
        "50ms",
        "--json",
    ]);
    let v = hang_up(calibrate, Duration::from_millis(5500));
    assert!(!v["points"].as_array().unwrap().is_empty(), "{v}");

    let db = small_cluster(&w);
    let dir = &db.dir;
    let running = db.spawn("run", &["--readers", "1", "--time", "60s", "--json"]);
    assert!(
        within(60, || backends(dir).len() >= 2),
        "the sessions never connected"
    );
    let v = hang_up(running, Duration::from_secs(2));
    assert!(f(&v["summary"]["sessions"]["ops"]) > 0.0, "{v}");
    assert!(within(10, || server_procs(dir).is_empty()), "server left");
    db.drop_it();
}
