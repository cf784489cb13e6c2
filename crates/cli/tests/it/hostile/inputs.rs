//! Inputs and paths under attack (issue #25, rows 8, 11, 12, 13, 14, 15, 17, 18, 20, 21):
//! output paths on /proc or a read-only mount, the kernel's filesystems as targets, empty and
//! malformed values, and results stores that are read-only, full, missing, damaged or a link
//! to a user's file. Every refusal is exit 2 with one `error:` line, before anything is done.

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

// Row 8: an output directory on /proc or a read-only mount was found after the whole
// calibration (exit 1); now exit 2 before the target is even created.
#[test]
fn output_paths_that_cannot_be_written_are_refused_before_measuring() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let target = d.path().join("t");
    let t = target.display().to_string();
    let calibrate = |csv: &str| {
        refused_on(
            &store,
            &[
                "calibrate",
                "--target",
                &t,
                "--size",
                "4m",
                "--matrix",
                "point",
                "--num-small",
                "1",
                "--num-large",
                "1",
                "--csv",
                csv,
            ],
        )
    };
    let err = calibrate("/proc/x");
    assert!(
        err.contains("--csv /proc/x") && err.contains("proc"),
        "{err}"
    );
    let ro = d.path().join("ro");
    let _m = Mount::new(&ro, "tmpfs", "ro,size=1m");
    for csv in [ro.clone(), ro.join("new")] {
        let err = calibrate(&csv.display().to_string());
        assert!(err.contains("read-only filesystem"), "{err}");
    }
    // The one check serves every output path: `report -o` and `export -o` on the mount.
    let out = ro.join("r.html").display().to_string();
    let err = refused_on(&store, &["report", "1", "-o", &out]);
    assert!(
        err.contains("-o ") && err.contains("read-only filesystem"),
        "{err}"
    );
    let err = refused_on(
        &store,
        &["export", "--campaign", "c", "--format", "csv", "-o", &out],
    );
    assert!(err.contains("read-only filesystem"), "{err}");
    assert!(
        !target.exists(),
        "nothing was measured: the target was never made"
    );
    assert!(!store.exists(), "nor the store");
}

// Row 11: stdout closed after the result was stored: the OS error once, not twice.
#[test]
fn a_closed_stdout_after_storing_says_its_cause_once() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let t = d.path().join("t").display().to_string();
    let mut child = command()
        .env("IOGAUGE_STORE", &store)
        .args([
            "run", "--target", &t, "--size", "4m", "--ios", "200", "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iogauge");
    drop(child.stdout.take()); // the reader goes away before the result is written
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("os error 32").count(), 1, "{err}");
    assert_eq!(err.matches("Broken pipe").count(), 1, "{err}");
    assert!(err.contains("the run is stored as run 1"), "{err}");
}

// Row 11: a stored document damaged by hand: exit 2 naming the run and the way out; the
// other runs still show.
#[test]
fn a_damaged_document_is_named_with_the_way_out() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let good = stored_run(d.path(), &store);
    let bad = stored_run(d.path(), &store);
    let st = Command::new("sqlite3")
        .arg(&store)
        .arg(format!(
            "UPDATE runs SET document = '{{\"kind\": \"run\", broken' WHERE id = {bad}"
        ))
        .status()
        .expect("sqlite3 is installed");
    assert!(st.success());
    let id = bad.to_string();
    for args in [vec!["show", &id], vec!["report", &id]] {
        let err = refused_on(&store, &args);
        assert!(err.contains(&format!("run {bad} cannot be read")), "{err}");
        assert!(err.contains("`iogauge history`"), "{err}");
    }
    let (code, out, err) = on(&store, &["show", &good.to_string()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("iogauge run"), "{out}");
}

// Rows 11 and 20: a cluster's directories on /proc, /sys or cgroupfs: exit 2 up front.
#[test]
fn db_places_on_kernel_filesystems_are_usage_errors() {
    let _g = shared();
    let d = workdir();
    let dir = d.path().join("pg").display().to_string();
    let err = refused_on(
        &d.path().join("s"),
        &["db", "setup", "--dir", &dir, "--target", "/proc/ts"],
    );
    assert!(
        err.contains("--target /proc/ts") && err.contains("proc"),
        "{err}"
    );
    let cg = cgroup_mount().join("iogauge-pg");
    let cgs = cg.display().to_string();
    let err = refused_on(&d.path().join("s"), &["db", "setup", "--dir", &cgs]);
    assert!(err.contains(&format!("--dir {cgs}: on cgroup")), "{err}");
    let err = refused_on(
        &d.path().join("s"),
        &["db", "setup", "--dir", &dir, "--wal-dir", "/sys/kernel/w"],
    );
    assert!(err.contains("--wal-dir /sys/kernel/w: on sysfs"), "{err}");
    let err = refused_on(
        &d.path().join("s"),
        &["db", "run", "--dir", "/proc/iogauge-pg"],
    );
    assert!(err.contains("--dir /proc/iogauge-pg"), "{err}");
    assert!(!Path::new(&dir).exists() && !cg.exists());
}

