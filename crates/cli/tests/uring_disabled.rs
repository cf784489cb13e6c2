//! io_uring switched off by the kernel (sysctl kernel.io_uring_disabled=2): `iogauge run`
//! says so in one line and points to `--engine psync`, which still works. Its own test binary,
//! because the sysctl is machine-wide and cargo runs test binaries one after another.

mod common;

use common::*;

struct Sysctl(String);

impl Drop for Sysctl {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/kernel/io_uring_disabled", &self.0);
    }
}

#[test]
fn io_uring_unavailable_suggests_psync() {
    require_root();
    let d = workdir();
    let t = d.path().join("data");
    let p = t.to_str().unwrap();
    run_json(&["--target", p, "--size", "8m", "--ios", "10"]);
    let old = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .expect("kernel.io_uring_disabled exists on kernels ≥ 6.6");
    let _restore = Sysctl(old);
    std::fs::write("/proc/sys/kernel/io_uring_disabled", "2").unwrap();
    let err = run_fails(&["--target", p, "--ios", "10"], 1);
    assert!(
        err.contains("io_uring is not available") && err.contains("--engine psync"),
        "{err}"
    );
    let v = run_json(&["--target", p, "--ios", "10", "--engine", "psync"]);
    assert_eq!(u(&v["summary"]["read"]["ios"]), 10);
}
