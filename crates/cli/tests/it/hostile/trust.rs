//! The paths iogauge acts on as root, under attack (issue #25, rows 1, 2, 9, 10, 19 and the
//! tmpfs half of 22): a cluster directory another user owns and what that user can change
//! in it (the marker's `bin=` and `tablespace=`, `run/`), user files in WAL and tablespace
//! directories, one directory given twice, directories chowned or left behind, a `postgres`
//! that hangs or floods, a WAL or tablespace on tmpfs. Real PostgreSQL 15, the real `nobody`
//! through `runuser`, real symlinks and a real tmpfs; as root.
//!
//! Here the helpers the three areas share; row 1 (another user's directories and clusters) in
//! `trust/owners.rs`, rows 2, 9 and 10 (the user's own directories) in `trust/user_dirs.rs`,
//! rows 19 and 22 (a hostile `postgres`, tmpfs) in `trust/binaries.rs`; the files beside the
//! results store (issue #44 H2) in `trust/store_files.rs`.

use crate::common::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A small loaded cluster at `dir`, with `extra` flags.
fn setup(dir: &Path, extra: &[&str]) -> Output {
    let mut a = vec![
        "setup",
        "--dir",
        s(dir),
        "--schemas",
        "1",
        "--scale",
        "2000",
    ];
    a.extend_from_slice(extra);
    db_ok(&a)
}

/// Runs `sh -c cmd` as `nobody`; asserts it worked.
fn as_nobody(cmd: &str) {
    let st = Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c", cmd])
        .status()
        .expect("runuser (util-linux)");
    assert!(st.success(), "as nobody: `{cmd}` failed");
}

fn owner(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().uid()
}

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// The work directory opened to other users (0755), with `tmp`, a sticky directory anyone
/// may create in, as /tmp is.
fn public_tmp(w: &tempfile::TempDir) -> PathBuf {
    chmod(w.path(), 0o755);
    let tmp = w.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    chmod(&tmp, 0o1777);
    tmp
}

/// A bin directory at `at` of `programs` (name, shell line), each a script that first touches
/// `proof` when given (so a test sees whether it ran, and as whom: only root can create files
/// where `proof` is).
fn fake_bin(at: &Path, programs: &[(&str, &str)], proof: Option<&Path>) {
    std::fs::create_dir_all(at).unwrap();
    let touch = proof.map_or(String::new(), |p| format!("touch '{}'\n", p.display()));
    for (name, body) in programs {
        let p = at.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{touch}{body}\n")).unwrap();
        chmod(&p, 0o755);
    }
}

/// A bin directory of `engine`'s whose server answers `--version` as the suite's (PostgreSQL
/// 15, MariaDB 10.11) and whose installer (`initdb` and `pg_ctl`; `mariadb-install-db`) runs
/// `install`; each touches `proof` when given.
fn fake_server_bin(engine: Engine, at: &Path, install: &str, proof: Option<&Path>) {
    let programs = match engine {
        Engine::Postgres => vec![
            ("initdb", install),
            ("pg_ctl", install),
            ("postgres", "echo 'postgres (PostgreSQL) 15.0'"),
        ],
        Engine::Mariadb => vec![
            (
                "mariadbd",
                "echo 'mariadbd  Ver 10.11.0-MariaDB for debian-linux-gnu'",
            ),
            ("mariadb-install-db", install),
        ],
    };
    fake_bin(at, &programs, proof);
}

/// A directory only root may write to, holding `keep.txt`: what must survive an attack.
fn roots_dir(at: &Path) -> PathBuf {
    std::fs::create_dir_all(at).unwrap();
    chmod(at, 0o755);
    std::fs::write(at.join("keep.txt"), "root's").unwrap();
    at.to_path_buf()
}

mod binaries;
mod campaigns;
mod maria;
mod owners;
mod servers;
mod store_files;
mod user_dirs;