// Row 12: empty values (an empty argument, a stray comma, a flag taken for a value) ended in
// "accepted values are " and nothing.
#[test]
fn empty_values_name_the_flag() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    for (args, want) in [
        (vec!["run", "--target", ""], "error: --target: empty path"),
        (vec!["run", "--target", ","], "error: --target: empty path"),
        (vec!["run", "--target", "a,"], "error: --target: empty path"),
        (
            vec!["calibrate", "--target", "a,,b"],
            "error: --target: empty path",
        ),
        (
            vec!["db", "setup", "--target", "a,"],
            "error: --target: empty path",
        ),
        (
            vec!["calibrate", "--csv", ""],
            "error: --csv: no value; give DIR",
        ),
        (
            vec!["run", "--label", "--allow-overwrite"],
            "error: --label: no value",
        ),
    ] {
        let err = refused_on(&s, &args);
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert!(!err.contains("accepted values are"), "{err}");
    }
    let c = d.path().join("c.toml");
    std::fs::write(
        &c,
        "command = \"run\"\n[options]\nlabel = \"--allow-overwrite\"\n",
    )
    .unwrap();
    let err = refused_on(&s, &["campaign", &c.display().to_string(), "--dry-run"]);
    assert!(
        err.contains("options.label = \"--allow-overwrite\": a value may not start with '-'"),
        "{err}"
    );
}

