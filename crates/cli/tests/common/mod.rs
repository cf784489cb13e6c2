//! Shared helpers for the integration tests: the real binary, work directories on the disk
//! that holds `target/` (ext4 here, O_DIRECT-capable), and root-only fixtures.

#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

use std::sync::{Mutex, MutexGuard};

/// Timing-sensitive tests take this so they do not share the disk with each other.
static HEAVY: Mutex<()> = Mutex::new(());

pub fn heavy() -> MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|p| p.into_inner())
}

/// The results store every test run writes to (never the user's own).
pub fn test_store() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-results.sqlite")
}

pub fn bin() -> Command {
    let mut c = Command::cargo_bin("iogauge").expect("the iogauge binary is built");
    c.env("IOGAUGE_STORE", test_store());
    c
}

/// Starts `iogauge ARGS` in the background with stdout and stderr captured.
pub fn spawn(args: &[&str]) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("iogauge"))
        .env("IOGAUGE_STORE", test_store())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn iogauge")
}

/// Sends SIGINT (Ctrl-C) to a child.
pub fn sigint(child: &std::process::Child) {
    // SAFETY: plain kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}

/// A fresh directory on the disk under test (not /tmp, which may be tmpfs elsewhere).
pub fn workdir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir under target/")
}

/// Runs `iogauge run ARGS --json`, asserts success, returns the parsed JSON.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = bin()
        .arg("run")
        .args(args)
        .arg("--json")
        .output()
        .expect("spawn iogauge");
    assert!(
        out.status.success(),
        "iogauge run {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// Runs `iogauge run ARGS`, expects failure with `code`, and returns stderr, checking it is
/// exactly one line and not a panic.
pub fn run_fails(args: &[&str], code: i32) -> String {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    fails(&all, code)
}

/// Runs `iogauge ARGS`, expects failure with `code`, and returns stderr, checking it is
/// exactly one `error:` line and not a panic.
pub fn fails(args: &[&str], code: i32) -> String {
    let out = bin().args(args).output().expect("spawn iogauge");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(code),
        "iogauge {args:?}: wrong exit code; stderr: {err}"
    );
    assert!(!err.contains("panicked"), "panic: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "error must be one line: {err:?}"
    );
    assert!(err.starts_with("error:"), "{err}");
    err
}

/// Several tests mount filesystems or set sysctls: they need root, and say so loudly
/// (CI runs as root; a silent skip would hide the missing check).
pub fn require_root() {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    assert_eq!(
        uid, 0,
        "this test needs root (mounts, chattr, sysctl); run the suite as root"
    );
}

pub fn sh(cmd: &str) {
    let st = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .status()
        .expect("sh");
    assert!(st.success(), "`{cmd}` failed");
}

/// A loop device over an image file, detached when dropped.
pub struct Loop(pub String);

impl Loop {
    pub fn new(image: &Path) -> Loop {
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .arg(image)
            .output()
            .expect("losetup (util-linux) is installed");
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Loop(String::from_utf8(out.stdout).unwrap().trim().to_string())
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

/// A mount that is undone when dropped.
pub struct Mount(pub PathBuf);

impl Mount {
    pub fn new(dir: &Path, fstype: &str, opts: &str) -> Mount {
        std::fs::create_dir_all(dir).unwrap();
        sh(&format!(
            "mount -t {fstype} -o {opts} {fstype} '{}'",
            dir.display()
        ));
        Mount(dir.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

pub fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// The id in iogauge's "stored as run N in …" line.
pub fn stored_id(stderr: &[u8]) -> i64 {
    let err = String::from_utf8_lossy(stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("stored as run "))
        .unwrap_or_else(|| panic!("no id: {err}"));
    line["stored as run ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Renders `page` in real headless Chromium to a PNG beside it and returns the page's console
/// messages (Chromium logs console output, uncaught exceptions and its complaints about the
/// page, such as a bad SVG attribute, as `…:CONSOLE:…` lines on stderr; the rest of its
/// stderr is the browser's own noise). A missing Chromium fails loudly.
pub fn chromium_console(page: &Path) -> Vec<String> {
    let bin = Path::new("/usr/bin/chromium");
    assert!(
        bin.exists(),
        "/usr/bin/chromium is missing: the report is checked in a real browser; apt-get install -y chromium"
    );
    let png = page.with_extension("png");
    let out = std::process::Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
        ])
        .args(["--enable-logging=stderr", "--v=0", "--hide-scrollbars"])
        .arg(format!(
            "--user-data-dir={}",
            page.with_extension("profile").display()
        ))
        .arg("--window-size=1400,3000")
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("start chromium");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {err}");
    let bytes = std::fs::read(&png).expect("chromium wrote no screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000,
        "screenshot of {} is {} bytes",
        page.display(),
        bytes.len()
    );
    err.lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(String::from)
        .collect()
}
