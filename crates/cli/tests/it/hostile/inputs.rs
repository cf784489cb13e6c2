//! Inputs and paths under attack (issue #25, rows 8, 11, 12, 13, 14, 15, 17, 18, 20, 21; issue
//! #44 M1, L3 and L9): output paths on /proc or a read-only mount, the kernel's filesystems as
//! targets, empty and malformed values, and results stores that are read-only, full or nearly
//! full, missing, damaged, a link to a user's file, or on a path the kernel or a file blocks.
//! Every refusal is exit 2 with one `error:` line, before anything is done (a full store's
//! is exit 1: the system, not the command line).
//!
//! Here the helpers the areas share; output paths in `inputs/outputs.rs`, the kernel's
//! filesystems in `inputs/kernel.rs`, values in `inputs/values.rs`, stores in
//! `inputs/stores.rs`, a store on a nearly full filesystem in `inputs/full.rs`, what messages
//! and listings echo back in `inputs/echoes.rs` (issue #44).

use crate::common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `iogauge ARGS` on `store`: (exit code, stdout, stderr).
fn on(store: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = command()
        .env("IOGAUGE_STORE", store)
        .args(args)
        .output()
        .expect("spawn iogauge");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// Exit 2 with one `error:` line (no panic) on `store`; returns the line.
fn refused_on(store: &Path, args: &[&str]) -> String {
    let (code, _, err) = on(store, args);
    assert_eq!(code, Some(2), "iogauge {args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

/// A run of 200 I/Os on a 4 MiB file of `d`, stored in `store`; returns its id.
fn stored_run(d: &Path, store: &Path) -> i64 {
    let t = d.join("t").display().to_string();
    let (code, _, err) = on(
        store,
        &["run", "--target", &t, "--size", "4m", "--ios", "200"],
    );
    assert_eq!(code, Some(0), "{err}");
    stored_id(err.as_bytes())
}

/// `src` bound read-only at `dst` (a real bind mount), undone when dropped.
struct ReadOnlyBind(PathBuf);

impl ReadOnlyBind {
    fn new(src: &Path, dst: &Path) -> ReadOnlyBind {
        require_root();
        std::fs::create_dir_all(dst).unwrap();
        sh(&format!(
            "mount --bind '{}' '{}'",
            src.display(),
            dst.display()
        ));
        let bind = ReadOnlyBind(dst.to_path_buf());
        sh(&format!("mount -o remount,bind,ro '{}'", dst.display()));
        bind
    }
}

impl Drop for ReadOnlyBind {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// `iogauge ARGS` as `nobody` (a real other user, through runuser): (code, stdout, stderr).
fn as_nobody(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .arg(exe())
        .args(args)
        .env_remove("IOGAUGE_STORE")
        .stdin(Stdio::null())
        .output()
        .expect("runuser");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// Where a cgroup filesystem (v2, or a v1 hierarchy) is mounted, from /proc/mounts (/sys/fs/
/// cgroup itself is a tmpfs on a v1 machine).
fn cgroup_mount() -> PathBuf {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    mounts
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 2 && (f[2] == "cgroup2" || f[2] == "cgroup"))
        .map(|f| PathBuf::from(f[1]))
        .expect("a cgroup filesystem is mounted")
}

mod echoes;
mod full;
mod kernel;
mod outputs;
mod stores;
mod values;
