//! Faults over ranks: a rank killed outright (Open MPI then tears the job down within about
//! two seconds), rank 0's own job failing, and a mistake in the command line every rank reads.

use super::{mpirun, rank_pids, spawn_ranks, stored, stored_runs, wait_or_kill, wait_ranks_gone};
use crate::common::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

/// kill -9 of rank 1 in the middle of a run and of a calibration: rank 0 gives it up, stores
/// what the ranks alive measured (interrupted, rank 1's error saying it died) before the
/// launcher ends the job.
#[test]
fn a_rank_killed_outright_leaves_the_rest_stored() {
    require_root();
    let _g = heavy();
    for command in ["run", "calibrate"] {
        let w = workdir();
        let store = w.path().join("results.sqlite");
        let target = w.path().join("d.{rank}");
        let mut a = vec![
            command,
            "--target",
            target.to_str().unwrap(),
            "--size",
            "64M",
        ];
        a.extend(match command {
            "run" => ["--time", "30s"],
            _ => ["--point-time", "1s"],
        });
        let mut child = spawn_ranks(2, &store, &a, Stdio::null(), Duration::from_secs(3));
        let pids = rank_pids(&store, Some(1));
        assert_eq!(pids.len(), 1, "{command}");
        // SAFETY: kill(2) on a rank this test started.
        unsafe { libc::kill(pids[0], libc::SIGKILL) };
        wait_ranks_gone(&store, command);
        if let Some(st) = wait_or_kill(&mut child) {
            assert_ne!(st.code(), Some(0), "{command}");
        }
        assert_eq!(stored_runs(&store), 1, "{command}: what ran is stored");
        let v = stored(&store);
        assert_eq!(v["interrupted"], true, "{command}");
        let ranks = v["ranks"].as_array().expect("ranks");
        assert_eq!(ranks.len(), 2, "{command}");
        let e = ranks[1]["error"].as_str().unwrap_or_default();
        assert!(e.contains("sent no part"), "{command}: {}", ranks[1]);
        assert!(ranks[0]["error"].is_null(), "{command}: {}", ranks[0]);
        match command {
            "run" => assert!(f(&v["summary"]["read"]["ios"]) > 0.0),
            _ => assert!(!v["points"].as_array().unwrap().is_empty()),
        }
    }
}

/// Rank 0's own job fails (its target shrinks under it: a read moves 0 bytes): the other
/// rank's part is still stored, with rank 0's error, and the job exits 1.
#[test]
fn rank_zero_failing_still_stores_the_others() {
    let (_g, w, store) = super::mpi_test(heavy);
    let target = w.path().join("d.{rank}");
    let t = target.to_str().unwrap();
    let args = [
        "run", "--target", t, "--size", "64M", "--time", "30s", "--json",
    ];
    let child = spawn_ranks(2, &store, &args, Stdio::piped(), Duration::from_secs(3));
    super::shrink(&w.path().join("d.0"));
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let ranks = v["ranks"].as_array().expect("ranks");
    assert!(
        ranks[0]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("d.0"),
        "{}",
        ranks[0]
    );
    assert!(ranks[1]["error"].is_null(), "{}", ranks[1]);
    let ios = f(&v["summary"]["read"]["ios"]);
    assert!(ios > 0.0);
    assert_eq!(
        ios,
        f(&ranks[1]["summary"]["read"]["ios"]),
        "the job is rank 1's part"
    );
    assert_eq!(v["interrupted"], true);
    assert_eq!(stored_runs(&store), 1);
}

/// A mistake in the command line is the same on every rank: said once (by rank 0), exit 2.
#[test]
fn a_usage_mistake_is_said_once() {
    let (_g, w, store) = super::mpi_test(shared);
    let target = w.path().join("d.{rank}");
    let t = target.to_str().unwrap();
    for args in [
        vec!["run", "--target", t, "--no-such-flag"],
        vec!["run", "--target", t, "--time", "0s"],
        vec!["calibrate", "--target", t, "--point-time", "10ms"],
        vec!["watch"],
    ] {
        let (code, _, err) = mpirun(3, &store, &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        let said: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(said.len(), 1, "{args:?}: {err}");
    }
    assert_eq!(stored_runs(&store), 0);
}
