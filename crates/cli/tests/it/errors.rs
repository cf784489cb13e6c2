//! Every error `iogauge run` promises: one line on stderr that names the path or flag and the
//! fix, exit code 2 for a command line that cannot work and 1 for a system failure, never a
//! panic, and nothing left behind.

use crate::common::*;

#[test]
fn bad_values_name_their_flag() {
    let _g = shared();
    for (args, flag) in [
        (vec!["--size", "8x"], "--size"),
        (vec!["--bs", "8k:50,1m:20"], "--bs"),
        (vec!["--bs", "1000"], "--bs"),
        (vec!["--rw", "randrw", "--read-pct", "120"], "--read-pct"),
        (vec!["--time", "10x"], "--time"),
        (vec!["--ramp=-1s"], "--ramp"),
        (vec!["--region", "50%..10%"], "--region"),
        (vec!["--region", "0%..150%"], "--region"),
        (vec!["--dist", "zipf:0"], "--dist"),
        (vec!["--dist", "hotspot:1m"], "--dist"),
        (vec!["--engine", "aio"], "--engine"),
        (vec!["--qd", "0"], "--qd"),
        (vec!["--workers", "0"], "--workers"),
        (vec!["--interval", "10ms"], "--interval"),
        (vec!["--rw", "randread", "--read-pct", "50"], "--read-pct"),
        (vec!["--rw", "read", "--dist", "zipf:1.2"], "--dist"),
        (vec!["--size", "4k", "--bs", "8k"], "--size"),
        (vec!["--time", "0s"], "--time"),
    ] {
        let err = run_fails(&args, 2);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

/// A fio user's options get the iogauge spelling (#46's bridge), a near miss clap's "did
/// you mean", and a bare number where a latency needs its unit is refused, not taken as
/// seconds (CALIBRATE_IO's max_latency is in ms). Nothing is created on the way.
#[test]
fn fio_spellings_and_bare_latencies_are_answered() {
    let _g = shared();
    let d = workdir();
    let t = d.path().join("x");
    let t = t.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--iodepth", "32"],
            "--iodepth is fio's name: iogauge calls it --qd",
        ),
        (
            vec!["--numjobs=4"],
            "--numjobs is fio's name: iogauge calls it --workers",
        ),
        (
            vec!["--runtime", "60"],
            "iogauge calls it --time, with a unit",
        ),
        (vec!["--direct", "1"], "O_DIRECT is the default"),
        (vec!["--filename", "/dev/sdz"], "iogauge calls it --target"),
        (vec!["--worker", "2"], "did you mean '--workers'?"),
    ] {
        let mut all = vec!["--target", t, "--size", "16m"];
        all.extend_from_slice(&args);
        let err = run_fails(&all, 2);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let err = fails(&["calibrate", "--target", t, "--max-latency", "20"], 2);
    assert!(err.contains("20 what?") && err.contains("20ms"), "{err}");
    assert!(
        !std::path::Path::new(t).exists(),
        "a refused command created its target"
    );
}

#[test]
fn tmpfs_is_refused_for_o_direct() {
    let _g = shared();
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let t = d.path().join("x");
    let err = run_fails(
        &[
            "--target",
            t.to_str().unwrap(),
            "--size",
            "8m",
            "--ios",
            "10",
        ],
        2,
    );
    assert!(
        err.contains("tmpfs") && err.contains("--buffered") && err.contains(t.to_str().unwrap()),
        "{err}"
    );
    assert!(!t.exists(), "nothing created");
    // On purpose, through the page cache, it works.
    let v = run_on(&t, "8m", &["--ios", "10", "--buffered"]);
    assert_eq!(u(&v["summary"]["read"]["ios"]), 10);
}

#[test]
fn filesystem_without_o_direct() {
    let (_g, d) = root_test(shared);
    let _m = Mount::new(&d.path().join("ram"), "ramfs", "mode=755");
    // ramfs rejects O_DIRECT opens (EINVAL) and is not caught as tmpfs by name first:
    // make sure the O_DIRECT check itself fires by creating with --buffered first.
    let t = d.path().join("ram/x");
    run_on(&t, "1m", &["--ios", "10", "--buffered"]);
    let err = run_fails(&["--target", t.to_str().unwrap(), "--ios", "10"], 2);
    assert!(err.contains("ramfs") && (err.contains("O_DIRECT")), "{err}");
}

#[test]
fn target_smaller_than_block_or_region() {
    let _g = shared();
    let d = workdir();
    let t = d.path().join("small");
    std::fs::write(&t, vec![1u8; 4096]).unwrap();
    let p = t.to_str().unwrap();
    let err = run_fails(&["--target", p, "--bs", "8k", "--ios", "10"], 2);
    assert!(
        err.contains(p) && err.contains("smaller than the block size"),
        "{err}"
    );
    let big = d.path().join("big");
    std::fs::write(&big, vec![1u8; 1 << 20]).unwrap();
    let err = run_fails(
        &[
            "--target",
            big.to_str().unwrap(),
            "--region",
            "2m..3m",
            "--ios",
            "10",
        ],
        2,
    );
    assert!(err.contains("--region") && err.contains("outside"), "{err}");
    let err = run_fails(&["--target", p, "--size", "1m", "--ios", "10"], 2);
    assert!(err.contains("smaller than --size"), "{err}");
}

#[test]
fn missing_directory_and_missing_size() {
    let _g = shared();
    let d = workdir();
    let t = d.path().join("no/such/dir/x");
    let err = run_fails(&["--target", t.to_str().unwrap(), "--size", "1m"], 2);
    assert!(
        err.contains("does not exist") && err.contains("no/such/dir"),
        "{err}"
    );
    let t = d.path().join("x");
    let err = run_fails(&["--target", t.to_str().unwrap()], 2);
    assert!(err.contains("--size"), "{err}");
    assert!(!t.exists());
}

#[test]
fn no_permission() {
    let (_g, d) = root_test(shared);
    let locked = d.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    // Root ignores mode bits; an immutable directory refuses even root.
    sh(&format!("chattr +i '{}'", locked.display()));
    let t = locked.join("x");
    let out = bin()
        .args(["run", "--target", t.to_str().unwrap(), "--size", "1m"])
        .output()
        .unwrap();
    sh(&format!("chattr -i '{}'", locked.display()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no permission") && err.contains(t.to_str().unwrap()),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1);
}

#[test]
fn no_space_during_prefill_removes_the_partial_file() {
    let (_g, d) = root_test(shared);
    let _m = Mount::new(&d.path().join("small"), "tmpfs", "size=16m");
    let t = d.path().join("small/x");
    let err = run_fails(
        &[
            "--target",
            t.to_str().unwrap(),
            "--size",
            "64m",
            "--buffered",
        ],
        1,
    );
    assert!(err.contains("no space") && err.contains("removed"), "{err}");
    assert!(!t.exists(), "partial file left behind");
    assert_eq!(
        std::fs::read_dir(d.path().join("small")).unwrap().count(),
        0,
        "no sidecar left"
    );
}

#[test]
fn not_a_file_or_device() {
    let _g = shared();
    let d = workdir();
    let err = run_fails(&["--target", d.path().to_str().unwrap(), "--ios", "1"], 2);
    assert!(
        err.contains("neither a regular file nor a block device"),
        "{err}"
    );
}
