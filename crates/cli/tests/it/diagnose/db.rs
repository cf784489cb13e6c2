//! PostgreSQL bottlenecks (Debian's PostgreSQL 15, a private cluster run as `postgres`):
//! writers on a tiny in-table hot spot wait on each other's row locks; one-row updates with
//! synchronous commit wait for the WAL's fsync.

use super::assert_top;
use crate::common::*;
use serde_json::Value;

fn db(args: &[&str]) -> Value {
    let mut a = vec!["db"];
    a.extend_from_slice(args);
    json_of(&a)
}

fn setup(dir: &str) {
    succeeds(&[
        "db",
        "setup",
        "--dir",
        dir,
        "--schemas",
        "1",
        "--scale",
        "2000",
    ]);
}

#[test]
fn db_lock_bound() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = dir.to_str().unwrap();
    setup(d);
    let v = db(&[
        "run",
        "--dir",
        d,
        "--json",
        "--writers",
        "8",
        "--work-unit",
        "1",
        "--hotspot",
        "8k@0:1",
        "--time",
        "3s",
    ]);
    assert_top(&v, "db_locks", 0.3, &[]);
    succeeds(&["db", "drop", "--dir", d]);
}

#[test]
fn db_wal_bound() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = dir.to_str().unwrap();
    setup(d);
    let v = db(&[
        "run",
        "--dir",
        d,
        "--json",
        "--writers",
        "4",
        "--work-unit",
        "1",
        "--time",
        "3s",
    ]);
    assert_top(&v, "db_wal", 0.2, &[]);
    succeeds(&["db", "drop", "--dir", d]);
}
