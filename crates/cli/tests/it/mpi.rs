//! One job over MPI ranks (`mpirun -np N iogauge run`), with the real Open MPI launcher:
//! built with `--features mpi`, 2 and 3 ranks on this host give one stored document whose
//! summary is the ranks' sum and whose merged percentiles lie within the ranks'; a rank whose
//! target is bad ends every rank without a result; a binary built without the feature refuses
//! to run under a launcher.

use crate::common::*;
#[cfg(feature = "mpi")]
use serde_json::Value;

#[cfg(feature = "mpi")]
mod calibrate;
#[cfg(feature = "mpi")]
mod db;
#[cfg(feature = "mpi")]
mod faults;
#[cfg(feature = "mpi")]
mod scale;

/// A binary built without the feature: this test binary's own `iogauge` when it is one, else
/// the plain build `scripts/test` makes beside the MPI one (`IOGAUGE_TEST_PLAIN_BIN`).
fn plain_bin() -> std::path::PathBuf {
    if cfg!(feature = "mpi") {
        let p = std::env::var_os("IOGAUGE_TEST_PLAIN_BIN").expect(
            "IOGAUGE_TEST_PLAIN_BIN must name an iogauge built without --features mpi (scripts/test builds one)",
        );
        std::path::PathBuf::from(p)
    } else {
        exe()
    }
}

