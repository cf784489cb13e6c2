//! `mpirun -np N iogauge db run`, on each engine: a private server per rank (`--dir
//! PATH.{rank}`, each rank the whole workload on its own server), and one server all ranks
//! share (`--dsn`, the sessions split between them as one process numbers them); one stored
//! run with the sessions' histograms merged and each rank's own summary.

use super::{mpirun, mpirun_json, stored_runs};
use crate::common::*;
use serde_json::Value;

/// Sums of the ranks' sessions figures equal the job's: operations exactly, and the
/// per-session counts laid end to end.
fn check_ranks(v: &Value, sessions_per_rank: &[u64]) {
    let ranks = v["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), sessions_per_rank.len(), "{v}");
    let ops: Vec<u64> = ranks
        .iter()
        .map(|r| u(&r["summary"]["sessions"]["ops"]))
        .collect();
    assert!(ops.iter().all(|&o| o > 0), "every rank did work: {ops:?}");
    assert_eq!(u(&v["summary"]["sessions"]["ops"]), ops.iter().sum::<u64>());
    for (r, want) in ranks.iter().zip(sessions_per_rank) {
        assert_eq!(u(&r["sessions"]), *want, "{r}");
        assert!(r["error"].is_null(), "{r}");
    }
    let per: Vec<u64> = v["per_session"].as_array().unwrap().iter().map(u).collect();
    assert_eq!(per.len() as u64, sessions_per_rank.iter().sum::<u64>());
    assert_eq!(v["interrupted"], false);
}

per_engine! {
    /// A private server per rank (`--dir PATH.{rank}`): each rank runs the whole workload on
    /// its own server; one stored run, the engine recorded, the servers' load profiles added
    /// up, no server left. PostgreSQL's clusters are set up first; MariaDB's each rank sets
    /// up on first use.
    fn a_private_server_per_rank(e) {
        let (_g, w) = db_test(e, heavy);
        let name = e.dir_name();
        if e == Engine::Postgres {
            for r in 0..2 {
                let db = Db::at(e, w.path().join(format!("{name}.{r}")));
                db.setup(&["--schemas", "2", "--scale", "2000"]);
            }
        }
        let store = w.path().join("results.sqlite");
        let all = Db::at(e, w.path().join(format!("{name}.{{rank}}")));
        let run = ["--readers", "2", "--writers", "1", "--time", "3s", "--work-unit", "8"];
        let v = mpirun_json(2, &store, &all.args("run", &[&run[..], &["--json"]].concat()));
        assert_eq!(v["kind"], "db");
        assert_eq!(v["server"]["engine"], e.name());
        // Each rank ran the whole workload (3 sessions) on its own server.
        check_ranks(&v, &[3, 3]);
        let ranks = v["ranks"].as_array().unwrap();
        for (r, k) in ranks.iter().enumerate() {
            let want = w.path().join(format!("{name}.{r}"));
            assert_eq!(k["location"], s(&want));
        }
        // Separate servers: their load profiles add up.
        let each: f64 = ranks
            .iter()
            .map(|k| f(&k["summary"]["db"]["logical_reads_s"]))
            .sum();
        let job = f(&v["summary"]["db"]["logical_reads_s"]);
        assert!((job / each - 1.0).abs() < 0.05, "{job} vs {each}");
        let sum = &v["summary"]["db"];
        assert!(f(&sum["avg_log_sync_ms"]) > 0.0, "{sum}");
        assert_eq!(stored_runs(&store), 1);
        // No server outlives the job.
        for r in 0..2 {
            let pid = e.pid_file(&w.path().join(format!("{name}.{r}")));
            assert!(!pid.exists(), "rank {r}'s server still running");
        }
        // Without {rank} every rank would start one server: said once, exit 2.
        let one = Db::at(e, w.path().join(format!("{name}.0")));
        let (code, _, err) = mpirun(2, &store, &one.args("run", &["--time", "2s"]));
        assert_eq!(code, Some(2), "{err}");
        let said: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(said.len(), 1, "{err}");
        assert!(said[0].contains("{rank}"), "{err}");
    }

    /// One server of the user's shared by the ranks (`--dsn`): the sessions split as one
    /// process numbers them, the server's load profile counted once, a password (MariaDB's
    /// account has one) nowhere in what the job printed.
    fn one_server_shared_by_the_ranks(e) {
        let (_g, w) = db_test(e, heavy);
        let server = UserServer::start(e, &w.path().join("theirs"));
        let dsn = server.dsn();
        db_ok(&["setup", "--dsn", &dsn, "--schemas", "4", "--scale", "8M"]);
        let store = w.path().join("results.sqlite");
        let on = |extra: &[&'static str]| [&["db", "run", "--dsn", &dsn][..], extra].concat();
        let run = ["--readers", "3", "--writers", "2", "--time", "3s", "--work-unit", "8"];
        let (code, out, err) = mpirun(2, &store, &on(&[&run[..], &["--json"]].concat()));
        assert_eq!(code, Some(0), "{err}");
        if let Some(secret) = server.secret() {
            assert!(
                !format!("{out}{err}").contains(secret),
                "the job echoed the password: {err}"
            );
        }
        let v: Value = serde_json::from_str(&out).expect("one JSON document on stdout");
        assert_eq!(v["server"]["engine"], e.name());
        // Five sessions over two ranks, as one process numbers them: 0–2 (readers), 3–4
        // (writers).
        check_ranks(&v, &[3, 2]);
        let ranks = v["ranks"].as_array().unwrap();
        assert_eq!(
            (u(&ranks[0]["first_session"]), u(&ranks[1]["first_session"])),
            (0, 3)
        );
        assert_eq!(v["workload"]["mode"]["readers"], 3);
        assert_eq!(v["workload"]["mode"]["writers"], 2);
        // Rank 0's sessions only read, rank 1's only update; the job has both.
        assert_eq!(f(&ranks[0]["summary"]["sessions"]["updates_s"]), 0.0);
        assert_eq!(f(&ranks[1]["summary"]["sessions"]["reads_s"]), 0.0);
        assert!(f(&v["summary"]["sessions"]["update_lat_us"]["p99"]) > 0.0);
        assert!(f(&v["summary"]["sessions"]["read_lat_us"]["p99"]) > 0.0);
        // One server: the load profile is the server's once, not once per rank.
        let job = f(&v["summary"]["db"]["logical_reads_s"]);
        let r0 = f(&ranks[0]["summary"]["db"]["logical_reads_s"]);
        assert!((job / r0 - 1.0).abs() < 0.01, "{job} vs rank 0's {r0}");
        assert_eq!(stored_runs(&store), 1);
        // More ranks than sessions: said once, exit 2.
        let two = ["--readers", "1", "--writers", "1", "--time", "2s"];
        let (code, _, err) = mpirun(3, &store, &on(&two));
        assert_eq!(code, Some(2), "{err}");
        let said: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(said.len(), 1, "{err}");
    }
}
