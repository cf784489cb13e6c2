//! Issue #46, a new user's first minutes: `iogauge doctor` says what the machine gives,
//! `--version` names the build's features, a usage mistake creates nothing (not the 1 GiB
//! scratch file, not the store), and `iogauge clean` removes iogauge's files and only those.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// The names doctor checks, in its order.
const CHECKS: [&str; 11] = [
    "io_uring",
    "O_DIRECT",
    "privileges",
    "tracer",
    "tracefs",
    "huge pages",
    "cgroups",
    "PostgreSQL",
    "MariaDB",
    "MPI",
    "chromium",
];

fn doctor_json(dir: &Path) -> Vec<Value> {
    let out = bin()
        .args(["doctor", "--json", "--target", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["checks"].as_array().unwrap().clone()
}

fn check<'a>(checks: &'a [Value], name: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {checks:?}"))
}

/// On this machine (root, BTF, io_uring, ext4, PostgreSQL and MariaDB installed) every piece
/// iogauge uses is found, the tracer by loading it; each missing piece would say its cost
/// and fix. The text has one line a check; --version names the tracer and MPI.
#[test]
fn doctor_names_what_this_machine_gives() {
    let _g = shared();
    let d = workdir();
    let checks = doctor_json(d.path());
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, CHECKS);
    for name in [
        "io_uring",
        "O_DIRECT",
        "privileges",
        "tracer",
        "PostgreSQL",
        "MariaDB",
    ] {
        assert_eq!(check(&checks, name)["status"], "ok", "{name}: {checks:?}");
    }
    let tracer = check(&checks, "tracer")["found"].as_str().unwrap();
    assert!(tracer.contains("load and attach"), "{tracer}");
    assert!(
        check(&checks, "O_DIRECT")["found"]
            .as_str()
            .unwrap()
            .contains("ext4"),
        "{checks:?}"
    );
    for c in &checks {
        if matches!(c["status"].as_str(), Some("missing" | "limited")) {
            assert!(c["cost"].is_string() && c["fix"].is_string(), "{c}");
        }
    }
    let text = text_of(&["doctor", "--target", d.path().to_str().unwrap()]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("iogauge "), "{text}");
    for name in CHECKS {
        assert_eq!(
            lines.iter().filter(|l| l[9..].starts_with(name)).count(),
            1,
            "{name}: {text}"
        );
    }
    // Nothing left in the directory it checked.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    let version = String::from_utf8(bin().arg("--version").output().unwrap().stdout).unwrap();
    assert!(
        version.contains("tracer built in") && version.contains("mpi"),
        "{version}"
    );
}

/// tmpfs has O_DIRECT here (6.18), a missing directory is a usage error, and with tracefs
/// unmounted doctor says iogauge mounts it itself (and leaves it unmounted).
#[test]
fn doctor_reads_the_place_and_tracefs_as_they_are() {
    let _g = exclusive();
    let err = fails(&["doctor", "--target", "/nonexistent/dir"], 2);
    assert!(err.contains("--target /nonexistent/dir"), "{err}");
    let _t = NoTracefs::new();
    let checks = doctor_json(Path::new("/dev/shm"));
    let tracefs = check(&checks, "tracefs");
    assert_eq!(tracefs["status"], "note", "{tracefs}");
    assert!(
        tracefs["found"].as_str().unwrap().contains("not mounted"),
        "{tracefs}"
    );
    assert!(!tracefs_mounted(), "doctor mounted tracefs");
    assert!(
        check(&checks, "O_DIRECT")["found"]
            .as_str()
            .unwrap()
            .contains("tmpfs"),
        "{checks:?}"
    );
    // The block tracer needs no tracefs.
    assert_eq!(check(&checks, "tracer")["status"], "ok", "{checks:?}");
}

/// A region, layout or hot range the targets cannot hold is refused before anything is made:
/// no scratch directory, no 1 GiB file, no results store.
#[test]
fn usage_mistakes_create_nothing() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("results.sqlite");
    for (args, says) in [
        (vec!["run", "--layout", "mirror:2"], "--layout"),
        (
            vec!["run", "--size", "1g", "--region", "2G..3G"],
            "--region",
        ),
        (vec!["run", "--dist", "hotspot:2g@0:90"], "--dist"),
        (vec!["calibrate", "--region", "2G..3G"], "--region"),
        (vec!["calibrate", "--layout", "mirror:2"], "--layout"),
    ] {
        let out = bin()
            .current_dir(d.path())
            .env("IOGAUGE_STORE", &store)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        let made: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(made.is_empty(), "{args:?} created {made:?}");
    }
}

/// `clean` removes the files carrying iogauge's mark under ./iogauge-scratch (and the
/// directory once empty) or the paths given; a file of the user's, a link (and what it
/// points to) and a file given by name without the mark are left. --dry-run removes nothing.
#[test]
fn clean_removes_iogauge_s_files_and_nothing_else() {
    // Busy: its runs' I/O must not pass for a neighbour of a timing-sensitive test.
    let _g = busy();
    let d = workdir();
    let store = d.path().join("results.sqlite");
    let at = |args: &[&str]| {
        let out = bin()
            .current_dir(d.path())
            .env("IOGAUGE_STORE", &store)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    at(&["run", "--time", "1s", "--size", "16m"]);
    at(&[
        "run",
        "--time",
        "1s",
        "--size",
        "8m",
        "--target",
        "elsewhere",
    ]);
    let scratch = d.path().join("iogauge-scratch");
    let data = scratch.join("data");
    assert!(data.is_file());
    std::fs::write(scratch.join("notes.txt"), "mine").unwrap();
    std::os::unix::fs::symlink("../elsewhere", scratch.join("link")).unwrap();
    std::fs::write(d.path().join("users"), "mine").unwrap();

    let dry = at(&["clean", "--dry-run"]);
    assert!(dry.contains("would remove iogauge-scratch/data"), "{dry}");
    assert!(data.is_file(), "--dry-run removed it");

    let said = at(&["clean"]);
    assert!(said.contains("removed 1 file(s)"), "{said}");
    assert!(!data.exists());
    assert!(scratch.join("notes.txt").is_file() && d.path().join("elsewhere").is_file());
    assert!(std::fs::symlink_metadata(scratch.join("link")).is_ok());

    let said = at(&["clean", "elsewhere", "users"]);
    assert!(said.contains("left users: not iogauge's"), "{said}");
    assert!(!d.path().join("elsewhere").exists());
    assert!(d.path().join("users").is_file());

    // With the user's files gone, the scratch directory goes too.
    std::fs::remove_file(scratch.join("notes.txt")).unwrap();
    std::fs::remove_file(scratch.join("link")).unwrap();
    std::fs::copy(d.path().join("users"), d.path().join("users2")).unwrap();
    at(&["run", "--time", "1s", "--size", "16m"]);
    at(&["clean"]);
    assert!(!scratch.exists());
    let err = fails(&["clean", "/nonexistent/x"], 2);
    assert!(err.contains("clean /nonexistent/x"), "{err}");
}
