//! The private PostgreSQL and secrets under attack (issue #14, rows 6, 7, 8, 9, 16 and the
//! `db` parts of 15): passwords in DSNs are never echoed, other local users cannot get into
//! the private server, the server dies with a killed iogauge, Ctrl-C in setup and reset
//! cleans up, a failed setup leaves nothing behind, and bad `--dir` / `--pg-set` values are
//! one-line usage errors. Real PostgreSQL 15, real `runuser`, real signals; as root.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

const SECRET: &str = "secretpw";

pub(super) fn db_ok(args: &[&str]) -> Output {
    let out = bin().arg("db").args(args).output().expect("spawn iogauge");
    assert!(
        out.status.success(),
        "db {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A small loaded cluster in a fresh work directory.
fn small_cluster(w: &tempfile::TempDir) -> PathBuf {
    let dir = w.path().join("pg");
    db_ok(&[
        "setup",
        "--dir",
        s(&dir),
        "--schemas",
        "1",
        "--scale",
        "2000",
    ]);
    dir
}

pub(super) fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Processes whose working directory is the server's data directory: the postmaster and
/// every backend chdir there (mariadbd too, `hostile/maria.rs`).
pub(super) fn server_procs(dir: &Path) -> Vec<u32> {
    let data = dir.join("data");
    let data = data.canonicalize().unwrap_or(data);
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == data))
        .collect()
}

