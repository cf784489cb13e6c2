//! The kernel's filesystems (rows 11 and 20): /proc, /sys and cgroupfs are never a
//! cluster's directory nor a target, refused before anything is written there.

use super::*;

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
