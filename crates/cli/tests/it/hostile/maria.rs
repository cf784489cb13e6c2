//! The private MariaDB under the attacks the private PostgreSQL is tested with
//! (`hostile/db.rs`): other local users cannot get in, the server dies with a killed iogauge,
//! Ctrl-C in setup removes what it made, a DSN's password is never echoed, other servers'
//! temporary files are left alone. Debian's MariaDB,
//! real `runuser`, real signals; as root.

use super::db::{chmod, mode, s, server_procs, within};
use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::Duration;

/// `db ARGS --engine mariadb`, which must succeed.
fn db_ok(args: &[&str]) -> Output {
    super::db::db_ok(&[args, &["--engine", "mariadb"]].concat())
}

/// A small loaded private MariaDB in a fresh work directory.
fn small_server(w: &tempfile::TempDir) -> PathBuf {
    let dir = w.path().join("maria");
    db_ok(&[
        "setup",
        "--dir",
        s(&dir),
        "--schemas",
        "1",
        "--scale",
        "16M",
    ]);
    dir
}

fn socket(dir: &Path) -> PathBuf {
    dir.join("run").join("mysqld.sock")
}

/// Starts `db run --engine mariadb` on `dir` and waits until its server listens.
fn run_in_background(dir: &Path, secs: &str) -> Child {
    let child = spawn(&[
        "db",
        "run",
        "--engine",
        "mariadb",
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

#[test]
fn other_local_users_cannot_connect_to_a_private_mariadb() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = small_server(&w);
    let run = run_in_background(&dir, "8s");
    let (rund, sock) = (dir.join("run"), socket(&dir));
    assert_eq!(mode(&rund), 0o700, "socket directory");
    let (ok, err) = maria_client(Some("nobody"), "root", &sock, "SELECT 1");
    assert!(
        !ok && err.contains("(13"),
        "the socket's directory must refuse: {err}"
    );
    // Past the directories' permissions, the unix_socket plugin still refuses: the kernel
    // says the peer is `nobody`, not root, and no account has a password.
    assert_eq!(mode(&dir), 0o700, "the server's directory");
    chmod(&dir, 0o755);
    chmod(&rund, 0o755);
    chmod(&sock, 0o777);
    for user in ["root", "nobody", "mysql", "mariadb.sys"] {
        let (ok, err) = maria_client(Some("nobody"), user, &sock, "SELECT 1");
        assert!(!ok && err.contains("Access denied"), "{user}: {err}");
    }
    // No TCP at all; iogauge's own account gets in.
    let (ok, out) = maria_client(None, "root", &sock, "SELECT @@skip_networking");
    assert!(ok && out.trim() == "1", "{out}");
    chmod(&rund, 0o700);
    chmod(&dir, 0o700);
    let out = finish(run, 60);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    db_ok(&["drop", "--dir", s(&dir)]);
}

/// A starting MariaDB deletes every `#sql*` file in its tmpdir (temporary tables a crash
/// left). With /tmp as its tmpdir a private server deleted other servers' temporary tables,
/// and two ranks' servers bootstrapping at once each other's (`mariadb-install-db` failed with
/// "Can't find file: '/tmp/#sql-temptable-…'" in 2 of 6 tries): its tmpdir is its own.
#[test]
fn a_private_mariadb_leaves_other_servers_temporary_files_alone() {
    require_root();
    let _g = busy();
    let w = workdir();
    let other = std::env::temp_dir().join(format!(
        "#sql-temptable-iogauge-test-{}.MAI",
        std::process::id()
    ));
    std::fs::write(&other, "another server's temporary table").unwrap();
    let dir = small_server(&w);
    let run = run_in_background(&dir, "3s");
    let (ok, tmpdir) = maria_client(None, "root", &socket(&dir), "SELECT @@tmpdir");
    let out = finish(run, 60);
    let kept = other.exists();
    let _ = std::fs::remove_file(&other);
    assert!(
        kept,
        "setting up and starting the server deleted {}",
        other.display()
    );
    assert!(
        ok && Path::new(tmpdir.trim()).starts_with(&dir),
        "the server's tmpdir is not in its directory: {tmpdir}"
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    db_ok(&["drop", "--dir", s(&dir)]);
}

#[test]
fn killed_db_run_takes_its_mariadb_along() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = small_server(&w);
    let mut run = run_in_background(&dir, "60s");
    std::thread::sleep(Duration::from_secs(2));
    run.kill().unwrap();
    run.wait().unwrap();
    assert!(
        within(10, || server_procs(&dir).is_empty()),
        "mariadbd still running after iogauge was killed: {:?}",
        server_procs(&dir)
    );
    // InnoDB recovers at the next start: the next run works.
    let out = db_ok(&["run", "--dir", s(&dir), "--readers", "1", "--time", "1s"]);
    stored_id(&out.stderr);
    db_ok(&["drop", "--dir", s(&dir)]);
    assert!(!dir.exists());
}

#[test]
fn ctrl_c_in_mariadb_setup_removes_what_it_made() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = w.path().join("maria");
    // Given an empty directory, interrupted while loading: the directory stays, empty.
    std::fs::create_dir(&dir).unwrap();
    let sock = socket(&dir);
    let child = spawn(&[
        "db",
        "setup",
        "--engine",
        "mariadb",
        "--dir",
        s(&dir),
        "--schemas",
        "4",
        "--scale",
        "256M",
    ]);
    assert!(
        within(60, || sock.exists()),
        "setup never started its server"
    );
    std::thread::sleep(Duration::from_millis(500));
    sigint(&child);
    let out = finish(child, 60);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("removed again"), "{err}");
    assert!(server_procs(&dir).is_empty(), "a server outlived Ctrl-C");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "left in {dir:?}"
    );
    // And a setup afterwards works; drop keeps the directory the user made.
    db_ok(&[
        "setup",
        "--dir",
        s(&dir),
        "--schemas",
        "1",
        "--scale",
        "16M",
    ]);
    db_ok(&["drop", "--dir", s(&dir)]);
    assert!(dir.exists(), "drop keeps a directory the user made");
}

#[test]
fn mariadb_dsn_passwords_are_never_echoed() {
    let _g = shared();
    for args in [
        vec![
            "db",
            "run",
            "--dsn",
            "mysql://bench:secretpw@127.0.0.1:1/db",
            "--readers",
            "1",
        ],
        vec![
            "db",
            "setup",
            "--dsn",
            "mysql://bench:secretpw@127.0.0.1:1/db",
        ],
        vec![
            "db",
            "drop",
            "--dsn",
            "mariadb://bench:secretpw@127.0.0.1:1/db",
        ],
        vec!["db", "run", "--dsn", "mysql://bench:secretpw@h:notaport/db"],
    ] {
        let out = bin().args(&args).output().unwrap();
        let all = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {all}");
        assert!(!all.contains("secretpw"), "{args:?}: {all}");
        assert!(
            all.contains("***") || all.contains("bench@"),
            "{args:?}: {all}"
        );
    }
}