/// Polls `done` every 50 ms for up to `secs`.
pub(super) fn within(secs: u64, mut done: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

fn socket(dir: &Path) -> PathBuf {
    dir.join("run").join(".s.PGSQL.5432")
}

/// `psql` as `user` (through runuser) or as root, on the cluster's socket: (success, stderr).
fn psql(user: Option<&str>, host: &str) -> (bool, String) {
    let out = as_os_user(user, "psql")
        .args([
            "-h", host, "-U", "postgres", "-d", "iogauge", "-Atc", "SELECT 1",
        ])
        .output()
        .expect("runuser and psql (apt-get install -y util-linux postgresql-client)");
    (
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "1",
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub(super) fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

pub(super) fn chmod(p: &Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// What another local user gets while a `db run` is going on, through each layer: the
/// socket's permissions, then (with those opened by hand) peer authentication, then TCP.
fn assert_closed_to_others(dir: &Path) {
    let run = dir.join("run");
    assert_eq!(mode(&run), 0o700, "socket directory");
    let (ok, err) = psql(Some("nobody"), s(&run));
    assert!(!ok && err.contains("Permission denied"), "{err}");
    chmod(&run, 0o755);
    chmod(&socket(dir), 0o777);
    let (ok, err) = psql(Some("nobody"), s(&run));
    assert!(
        !ok && err.contains("Peer authentication failed"),
        "past the socket's permissions, pg_hba.conf must still refuse: {err}"
    );
    let (ok, err) = psql(Some("nobody"), "127.0.0.1");
    assert!(!ok && err.contains("Connection refused"), "TCP: {err}");
    // The server itself is fine: iogauge's own account (root) gets in.
    let (ok, err) = psql(None, s(&run));
    assert!(ok, "root must still connect: {err}");
    chmod(&run, 0o700);
}

/// The only rule in pg_hba.conf: peer authentication on the socket, through iogauge's map.
fn hba_rules(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("data").join("pg_hba.conf"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

/// Starts `db run` on `dir` and waits until its server listens.
fn run_in_background(dir: &Path, secs: &str) -> Child {
    let child = spawn(&[
        "db",
        "run",
        "--dir",
        s(dir),
        "--readers",
        "1",
        "--time",
        secs,
    ]);
    assert!(
        within(60, || socket(dir).exists() && !server_procs(dir).is_empty()),
        "the server of the db run never came up"
    );
    child
}

// Row 9: a password in any DSN form is never echoed, by any db subcommand.
#[test]
fn dsn_passwords_are_never_echoed() {
    let _g = shared();
    let forms = [
        format!("garbage://u:{SECRET}@x"),
        format!("postgres:/u:{SECRET}@x/db"),
        format!("u:{SECRET}@host/db"),
        format!("PASSWORD={SECRET} host=localhost"),
        format!("host=127.0.0.1 port=1 password={SECRET}"),
        format!("postgres://u:{SECRET}@127.0.0.1:1/db?password={SECRET}"),
        format!("host=h password='{SECRET}"),
    ];
    for dsn in &forms {
        for cmd in [
            vec!["db", "run", "--dsn", dsn, "--time", "1s"],
            vec!["db", "setup", "--dsn", dsn],
            vec!["db", "reset", "--dsn", dsn],
            vec!["db", "drop", "--dsn", dsn],
        ] {
            let out = bin().args(&cmd).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{cmd:?}: {err}");
            assert!(err.starts_with("error:"), "{err}");
            assert!(!err.contains(SECRET), "{cmd:?} echoed the password: {err}");
            assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
        }
    }
}

// Row 6: during a db run, no other local user gets into the private server.
#[test]
fn other_local_users_cannot_connect_during_a_db_run() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = small_cluster(&w);
    assert_eq!(hba_rules(&dir), ["local all all peer map=iogauge"]);
    let run = run_in_background(&dir, "10s");
    assert_closed_to_others(&dir);
    let out = finish(run, 60);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // No password exists to leak: nothing of the kind in pg_hba.conf, the run's output or the
    // stored document.
    let id = stored_id(&out.stderr);
    let shown = bin()
        .args(["show", &id.to_string(), "--json"])
        .output()
        .unwrap();
    let all = [&out.stdout, &out.stderr, &shown.stdout]
        .map(|b| String::from_utf8_lossy(b).to_lowercase())
        .join("\n");
    for word in ["trust", "scram", "md5", "password"] {
        assert!(!all.contains(word), "{word} in the output or the store");
    }
    db_ok(&["drop", "--dir", s(&dir)]);
}

// Row 6: a cluster made by an older iogauge (trust for everyone, an open socket directory)
// is closed in place at its next start, its data kept.
#[test]
fn an_older_open_cluster_is_closed_at_its_next_start() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = small_cluster(&w);
    let hba = dir.join("data").join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\nhost all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    chmod(&dir.join("run"), 0o777);
    let run = run_in_background(&dir, "8s");
    assert_eq!(hba_rules(&dir), ["local all all peer map=iogauge"]);
    assert_closed_to_others(&dir);
    let out = finish(run, 60);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    db_ok(&["drop", "--dir", s(&dir)]);
}

// Row 7: kill -9 of `db run` takes the postmaster and every backend along; the next run works.
#[test]
fn killed_db_run_takes_its_server_along() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = small_cluster(&w);
    let mut run = run_in_background(&dir, "60s");
    std::thread::sleep(Duration::from_secs(2));
    assert!(server_procs(&dir).len() > 1, "postmaster and backends run");
    run.kill().unwrap();
    run.wait().unwrap();
    assert!(
        within(10, || server_procs(&dir).is_empty()),
        "still running after iogauge was killed: {:?}",
        server_procs(&dir)
    );
    assert!(!dir.join("data").join("postmaster.pid").exists());
    let out = db_ok(&["run", "--dir", s(&dir), "--readers", "1", "--time", "1s"]);
    stored_id(&out.stderr);
    db_ok(&["drop", "--dir", s(&dir)]);
}

/// Ctrl-C `db setup --dir dir` once `ready` says so; asserts exit 130 within 20 s, one line,
/// and no server process left.
fn interrupt_setup(dir: &Path, ready: impl Fn() -> bool) -> String {
    let child = spawn(&[
        "db",
        "setup",
        "--dir",
        s(dir),
        "--schemas",
        "4",
        "--scale",
        "64M",
    ]);
    assert!(
        within(60, &ready),
        "setup never reached the moment to interrupt"
    );
    sigint(&child);
    let t = Instant::now();
    let out = finish(child, 30);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("removed what it had created"), "{err}");
    assert!(server_procs(dir).is_empty(), "a server outlived Ctrl-C");
    err
}

// Row 8: Ctrl-C in `db setup`, during initdb and during the load, stops it, removes what it
// created (the directory it made; only the contents of one it was given) and exits 130.
#[test]
fn ctrl_c_in_setup_removes_what_it_created() {
    require_root();
    let _g = busy();
    let w = workdir();
    let keep = w.path().join("keep.txt");
    std::fs::write(&keep, "user data").unwrap();
    let dir = w.path().join("pg");
    let marker = dir.join(".iogauge-pg");
    let err = interrupt_setup(&dir, || marker.exists());
    assert!(err.contains("initdb"), "{err}");
    assert!(!dir.exists(), "the directory setup made is gone");
    // Given an empty directory: interrupted while loading, the directory stays, empty.
    std::fs::create_dir(&dir).unwrap();
    let sock = socket(&dir);
    interrupt_setup(&dir, || sock.exists());
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "left in {dir:?}"
    );
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "user data");
    // And a setup afterwards works.
    db_ok(&[
        "setup",
        "--dir",
        s(&dir),
        "--schemas",
        "1",
        "--scale",
        "2000",
    ]);
    db_ok(&["drop", "--dir", s(&dir)]);
    assert!(dir.exists(), "drop keeps a directory the user made");
}

