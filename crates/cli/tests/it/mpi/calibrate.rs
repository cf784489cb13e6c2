//! `mpirun -np N iogauge calibrate`: each point's outstanding I/Os shared out between the
//! ranks, one stored calibration whose points are the ranks' merged; a rank that cannot start
//! ends every rank; a rank stopped mid-point stops the calibration, which is stored.

use super::{
    mpirun, mpirun_json, rank_pids, spawn_ranks, stored, stored_runs, wait_or_kill, wait_ranks_gone,
};
use crate::common::*;
use std::process::Stdio;
use std::time::Duration;

/// A calibration of `target` (a path with `{rank}`) with `extra`.
fn args(target: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let size = ["--size", "64m", "--max-latency", "50ms"];
    owned(&[&["calibrate", "--target", s(target)], &size, extra])
}

#[test]
fn calibrate_across_two_ranks() {
    let (_g, w, store) = super::mpi_test(heavy);
    let a = args(
        &w.path().join("c.{rank}"),
        &["--point-time", "500ms", "--json"],
    );
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let v = mpirun_json(2, &store, &a);
    assert_eq!(v["kind"], "calibrate");
    let ranks = v["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 2);
    for (i, r) in ranks.iter().enumerate() {
        assert_eq!(r["rank"], i);
        let t = format!("{}/c.{i}", w.path().display());
        assert_eq!(r["targets"][0], t.as_str());
    }
    for k in ["max_iops", "latency", "max_mbps", "max_pmbps"] {
        assert!(f(&v[k]) > 0.0, "{k}: {}", v[k]);
    }
    let points = v["points"].as_array().unwrap();
    for p in points {
        // Each point is the ranks' together: its I/Os are theirs, summed.
        let by_rank: Vec<u64> = p["rank_ios"]
            .as_array()
            .expect("rank_ios")
            .iter()
            .map(u)
            .collect();
        assert_eq!(by_rank.len(), 2, "{p}");
        assert_eq!(u(&p["ios"]), by_rank.iter().sum::<u64>(), "{p}");
        if p["step"] == "single" || u(&p["outstanding"]) == 1 {
            // One outstanding I/O, or one process on one host: rank 0 alone.
            assert_eq!((by_rank[1], u(&p["workers"])), (0, 1), "{p}");
            assert!(by_rank[0] > 0, "{p}");
        } else {
            // Shared out: every rank did I/O, each on its own worker.
            assert!(by_rank.iter().all(|&x| x > 0), "{p}");
            assert_eq!(u(&p["workers"]), 2, "{p}");
        }
    }
    // max_iops is the whole job's: the point it comes from ran on both ranks.
    let best = points
        .iter()
        .rfind(|p| p["step"] == "small" && p["outstanding"] == v["outstanding"])
        .expect("the max_iops point");
    assert!(
        (f(&best["iops"]) - f(&v["max_iops"])).abs() < 1e-6,
        "{best}"
    );
    assert!(u(&best["outstanding"]) >= 2, "{best}");
    assert_eq!(stored_runs(&store), 1, "exactly one stored calibration");
    // The text form names the ranks and each point's I/Os by rank.
    let shown = bin()
        .env("IOGAUGE_STORE", &store)
        .args(["show", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("ranks: 2 on 1 host"), "{text}");
    assert!(text.contains("I/Os by rank"), "{text}");
}

#[test]
fn a_rank_that_cannot_start_or_is_stopped_ends_the_calibration() {
    let (_g, w, store) = super::mpi_test(heavy);
    // Rank 1's target is a directory: no rank measures, nothing is stored.
    std::fs::create_dir(w.path().join("c.1")).unwrap();
    let a = args(&w.path().join("c.{rank}"), &["--point-time", "500ms"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (code, _, err) = mpirun(2, &store, &a);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("rank 1") && err.contains("c.1"), "{err}");
    assert_eq!(stored_runs(&store), 0, "{err}");
    std::fs::remove_dir(w.path().join("c.1")).unwrap();
    // SIGINT to rank 1 in the middle of the search: all stop, the points measured are kept.
    let a = args(
        &w.path().join("c.{rank}"),
        &["--point-time", "1s", "--json"],
    );
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    // Two points of 1 s in.
    let mut child = spawn_ranks(2, &store, &a, Stdio::null(), Duration::from_secs(3));
    let pids = rank_pids(&store, Some(1));
    assert_eq!(pids.len(), 1);
    // SAFETY: kill(2) on a rank this test started.
    unsafe { libc::kill(pids[0], libc::SIGINT) };
    wait_ranks_gone(&store, "SIGINT to rank 1");
    if let Some(st) = wait_or_kill(&mut child) {
        assert_eq!(st.code(), Some(130));
    }
    assert_eq!(stored_runs(&store), 1);
    let v = stored(&store);
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["ranks"].as_array().map(Vec::len), Some(2));
    let points = v["points"].as_array().unwrap();
    assert!(
        !points.is_empty(),
        "the points measured before the stop are kept"
    );
    assert!(points.len() < 8, "stopped early: {} points", points.len());
}
