//! `iogauge run --log-bs`: the log writer beside a job (a write, then fdatasync, again and
//! again) on real files with O_DIRECT: its figures add up, it stays in its own region (the
//! end of the target, left out of the job's span, or a `--log-target` of its own), and a
//! log that cannot work as asked is refused on one line with exit 2.

use crate::common::*;
use serde_json::Value;

/// The first 8 bytes of every block the log writer writes (the engine's `LOG_MAGIC`).
const MAGIC: &[u8; 8] = b"iogLOG\0\x01";

/// The sequence numbers of the 8k blocks of `bytes` that carry the log's magic, by block.
fn log_blocks(bytes: &[u8]) -> Vec<Option<u64>> {
    bytes
        .chunks(8192)
        .map(|b| (&b[..8] == MAGIC).then(|| u64::from_le_bytes(b[8..16].try_into().unwrap())))
        .collect()
}

/// The run's JSON and its stored id.
fn run_stored(args: &[&str]) -> (Value, i64) {
    let out = bin().arg("run").args(args).arg("--json").output().unwrap();
    assert_ran(&out, &format!("iogauge run {args:?}"));
    let v = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    (v, stored_id(&out.stderr))
}

/// A random-write job with the log at the end of its 64 MiB target: the log's figures add up
/// over the measured window, the job still does its I/O, and on disk every block of the
/// last --log-size carries the log's stamp in sequence (it wrapped) while no block of the
/// job's span does: the two never overlapped (the job writes ~1.5% of its I/Os into the log
/// region if its span took it in, so its blocks would show there).
#[test]
fn the_log_writer_keeps_to_the_end_of_the_target() {
    let _g = heavy();
    let d = workdir();
    let t = d.path().join("data");
    let ts = t.to_str().unwrap();
    let (v, id) = run_stored(&[
        "--target",
        ts,
        "--size",
        "64m",
        "--rw",
        "randwrite",
        "--qd",
        "8",
        "--time",
        "3s",
        "--ramp",
        "1s",
        "--log-bs",
        "8k",
        "--log-size",
        "1m",
    ]);
    let l = &v["log"];
    assert_eq!(
        v["options"]["log"],
        serde_json::json!({"bs": 8192, "size": 1 << 20})
    );
    assert_eq!(l["target"], ts);
    let writes = u(&l["writes"]);
    assert!(
        writes >= 128,
        "a 1 MiB log of 8k blocks wraps in 3 s: {writes} writes"
    );
    assert_eq!(u(&l["bytes"]), writes * 8192);
    // Rates over the log's own window, which is the job's measured window.
    let (el, job_el) = (f(&l["elapsed_s"]), f(&v["summary"]["elapsed_s"]));
    assert!((f(&l["writes_s"]) * el - writes as f64).abs() < 1e-6 * writes as f64);
    let over_job = f(&l["writes_s"]) * job_el;
    assert!(
        (over_job / writes as f64 - 1.0).abs() < 0.05,
        "{over_job} vs {writes} writes ({el} s of {job_el} s)"
    );
    assert!((f(&l["mbps"]) - f(&l["writes_s"]) * 8192.0 / 1048576.0).abs() < 1e-6);
    for k in ["write_lat_us", "sync_lat_us"] {
        assert!(
            f(&l[k]["mean"]) > 0.0 && f(&l[k]["p99"]) >= f(&l[k]["p50"]),
            "{k}"
        );
    }
    assert!(u(&v["summary"]["write"]["ios"]) > 1000, "the job ran");
    let bytes = std::fs::read(&t).unwrap();
    assert_eq!(bytes.len(), 64 << 20);
    let (span, log) = bytes.split_at((63 << 20) as usize);
    let stamped: Vec<usize> = (log_blocks(span).iter().enumerate())
        .filter_map(|(i, s)| s.map(|_| i))
        .collect();
    assert!(
        stamped.is_empty(),
        "log blocks in the job's span: {stamped:?}"
    );
    for (k, s) in log_blocks(log).iter().enumerate() {
        let s = s.unwrap_or_else(|| panic!("block {k} of the log region is not the log's"));
        assert_eq!(
            s % 128,
            k as u64,
            "block {k} holds write {s}: sequential, wrapping"
        );
    }
    let shown = text_of(&["show", &id.to_string()]);
    let line = shown.lines().find(|l| l.starts_with("log writer: "));
    let line = line.unwrap_or_else(|| panic!("no log line in: {shown}"));
    assert!(
        line.contains("writes/s of 8k") && line.contains("fdatasync"),
        "{line}"
    );
}