// Row 8: Ctrl-C in `db reset` while it copies: exit 130, the cluster as it was, usable.
#[test]
fn ctrl_c_in_reset_leaves_the_cluster_usable() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = w.path().join("pg");
    db_ok(&[
        "setup",
        "--dir",
        s(&dir),
        "--schemas",
        "4",
        "--scale",
        "64M",
    ]);
    let fresh = dir.join("data.new");
    let child = spawn(&["db", "reset", "--dir", s(&dir)]);
    assert!(within(30, || fresh.exists()), "reset never started copying");
    sigint(&child);
    let out = finish(child, 30);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("as it was before"), "{err}");
    assert!(!fresh.exists(), "the partial copy is removed");
    db_ok(&["run", "--dir", s(&dir), "--readers", "1", "--time", "1s"]);
    db_ok(&["reset", "--dir", s(&dir)]);
    db_ok(&["drop", "--dir", s(&dir)]);
}

// Row 16: a setup the server refuses (a bad value; a library that cannot load) removes what
// it created; a retry with good settings works. A bad value for one run keeps the cluster.
#[test]
fn failed_setup_leaves_nothing_and_a_retry_works() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = s(&dir);
    let e = fails(
        &[
            "db",
            "setup",
            "--dir",
            d,
            "--pg-set",
            "shared_buffers=bogus",
        ],
        2,
    );
    assert!(
        e.contains("--pg-set shared_buffers=bogus") && e.contains("invalid value"),
        "{e}"
    );
    assert!(!dir.exists(), "half-built cluster left: {e}");
    // Accepted by the configuration check, refused at start: a run-time failure, same cleanup.
    let e = fails(
        &[
            "db",
            "setup",
            "--dir",
            d,
            "--pg-set",
            "shared_preload_libraries=no_such_lib",
        ],
        1,
    );
    assert!(e.contains("no_such_lib"), "{e}");
    assert!(!dir.exists(), "half-built cluster left: {e}");
    db_ok(&["setup", "--dir", d, "--schemas", "1", "--scale", "2000"]);
    let conf = std::fs::read_to_string(dir.join("data").join("iogauge.conf")).unwrap();
    let e = fails(
        &[
            "db",
            "run",
            "--dir",
            d,
            "--pg-set",
            "work_mem=-5",
            "--time",
            "1s",
        ],
        2,
    );
    assert!(e.contains("--pg-set work_mem=-5"), "{e}");
    assert_eq!(
        std::fs::read_to_string(dir.join("data").join("iogauge.conf")).unwrap(),
        conf,
        "a refused setting is not left in place"
    );
    db_ok(&["run", "--dir", d, "--readers", "1", "--time", "1s"]);
    db_ok(&["drop", "--dir", d]);
}

// Row 15: `--dir` (or `--wal-dir`) naming a regular file, or a path under one.
#[test]
fn dir_that_is_a_file_is_a_usage_error() {
    let _g = shared();
    let w = workdir();
    let file = w.path().join("file");
    std::fs::write(&file, "user data").unwrap();
    let f = s(&file);
    let under = format!("{f}/sub");
    let new = w.path().join("new");
    for args in [
        vec!["db", "setup", "--dir", f],
        vec!["db", "setup", "--dir", &under],
        vec!["db", "setup", "--dir", s(&new), "--wal-dir", f],
        vec!["db", "reset", "--dir", f],
        vec!["db", "drop", "--dir", f],
    ] {
        let e = fails(&args, 2);
        assert!(
            e.contains("not a directory") && e.contains("--"),
            "{args:?}: {e}"
        );
        assert_eq!(e.matches("os error").count(), 0, "{e}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "user data");
    assert!(!new.exists());
}

// Row 15: `--pg-set` values that cannot work: one line naming the flag, exit 2, nothing left.
#[test]
fn bad_pg_set_values_are_usage_errors() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = w.path().join("pg");
    for v in [
        "foo",
        "=1",
        "x=",
        "bad name=1",
        "work_mem=1\nfsync=off",
        "listen_addresses=*",
        "unix_socket_permissions=0777",
    ] {
        let e = fails(&["db", "setup", "--dir", s(&dir), "--pg-set", v], 2);
        assert!(e.contains("--pg-set"), "{v:?}: {e}");
        assert!(!dir.exists(), "{v:?} left {dir:?}");
    }
}
