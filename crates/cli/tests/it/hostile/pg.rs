//! PostgreSQL's own under attack (issue #14, rows 6, 8, 15, 16): an older cluster open to
//! everyone closed at its next start, Ctrl-C in `db reset`'s file-level copy (MariaDB's
//! reset reloads its tables: no copy to interrupt), a setup the server refuses, and bad
//! `--dir`, `--wal-dir` and `--pg-set` values (PostgreSQL's flags; with --engine mariadb
//! they are refused, `db/errors.rs`). What both engines share is `hostile/db.rs`'s. Real
//! PostgreSQL 15; as root.

use super::db::{hba_rules, pg_closed_to_others};
use crate::common::*;

// Row 6: a cluster made by an older iogauge (trust for everyone, an open socket directory)
// is closed in place at its next start, its data kept.
#[test]
fn an_older_open_cluster_is_closed_at_its_next_start() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let db = Db::new(&w, Engine::Postgres);
    let dir = &db.setup_small().dir;
    let hba = dir.join("data").join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\nhost all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    chmod(&dir.join("run"), 0o777);
    let run = db.run_in_background("8s");
    assert_eq!(hba_rules(dir), ["local all all peer map=iogauge"]);
    assert_eq!(mode(&dir.join("run")), 0o700, "socket directory");
    pg_closed_to_others(&db);
    let out = finish(run, 60);
    assert_success(&out);
    db.drop_it();
}

// Row 8: Ctrl-C in `db reset` while it copies: exit 130, the cluster as it was, usable.
#[test]
fn ctrl_c_in_reset_leaves_the_cluster_usable() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let db = Db::new(&w, Engine::Postgres);
    db.setup(&["--schemas", "4", "--scale", "64M"]);
    let fresh = db.dir.join("data.new");
    let child = db.spawn("reset", &[]);
    assert!(within(30, || fresh.exists()), "reset never started copying");
    sigint(&child);
    let out = finish(child, 30);
    stopped(&out, &["as it was before"]);
    assert!(!fresh.exists(), "the partial copy is removed");
    db.runs();
    db.ok("reset", &[]);
    db.drop_it();
}

// Row 16: a setup the server refuses (a bad value; a library that cannot load) removes what
// it created; a retry with good settings works. A bad value for one run keeps the cluster.
#[test]
fn failed_setup_leaves_nothing_and_a_retry_works() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let db = Db::new(&w, Engine::Postgres);
    let dir = &db.dir;
    let e = db.fails("setup", &["--pg-set", "shared_buffers=bogus"], 2);
    assert!(
        e.contains("--pg-set shared_buffers=bogus") && e.contains("invalid value"),
        "{e}"
    );
    assert!(!dir.exists(), "half-built cluster left: {e}");
    // Accepted by the configuration check, refused at start: a run-time failure, same cleanup.
    let no_lib = ["--pg-set", "shared_preload_libraries=no_such_lib"];
    let e = db.fails("setup", &no_lib, 1);
    assert!(e.contains("no_such_lib"), "{e}");
    assert!(!dir.exists(), "half-built cluster left: {e}");
    db.setup_small();
    let conf = || std::fs::read_to_string(dir.join("data").join("iogauge.conf")).unwrap();
    let before = conf();
    let e = db.fails("run", &["--pg-set", "work_mem=-5", "--time", "1s"], 2);
    assert!(e.contains("--pg-set work_mem=-5"), "{e}");
    assert_eq!(conf(), before, "a refused setting is not left in place");
    db.runs();
    db.drop_it();
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
    let (_g, w) = db_test(Engine::Postgres, busy);
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
