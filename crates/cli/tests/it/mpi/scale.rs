//! Many ranks on this host (oversubscribed): the parts merged up the binomial tree into one
//! result whatever fails where, the live counts reduced on the way, and a straggler named.

use super::{
    mpirun_json, rank_pids, spawn_ranks, stored, stored_runs, wait_or_kill, wait_ranks_gone,
};
use crate::common::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

fn rows(v: &Value) -> &Vec<Value> {
    v["ranks"].as_array().expect("ranks")
}

/// Every rank has its row, in rank order; the job's I/Os are the ranks' I/Os summed (the
/// merged series and the rows came up the same tree).
fn check_sum(v: &Value, n: usize) {
    let ranks = rows(v);
    let order: Vec<u64> = ranks.iter().map(|r| r["rank"].as_u64().unwrap()).collect();
    assert_eq!(order, (0..n as u64).collect::<Vec<_>>());
    let sum: f64 = ranks.iter().map(|r| f(&r["summary"]["read"]["ios"])).sum();
    assert_eq!(f(&v["summary"]["read"]["ios"]), sum, "{}", v["summary"]);
}

/// 5 and 8 ranks: one result; rank 0 received ⌈log2 N⌉ parts (its children's subtrees), not
/// N − 1; live counts came from its children alone. With 8, rank 2 (an inner rank: rank 3's
/// part goes through it) fails mid-job (its file shrinks under it): its error is kept, rank
/// 3's part still arrives, the stop reaches every rank and the job is stored, exit 1.
#[test]
fn ranks_merge_up_the_tree_whatever_fails() {
    let (_g, w, store) = super::mpi_test(heavy);
    let target = w.path().join("d.{rank}");
    let t = target.to_str().unwrap();
    let v = mpirun_json(
        5,
        &store,
        &[
            "run",
            "--target",
            t,
            "--size",
            "16M",
            "--time",
            "2s",
            "--interval",
            "500ms",
            "--json",
        ],
    );
    check_sum(&v, 5);
    let g = &v["gather"];
    assert_eq!(g["shape"], "tree");
    assert_eq!(g["messages"], 3, "rank 0's children 1, 2, 4: {g}");
    assert!(f(&g["live_bytes"]) > 0.0, "{g}");
    assert!(rows(&v).iter().all(|r| r["error"].is_null()));

    let store = w.path().join("eight.sqlite");
    let args = [
        "run",
        "--target",
        t,
        "--size",
        "16M",
        "--time",
        "30s",
        "--interval",
        "500ms",
        "--json",
    ];
    let child = spawn_ranks(8, &store, &args, Stdio::piped(), Duration::from_secs(3));
    super::shrink(&w.path().join("d.2"));
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    check_sum(&v, 8);
    let ranks = rows(&v);
    let e2 = ranks[2]["error"].as_str().unwrap_or_default();
    assert!(e2.contains("d.2"), "{}", ranks[2]);
    for r in [1, 3, 4, 5, 6, 7] {
        assert!(ranks[r]["error"].is_null(), "{}", ranks[r]);
        assert!(f(&ranks[r]["summary"]["read"]["ios"]) > 0.0, "{}", ranks[r]);
    }
    assert_eq!(v["interrupted"], true);
    assert_eq!(stored_runs(&store), 1);
}

/// kill -9 of rank 4 of 8, an inner rank (ranks 5, 6 and 7 send their parts through it):
/// rank 0 gives its subtree up, stores what ranks 0–3 measured before the launcher ends
/// the job, and every rank of the lost subtree has a row saying why.
#[test]
fn an_inner_rank_killed_takes_its_subtree() {
    let (_g, w, store) = super::mpi_test(heavy);
    let target = w.path().join("d.{rank}");
    let args = [
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "16M",
        "--time",
        "30s",
        "--interval",
        "200ms",
    ];
    let mut child = spawn_ranks(8, &store, &args, Stdio::null(), Duration::from_secs(3));
    let pids = rank_pids(&store, Some(4));
    assert_eq!(pids.len(), 1);
    // SAFETY: kill(2) on a rank this test started.
    unsafe { libc::kill(pids[0], libc::SIGKILL) };
    wait_ranks_gone(&store, "run");
    if let Some(st) = wait_or_kill(&mut child) {
        assert_ne!(st.code(), Some(0));
    }
    assert_eq!(stored_runs(&store), 1, "what ran is stored");
    let v = stored(&store);
    assert_eq!(v["interrupted"], true);
    let ranks = rows(&v);
    assert_eq!(ranks.len(), 8);
    let e4 = ranks[4]["error"].as_str().unwrap_or_default();
    assert!(e4.contains("sent no part"), "{}", ranks[4]);
    for r in &ranks[5..8] {
        let e = r["error"].as_str().unwrap_or_default();
        assert!(e.contains("through rank 4"), "{r}");
    }
    for r in &ranks[..4] {
        assert!(r["error"].is_null(), "{r}");
    }
    check_sum(&v, 8);
}