/// A binary without the feature, started as a rank: one line saying how to build it, exit 2.
#[test]
fn without_the_feature_a_rank_says_how_to_build() {
    let _g = shared();
    // PMIx names the rank itself: rank 0 is the one that speaks.
    for (var, value) in [
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("PMI_SIZE", "2"),
        ("PMIX_RANK", "0"),
    ] {
        let out = std::process::Command::new(plain_bin())
            .env("IOGAUGE_STORE", test_store())
            .env(var, value)
            .args(["run", "--target", "/nonexistent/x", "--time", "1s"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{var}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains(var) && e.contains("--features mpi"),
            "{var}: {e}"
        );
    }
    // Every rank reads the same line: the others end the same way, saying nothing.
    let out = std::process::Command::new(plain_bin())
        .env("IOGAUGE_STORE", test_store())
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .env("OMPI_COMM_WORLD_RANK", "1")
        .args(["run", "--target", "/nonexistent/x", "--time", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The start of an MPI test: root, its gate, a work directory and the results store the
/// ranks write to, in it.
#[cfg(feature = "mpi")]
fn mpi_test(gate: fn() -> Guard) -> (Guard, tempfile::TempDir, std::path::PathBuf) {
    require_root();
    let g = gate();
    let w = workdir();
    let store = w.path().join("results.sqlite");
    (g, w, store)
}

/// Truncates a rank's target under its running job: its next read moves 0 bytes, and the
/// rank fails.
#[cfg(feature = "mpi")]
fn shrink(target: &std::path::Path) {
    std::fs::File::options()
        .write(true)
        .open(target)
        .unwrap()
        .set_len(0)
        .unwrap();
}

/// `mpirun -np N iogauge ARGS` on `store`: (exit code, stdout, stderr).
#[cfg(feature = "mpi")]
fn mpirun(n: u32, store: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = mpirun_cmd(n, store, args)
        .output()
        .expect("mpirun (openmpi-bin) is installed");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `mpirun -np N iogauge ARGS` that must succeed: its one JSON document on stdout.
#[cfg(feature = "mpi")]
fn mpirun_json(n: u32, store: &std::path::Path, args: &[&str]) -> Value {
    let (code, out, err) = mpirun(n, store, args);
    assert_eq!(code, Some(0), "{n} ranks, {args:?}: {err}");
    serde_json::from_str(&out).expect("one JSON document on stdout")
}

/// The command `mpirun -np N iogauge ARGS` with `IOGAUGE_STORE` = `store` on every rank.
#[cfg(feature = "mpi")]
fn mpirun_cmd(n: u32, store: &std::path::Path, args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        &n.to_string(),
        "-x",
    ])
    .arg(format!("IOGAUGE_STORE={}", store.display()))
    .arg(exe())
    .args(args);
    c
}

/// `mpirun -np N iogauge ARGS` started in the background (stdout as given, stderr piped),
/// returned once its N ranks are running, plus `settle` for them to get going.
#[cfg(feature = "mpi")]
fn spawn_ranks(
    n: u32,
    store: &std::path::Path,
    args: &[&str],
    stdout: std::process::Stdio,
    settle: std::time::Duration,
) -> std::process::Child {
    let child = mpirun_cmd(n, store, args)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpirun (openmpi-bin) is installed");
    let t = std::time::Instant::now();
    while rank_pids(store, None).len() < n as usize && t.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(settle);
    child
}

/// Waits until no rank on `store` is left running (a failure after 60 s).
#[cfg(feature = "mpi")]
fn wait_ranks_gone(store: &std::path::Path, what: &str) {
    let t = std::time::Instant::now();
    while !rank_pids(store, None).is_empty() {
        assert!(
            t.elapsed().as_secs() < 60,
            "{what}: ranks still running after 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The first document stored in `store`, as `show 1 --json` prints it.
#[cfg(feature = "mpi")]
fn stored(store: &std::path::Path) -> Value {
    let shown = bin()
        .env("IOGAUGE_STORE", store)
        .args(["show", "1", "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&shown.stdout).expect("the stored document")
}

#[cfg(feature = "mpi")]
fn stored_runs(store: &std::path::Path) -> usize {
    let out = bin()
        .env("IOGAUGE_STORE", store)
        .args(["history", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v.as_array().map_or(0, Vec::len)
}

#[cfg(feature = "mpi")]
#[test]
fn two_and_three_ranks_make_one_result() {
    require_root();
    let _g = heavy();
    for n in [2u32, 3] {
        let w = workdir();
        let store = w.path().join("results.sqlite");
        let target = w.path().join("d.{rank}");
        let v = mpirun_json(
            n,
            &store,
            &[
                "run",
                "--target",
                target.to_str().unwrap(),
                "--size",
                "128M",
                "--time",
                "3s",
                "--json",
            ],
        );
        let ranks = v["ranks"].as_array().expect("ranks");
        assert_eq!(ranks.len(), n as usize);
        let sum = |k: &str| -> f64 { ranks.iter().map(|r| f(&r["summary"]["read"][k])).sum() };
        let read = &v["summary"]["read"];
        assert_eq!(f(&read["ios"]), sum("ios"), "{n} ranks: ios");
        let (iops, each) = (f(&read["iops"]), sum("iops"));
        assert!(
            (iops / each - 1.0).abs() < 0.02,
            "{n} ranks: {iops} vs {each}"
        );
        // Merged percentiles lie within the ranks' (a merge, not one rank's or a mean's).
        for k in ["p50", "p99", "max"] {
            let each: Vec<f64> = ranks
                .iter()
                .map(|r| f(&r["summary"]["read"]["lat_us"][k]))
                .collect();
            let lo = each.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = each.iter().cloned().fold(0.0, f64::max);
            let m = f(&read["lat_us"][k]);
            assert!(
                lo * 0.999 <= m && m <= hi * 1.001,
                "{k}: {m} not in {each:?}"
            );
        }
        assert_eq!(f(&read["lat_us"]["max"]), {
            let each: Vec<f64> = ranks
                .iter()
                .map(|r| f(&r["summary"]["read"]["lat_us"]["max"]))
                .collect();
            each.into_iter().fold(0.0, f64::max)
        });
        for (i, r) in ranks.iter().enumerate() {
            assert_eq!(r["rank"], i);
            let t = format!("{}/d.{i}", w.path().display());
            assert_eq!(r["targets"][0], t.as_str());
        }
        assert!(f(&v["start_skew_ms"]) < 1000.0, "{}", v["start_skew_ms"]);
        assert_eq!(stored_runs(&store), 1, "{n} ranks: exactly one stored run");
        // The ranks on this host are one job: none is another's neighbour (#45: each rank
        // in a cgroup of its own read the others as "iogauge (pid …) 50%").
        let titles = v["findings"].to_string();
        assert!(
            !titles.contains("iogauge (pid") && !titles.contains("iogauge-w"),
            "{n} ranks: a rank named as another's neighbour: {titles}"
        );
    }
}

#[cfg(feature = "mpi")]
#[test]
fn a_failing_rank_ends_the_job_with_its_reason() {
    let (_g, w, store) = mpi_test(heavy);
    // Rank 1's target is a directory: it cannot prepare it; no rank runs, nothing is stored.
    std::fs::create_dir(w.path().join("d.1")).unwrap();
    let target = w.path().join("d.{rank}");
    let args = [
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "64M",
        "--time",
        "2s",
    ];
    let (code, _, err) = mpirun(2, &store, &args);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("rank 1") && err.contains("d.1"), "{err}");
    assert_eq!(stored_runs(&store), 0, "{err}");
    // The text summary of a good job has the per-rank table.
    std::fs::remove_dir(w.path().join("d.1")).unwrap();
    let (code, out, err) = mpirun(2, &store, &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("2 ranks, started within"), "{out}");
    assert!(out.contains("spread between ranks"), "{out}");
}

/// The pids of `iogauge` ranks (`OMPI_COMM_WORLD_RANK`) on `store`.
#[cfg(feature = "mpi")]
fn rank_pids(store: &std::path::Path, rank: Option<u32>) -> Vec<i32> {
    let want = format!("IOGAUGE_STORE={}", store.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let vars: Vec<&[u8]> = env.split(|&b| b == 0).collect();
            let has = |s: &str| vars.contains(&s.as_bytes());
            has(&want)
                && vars.iter().any(|v| v.starts_with(b"OMPI_COMM_WORLD_RANK="))
                && rank.is_none_or(|r| has(&format!("OMPI_COMM_WORLD_RANK={r}")))
        })
        .collect()
}

/// mpirun's exit status once its ranks are gone. It ends on its own; once in a while Open
/// MPI's, interrupted itself, does not: it is not iogauge's to wait for beyond 30 s.
#[cfg(feature = "mpi")]
fn wait_or_kill(child: &mut std::process::Child) -> Option<std::process::ExitStatus> {
    let t = std::time::Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st);
        }
        if t.elapsed().as_secs() > 30 {
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("note: mpirun did not exit 30 s after its ranks; killed");
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Ctrl-C to mpirun, and SIGINT to one rank only: every rank stops at its next interval
/// boundary (a rank that stops tells the others), rank 0 stores what ran marked interrupted,
/// and no rank is left running.
#[cfg(feature = "mpi")]
#[test]
fn ctrl_c_to_mpirun_or_one_rank_stores_what_ran() {
    require_root();
    let _g = heavy();
    for to_mpirun in [true, false] {
        let w = workdir();
        let store = w.path().join("results.sqlite");
        let target = w.path().join("d.{rank}");
        let t = target.to_str().unwrap();
        let args = [
            "run", "--target", t, "--size", "64M", "--time", "30s", "--json",
        ];
        // Both ranks running (past pre-fill), then two intervals.
        let child = spawn_ranks(
            2,
            &store,
            &args,
            std::process::Stdio::null(),
            std::time::Duration::from_secs(3),
        );
        let pids = if to_mpirun {
            vec![child.id() as i32]
        } else {
            rank_pids(&store, Some(1))
        };
        assert_eq!(pids.len(), 1, "to mpirun: {to_mpirun}");
        // SAFETY: kill(2) on a pid this test started (mpirun, or one of its ranks).
        unsafe { libc::kill(pids[0], libc::SIGINT) };
        // What iogauge owes: every rank gone within a few intervals, the run stored.
        wait_ranks_gone(&store, "SIGINT");
        let mut child = child;
        let status = wait_or_kill(&mut child);
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        if let Some(st) = status {
            assert_ne!(st.code(), Some(0), "{err}");
            if !to_mpirun {
                assert_eq!(st.code(), Some(130), "{err}");
            }
        }
        // mpirun, itself interrupted, may cut the ranks' output short: read the stored run.
        assert_eq!(stored_runs(&store), 1, "{err}");
        let v = stored(&store);
        assert_eq!(v["interrupted"], true, "{err}");
        assert_eq!(v["ranks"].as_array().map(Vec::len), Some(2));
        assert!(f(&v["summary"]["elapsed_s"]) < 15.0, "{}", v["summary"]);
        assert!(f(&v["summary"]["read"]["ios"]) > 0.0);
        assert!(rank_pids(&store, None).is_empty(), "a rank left running");
    }
}

/// A campaign with `launcher = "mpirun …"`: every run is one job over the ranks, stored once
/// with its campaign tag, and the campaign's statistics cover them.
#[cfg(feature = "mpi")]
#[test]
fn a_campaign_launches_every_run_over_ranks() {
    let (_g, w, store) = mpi_test(heavy);
    let file = w.path().join("ranks.toml");
    std::fs::write(
        &file,
        format!(
            "command = \"run\"\nrepeat = 2\nwarmup = \"none\"\n\
             launcher = \"mpirun --allow-run-as-root --oversubscribe -np 2\"\n\
             [vars]\nqd = [1, 8]\n\
             [options]\ntarget = \"{}/d.{{rank}}\"\nsize = \"32M\"\ntime = \"1s\"\nqd = \"${{qd}}\"\n",
            w.path().display()
        ),
    )
    .unwrap();
    let out = bin()
        .env("IOGAUGE_STORE", &store)
        .args(["campaign", file.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(stored_runs(&store), 4, "{err}");
    for id in 1..=4 {
        let shown = bin()
            .env("IOGAUGE_STORE", &store)
            .args(["show", &id.to_string(), "--json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&shown.stdout).unwrap();
        assert_eq!(v["ranks"].as_array().map(Vec::len), Some(2), "run {id}");
    }
    // The campaign's own statistics found every run under its case (n = 2 each).
    let text = String::from_utf8_lossy(&out.stdout);
    for case in ["qd=1", "qd=8"] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(case) && l.contains("n=2")),
            "{case} in {text}"
        );
    }
}

/// Ranks writing one shared target each write their own half (IOR's segments) unless
/// `--shared-offsets`; the target is pre-filled once.
#[cfg(feature = "mpi")]
#[test]
fn ranks_writing_a_shared_target_split_its_region() {
    let (_g, w, store) = mpi_test(heavy);
    let target = w.path().join("shared.dat");
    let t = target.to_str().unwrap();
    let base = [
        "run",
        "--target",
        t,
        "--size",
        "64M",
        "--rw",
        "randwrite",
        "--time",
        "1s",
    ];
    for shared_offsets in [false, true] {
        let mut args = base.to_vec();
        args.push("--json");
        if shared_offsets {
            args.push("--shared-offsets");
        }
        let v = mpirun_json(2, &store, &args);
        let regions: Vec<Value> = v["ranks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["region"].clone())
            .collect();
        if shared_offsets {
            assert_eq!(regions, [Value::Null, Value::Null]);
        } else {
            let pct = |a: f64, b: f64| serde_json::json!({"start": {"pct": a}, "end": {"pct": b}});
            assert_eq!(regions, [pct(0.0, 50.0), pct(50.0, 100.0)]);
        }
        assert!(f(&v["summary"]["write"]["ios"]) > 0.0);
    }
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 64 << 20);
}

/// `--shared-offsets` means something only over ranks: outside mpirun it is a usage error.
#[test]
fn a_ranks_only_flag_outside_mpirun_is_a_usage_error() {
    let _g = shared();
    for flag in ["--shared-offsets", "--keep-rank-series"] {
        let e = fails(&["run", flag, "--time", "1s"], 2);
        assert!(e.contains(flag) && e.contains("mpirun"), "{e}");
    }
}