// Row 13: the ceiling of the exact figure, not 600 disks fewer.
#[test]
fn the_largest_plan_is_exact() {
    let _g = shared();
    let d = workdir();
    let (code, out, err) = on(
        &d.path().join("s"),
        &[
            "plan",
            "--iops",
            "1e9",
            "--read-pct",
            "0",
            "--redundancy",
            "raid6",
            "--disk-iops",
            "1",
            "--target-util",
            "1%",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("disks        600000000000 (600000000000.0)"),
        "{out}"
    );
    assert!(out.contains("needs 600000000000 disks"), "{out}");
}

// Row 14: a store on a read-only bind mount is read; a run on it is refused naming the cause.
#[test]
fn a_store_on_a_read_only_mount_is_read_and_not_written() {
    let _g = shared();
    let d = workdir();
    let src = d.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let id = stored_run(d.path(), &src.join("s.sqlite")).to_string();
    // A copy whose write-ahead log holds a change (kept by SQLite's persist_wal), without the
    // shared-memory file a reader needs to make to read it.
    let logged = src.join("w.sqlite");
    std::fs::copy(src.join("s.sqlite"), &logged).unwrap();
    let st = Command::new("sqlite3")
        .arg(&logged)
        .args([".filectrl persist_wal 1", "CREATE TABLE x (y);"])
        .stdout(Stdio::null())
        .status()
        .expect("sqlite3 is installed");
    assert!(st.success());
    std::fs::remove_file(src.join("w.sqlite-shm")).unwrap();
    assert!(std::fs::metadata(src.join("w.sqlite-wal")).unwrap().len() > 32);
    let ro = d.path().join("ro");
    let _m = ReadOnlyBind::new(&src, &ro);
    let store = ro.join("s.sqlite");
    let (code, out, err) = on(&store, &["history"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&d.path().join("t").display().to_string()),
        "{out}"
    );
    for args in [vec!["show", &id], vec!["compare", &id, &id]] {
        let (code, _, err) = on(&store, &args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
    let html = d.path().join("r.html").display().to_string();
    let (code, _, err) = on(&store, &["report", &id, "-o", &html]);
    assert_eq!(code, Some(0), "{err}");
    let t = d.path().join("t").display().to_string();
    let err = refused_on(&store, &["run", "--target", &t, "--ios", "10"]);
    assert!(err.contains("is on a read-only filesystem"), "{err}");
    assert!(
        !err.contains("Error code"),
        "SQLite's words add nothing: {err}"
    );
    // Unreadable without writing beside it: the cause and the way out, exit 1.
    let (code, _, err) = on(&ro.join("w.sqlite"), &["history"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("is on a read-only filesystem, and its write-ahead log"),
        "{err}"
    );
    assert!(err.contains("copy the store and its -wal file"), "{err}");
    assert!(!err.contains("Error code"), "{err}");
}

// Row 14: another user's store (root's 0644 file), read as nobody; in a sticky directory
// anyone may write to (as /tmp), where files nobody left beside it would block its owner.
#[test]
fn another_users_store_is_read_as_nobody() {
    let _g = shared();
    let d = workdir();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let store = d.path().join("s.sqlite");
    let id = stored_run(d.path(), &store).to_string();
    let before = std::fs::read_dir(d.path()).unwrap().count();
    let s = store.display().to_string();
    let (code, out, err) = as_nobody(&["history", "--store", &s]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&d.path().join("t").display().to_string()),
        "{out}"
    );
    let (code, _, err) = as_nobody(&["show", &id, "--store", &s]);
    assert_eq!(code, Some(0), "{err}");
    // Refused before measuring (SQLite opened the file read-only without a word, and the
    // run failed only when it was stored).
    let t = d.path().join("t2").display().to_string();
    let (code, _, err) = as_nobody(&[
        "run", "--ios", "1", "--size", "4m", "--target", &t, "--store", &s,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is not writable by this user"), "{err}");
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        before,
        "nothing made"
    );
}

// Row 14: a store on a full filesystem (a small tmpfs filled up) is read; a run names the
// cause.
#[test]
fn a_store_on_a_full_filesystem_is_read() {
    let _g = shared();
    let d = workdir();
    let id = stored_run(d.path(), &d.path().join("s.sqlite")).to_string();
    let full = d.path().join("full");
    let _m = Mount::new(&full, "tmpfs", "size=1m");
    let store = full.join("s.sqlite");
    std::fs::copy(d.path().join("s.sqlite"), &store).unwrap();
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=4k"])
        .arg(format!("of={}", full.join("fill").display()))
        .stderr(Stdio::null())
        .status();
    let (code, out, err) = on(&store, &["show", &id]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("iogauge run"), "{out}");
    let (code, _, err) = on(&store, &["history"]);
    assert_eq!(code, Some(0), "{err}");
    let t = d.path().join("t").display().to_string();
    let (code, _, err) = on(&store, &["run", "--target", &t, "--ios", "10"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is full; free space there"), "{err}");
    assert!(!err.contains("xShmMap"), "{err}");
}

// Row 15: a 300-character campaign name reached a file name (exit 1, "File name too long").
#[test]
fn a_campaign_name_has_a_length_limit() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    let c = d.path().join("c.toml");
    let long = "n".repeat(300);
    std::fs::write(&c, format!("command = \"run\"\nname = \"{long}\"\n")).unwrap();
    let file = c.display().to_string();
    let err = refused_on(&s, &["campaign", &file]);
    assert!(err.contains("a name has at most 100 characters"), "{err}");
    std::fs::write(&c, "command = \"run\"\n").unwrap();
    let err = refused_on(&s, &["campaign", &file, "--name", &long, "--dry-run"]);
    assert!(
        err.contains("--name") && err.contains("at most 100 characters"),
        "{err}"
    );
}

// Row 17: what is wrong and the accepted form, for every integer flag and number part.
#[test]
fn numbers_say_what_is_wrong_and_the_accepted_form() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    for (args, want) in [
        (
            vec!["run", "--bs", "4k:99.5,8k:0.5"],
            "'4k:99.5': a share is a whole percentage from 0 to 100, as in 8k:90,1m:10",
        ),
        (
            vec!["run", "--qd", "1e1"],
            "not written in decimal digits (no sign, point, exponent or 0x); give a whole number from 1 to 4096",
        ),
        (vec!["run", "--seed", "0x10"], "give a whole number from 0 to 18446744073709551615"),
        (
            vec!["run", "--seed", "18446744073709551616"],
            "above 18446744073709551615; give a whole number from 0 to 18446744073709551615",
        ),
        (
            vec!["run", "--dist", "hotspot:64m@0:18446744073709551616"],
            "hotspot frequency '18446744073709551616': above 4294967295",
        ),
        (
            vec!["db", "run", "--hotspot", "64M@0:18446744073709551616"],
            "EVERY is above 4294967295",
        ),
        (vec!["calibrate", "--disks", "2.0"], "give a whole number from 1 to 1024"),
        (vec!["show", "1e1"], "give a whole number from 1 to 9223372036854775807"),
    ] {
        let err = refused_on(&s, &args);
        assert!(err.contains(want), "{args:?}: {err}");
        for rust in ["invalid digit", "too large to fit", "is not a percentage from"] {
            assert!(!err.contains(rust), "{err}");
        }
    }
}

// Row 18: three dots were read as 0%..0.5% and 1ms..0.5ms.
#[test]
fn ranges_with_three_dots_are_refused() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    for args in [
        vec!["run", "--region", "0%...50%"],
        vec!["calibrate", "--region", "0%...50%"],
        vec!["db", "run", "--think-time", "1ms...5ms"],
    ] {
        let err = refused_on(&s, &args);
        assert!(
            err.contains("more than two dots between its ends"),
            "{args:?}: {err}"
        );
    }
}

// Row 20: iogauge wrote 4 KiB to a sysfs attribute. Refused first on a read-only attribute
// (harmless even if the check failed), then the reported command, the value unchanged.
#[test]
fn kernel_filesystems_are_never_targets() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    let attempt = |target: &str, extra: &[&str]| {
        let mut args = vec!["run", "--target", target, "--buffered", "--allow-overwrite"];
        args.extend_from_slice(&["--size", "4k", "--bs", "4k", "--ios", "1"]);
        args.extend_from_slice(extra);
        let err = refused_on(&s, &args);
        assert!(err.contains("the kernel's interface, not storage"), "{err}");
        err
    };
    let harmless = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size";
    let err = attempt(harmless, &["--rw", "randwrite"]);
    assert!(err.contains("sysfs"), "{err}");
    let thp = "/sys/kernel/mm/transparent_hugepage/enabled";
    let before = std::fs::read_to_string(thp).unwrap();
    let args = [
        "run",
        "--target",
        thp,
        "--buffered",
        "--allow-overwrite",
        "--size",
        "4k",
        "--bs",
        "4k",
    ];
    let err = refused_on(&s, &args);
    assert!(err.contains("sysfs"), "{err}");
    assert_eq!(std::fs::read_to_string(thp).unwrap(), before);
    // An existing file of procfs, and a new one in a cgroup filesystem (never made).
    let cg = cgroup_mount().join("iogauge-target");
    for (target, fs) in [
        ("/proc/version".to_string(), "proc"),
        (cg.display().to_string(), "cgroup"),
    ] {
        let err = attempt(&target, &[]);
        assert!(err.contains(fs), "{err}");
    }
    assert!(!cg.exists());
    let err = refused_on(
        &s,
        &[
            "calibrate",
            "--target",
            harmless,
            "--buffered",
            "--size",
            "4k",
            "--block",
            "4k",
            "--large-block",
            "4k",
        ],
    );
    assert!(err.contains("sysfs"), "{err}");
}

// Row 21: a store path that is a link to a user's empty file turned the file into a store;
// readers created a store where there was none.
#[test]
fn a_link_to_a_users_file_is_never_made_a_store() {
    let _g = shared();
    let d = workdir();
    let theirs = d.path().join("notes");
    std::fs::write(&theirs, "").unwrap();
    sh(&format!("chown nobody '{}'", theirs.display()));
    let link = d.path().join("s.sqlite");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    let t = d.path().join("t").display().to_string();
    let err = refused_on(
        &link,
        &["run", "--target", &t, "--size", "4m", "--ios", "10"],
    );
    assert!(
        err.contains("a symbolic link to") && err.contains("an empty file"),
        "{err}"
    );
    let err = refused_on(&link, &["history"]);
    assert!(err.contains("not an iogauge results store"), "{err}");
    let m = std::fs::metadata(&theirs).unwrap();
    assert_eq!(
        (m.len(), m.uid()),
        (0, 65534),
        "the user's file is as it was"
    );
    assert!(!Path::new(&t).exists(), "nothing measured");
    // An empty file at the path itself is refused the same way.
    std::fs::remove_file(&link).unwrap();
    std::fs::write(&link, "").unwrap();
    let err = refused_on(
        &link,
        &["run", "--target", &t, "--size", "4m", "--ios", "10"],
    );
    assert!(err.contains("an empty file"), "{err}");
}

// Row 21: readers never create a store (nor its directory).
#[test]
fn readers_never_create_a_store() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("none/s.sqlite");
    let missing = d.path().join("s.sqlite");
    let (code, out, err) = on(&missing, &["history"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("no stored runs (no results store at"), "{out}");
    let (code, out, _) = on(&missing, &["history", "--json"]);
    assert_eq!((code, out.trim()), (Some(0), "[]"));
    for args in [
        vec!["show", "1"],
        vec!["compare", "1", "2"],
        vec!["report", "1"],
    ] {
        let err = refused_on(&missing, &args);
        assert!(
            err.contains("does not exist, so nothing is stored there yet"),
            "{err}"
        );
    }
    let err = refused_on(&missing, &["export", "--campaign", "c", "--format", "csv"]);
    assert!(err.contains("does not exist"), "{err}");
    // The default location: no directory made under $XDG_DATA_HOME either.
    let out = command()
        .env_remove("IOGAUGE_STORE")
        .env("XDG_DATA_HOME", d.path().join("xdg"))
        .arg("history")
        .output()
        .unwrap();
    assert!(out.status.success());
    let (_, _, _) = on(&store, &["show", "1"]);
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing made"
    );
}
