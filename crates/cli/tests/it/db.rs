//! `iogauge db` end to end on a real private PostgreSQL (run as the `postgres` user, which the
//! harness requires: tests run as root): setup, read and write runs with the database's own
//! layers in JSON, the page cache limited by a memory cgroup, show/history, Ctrl-C, reset,
//! drop, and the errors.
//!
//! Here the helpers the areas share; a cluster's life in `db/lifecycle.rs`, PostgreSQL 15
//! and 18 in `db/versions.rs`, tablespaces and the hot spot in `db/placement.rs`, mistakes
//! in `db/errors.rs`.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

fn db(args: &[&str]) -> std::process::Output {
    bin()
        .arg("db")
        .args(args)
        .output()
        .expect("spawn iogauge db")
}

fn ok(args: &[&str]) -> std::process::Output {
    let out = db(args);
    assert!(
        out.status.success(),
        "db {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn run_json(dir: &str, extra: &[&str]) -> (Value, i64) {
    let mut a = vec!["run", "--dir", dir, "--json", "--interval", "500ms"];
    a.extend_from_slice(extra);
    let out = ok(&a);
    (
        serde_json::from_slice(&out.stdout).expect("JSON on stdout"),
        stored_id(&out.stderr),
    )
}

/// No process has the cluster's data directory as its working directory (the postmaster
/// and every backend chdir there).
fn server_gone(dir: &Path) -> bool {
    let data = dir.join("data").canonicalize().unwrap_or(dir.join("data"));
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path().join("cwd")).ok())
        .all(|cwd| cwd != data)
}

mod errors;
mod lifecycle;
mod mariadb;
mod placement;
mod versions;
