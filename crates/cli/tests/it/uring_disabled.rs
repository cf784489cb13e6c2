//! io_uring switched off by the kernel (sysctl kernel.io_uring_disabled=2): `iogauge run`
//! says so in one line and points to `--engine psync`, which still works. The sysctl is
//! machine-wide and every other test uses io_uring, so this one runs alone: it takes the
//! exclusive guard, and the value is put back before the guard lets the others in.

use crate::common::*;

#[test]
fn io_uring_unavailable_suggests_psync() {
    let (_g, d) = root_test(exclusive);
    let t = d.path().join("data");
    let p = t.to_str().unwrap();
    run_json(&["--target", p, "--size", "8m", "--ios", "10"]);
    const SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";
    assert!(
        std::path::Path::new(SYSCTL).exists(),
        "kernel.io_uring_disabled exists on kernels ≥ 6.6"
    );
    // Declared after the guard, so dropped (and restored) before it, also on a panic.
    let _restore = Sysctl::set(SYSCTL, "2");
    let err = run_fails(&["--target", p, "--ios", "10"], 1);
    assert!(
        err.contains("io_uring is not available") && err.contains("--engine psync"),
        "{err}"
    );
    let v = run_json(&["--target", p, "--ios", "10", "--engine", "psync"]);
    assert_eq!(u(&v["summary"]["read"]["ios"]), 10);
}