/// 8 ranks, rank 5's target a loop device held to 150 reads/s by a cgroup v1 throttle, the
/// others files on the disk: the result names rank 5 (and no other) as a straggler, with its
/// host.
#[test]
fn a_throttled_rank_is_named_a_straggler() {
    let (_g, w) = root_test(heavy);
    let l = Loop::direct(&w.path().join("slow.img"), 32);
    let _t = Throttle::new(&l.0, 150);
    std::os::unix::fs::symlink(&l.0, w.path().join("d.5")).unwrap();
    let store = w.path().join("results.sqlite");
    let target = w.path().join("d.{rank}");
    let v = mpirun_json(
        8,
        &store,
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "16M",
            "--allow-overwrite",
            "--qd",
            "4",
            "--time",
            "3s",
            "--json",
        ],
    );
    let slow = f(&rows(&v)[5]["summary"]["read"]["iops"]);
    assert!(slow < 200.0, "held to 150 reads/s: {slow}");
    let findings = v["findings"].as_array().unwrap();
    let s: Vec<&Value> = findings
        .iter()
        .filter(|x| x["rule"] == "stragglers")
        .collect();
    assert_eq!(s.len(), 1, "{findings:?}");
    let title = s[0]["title"].as_str().unwrap();
    let host = rows(&v)[5]["host"].as_str().unwrap();
    assert!(title.contains(&format!("rank 5 on {host}")), "{title}");
    for r in [0, 1, 2, 3, 4, 6, 7] {
        assert!(!title.contains(&format!("rank {r} ")), "{title}");
    }
    // The text names it too, with the per-rank table.
    let shown = bin()
        .env("IOGAUGE_STORE", &store)
        .args(["show", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("straggler"), "{text}");
    assert!(
        text.contains("end of the job: rank 0 received 3 parts"),
        "{text}"
    );
}

/// `calibrate` over 5 ranks: each point's parts merged up the tree are the ranks' together
/// (the point's I/Os their sum, every rank with a share of it did I/O, one worker each on
/// this 2-core host), one stored calibration with a row per rank.
#[test]
fn a_calibration_over_five_ranks_merges_each_point_up_the_tree() {
    let (_g, w, store) = super::mpi_test(heavy);
    let target = w.path().join("c.{rank}");
    let v = mpirun_json(
        5,
        &store,
        &[
            "calibrate",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "32m",
            "--max-latency",
            "50ms",
            "--point-time",
            "500ms",
            "--json",
        ],
    );
    assert_eq!(rows(&v).len(), 5);
    assert!(f(&v["max_iops"]) > 0.0);
    let points = v["points"].as_array().unwrap();
    assert!(!points.is_empty());
    for p in points {
        let by_rank: Vec<u64> = p["rank_ios"].as_array().unwrap().iter().map(u).collect();
        assert_eq!(by_rank.len(), 5, "{p}");
        assert_eq!(u(&p["ios"]), by_rank.iter().sum::<u64>(), "{p}");
        if p["step"] != "single" {
            let n = u(&p["outstanding"]);
            // Rank r's share: n / 5, the first n mod 5 ranks one more.
            for (r, ios) in by_rank.iter().enumerate() {
                let share = n / 5 + u64::from((r as u64) < n % 5);
                assert_eq!(*ios > 0, share > 0, "rank {r}: {p}");
            }
        }
    }
    assert_eq!(stored_runs(&store), 1);
}