/// `--log-target` on a file of its own: created at --log-size and written there, while the
/// job's read-only target is opened read-only (the log needs no write to it).
#[test]
fn a_log_target_of_its_own_is_made_at_the_log_size() {
    let _g = busy();
    let d = workdir();
    let (t, wal) = (d.path().join("data"), d.path().join("wal"));
    let v = run_on(
        &t,
        "16m",
        &[
            "--rw",
            "randread",
            "--qd",
            "4",
            "--time",
            "2s",
            "--log-bs",
            "16k",
            "--log-target",
            wal.to_str().unwrap(),
            "--log-size",
            "4m",
            "--log-rate",
            "200",
        ],
    );
    assert_eq!(std::fs::metadata(&wal).unwrap().len(), 4 << 20);
    let l = &v["log"];
    assert_eq!(l["target"], wal.to_str().unwrap());
    assert_eq!(u(&l["bs"]), 16384);
    let writes = u(&l["writes"]);
    // --log-rate 200 over 2 s: about 400, never far above.
    assert!(
        (100..=440).contains(&writes),
        "{writes} writes at --log-rate 200"
    );
    assert!(f(&l["writes_s"]) <= 210.0, "{}", l["writes_s"]);
    assert_eq!(v["targets"][0]["writable"], false);
    assert!(u(&v["summary"]["read"]["ios"]) > 0);
    // The log starts at the start of its target: its first block holds write 0, or the
    // write that wrapped onto it (4 MiB of 16k is 256 writes).
    let first = log_blocks(&std::fs::read(&wal).unwrap()[..16384])[0];
    assert_eq!(first.map(|s| s % 256), Some(0), "{first:?}");
}

/// What cannot work as written is refused before any I/O, on one line naming the flag, with
/// exit 2.
#[test]
fn a_log_that_cannot_work_is_refused() {
    let _g = shared();
    let d = workdir();
    let t = d.path().join("data");
    let ts = t.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["--target", ts, "--time", "1s"];
        a.extend_from_slice(extra);
        run_fails(&a, 2)
    };
    let e = run(&["--size", "8m", "--log-bs", "100"]);
    assert!(e.contains("--log-bs") && e.contains("512"), "{e}");
    let e = run(&["--size", "1m", "--log-bs", "8k", "--log-size", "2m"]);
    assert!(e.contains("--log-size 2m") && e.contains("--size"), "{e}");
    let e = run(&["--size", "8m", "--log-bs", "8k", "--log-size", "1000"]);
    assert!(e.contains("--log-size") && e.contains("4k"), "{e}");
    let e = run(&["--size", "8m", "--log-size", "1m"]);
    assert!(e.contains("--log-bs"), "{e}");
    assert!(!t.exists(), "nothing created for a refused command line");
    // The first target named as --log-target is its end, as no --log-target is: it must fit.
    let e = run(&["--size", "8m", "--log-bs", "8k", "--log-target", ts]);
    assert!(e.contains("--log-size 64m does not fit"), "{e}");
    let e = run(&["--size", "8m", "--log-target", "wal"]);
    assert!(e.contains("add --log-bs"), "{e}");
    // An existing file exactly the log's size: no room for the job before the log.
    std::fs::write(&t, vec![0u8; 1 << 20]).unwrap();
    let e = run(&["--allow-overwrite", "--log-bs", "8k", "--log-size", "1m"]);
    assert!(e.contains("--log-size 1m") && e.contains(ts), "{e}");
}

/// Over MPI ranks every rank's log would need a target and a merge of its own: refused on
/// one line, exit 2.
#[cfg(feature = "mpi")]
#[test]
fn over_ranks_the_log_writer_is_refused() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let t = d.path().join("data-{rank}");
    let out = std::process::Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "2", "-x"])
        .arg(format!("IOGAUGE_STORE={}", store.display()))
        .arg(exe())
        .args([
            "run",
            "--target",
            t.to_str().unwrap(),
            "--size",
            "8m",
            "--time",
            "1s",
        ])
        .args(["--log-bs", "8k", "--log-size", "1m"])
        .output()
        .expect("mpirun (openmpi-bin) is installed");
    let e = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{e}");
    let line: Vec<&str> = e.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(line.len(), 1, "{e}");
    assert!(
        line[0].contains("--log-bs") && line[0].contains("MPI ranks"),
        "{e}"
    );
}
