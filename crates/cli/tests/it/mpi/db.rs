//! `mpirun -np N iogauge db run`: a private cluster per rank (`--dir PATH.{rank}`, each rank
//! the whole workload on its own server), and one server all ranks share (`--dsn`, the
//! sessions split between them as one process numbers them); one stored run with the
//! sessions' histograms merged and each rank's own summary.

use super::{mpirun, mpirun_json, stored_runs};
use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn setup(args: &[&str]) {
    let out = bin().arg("db").arg("setup").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "db setup {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

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

#[test]
fn a_private_cluster_per_rank() {
    require_root();
    let _g = heavy();
    let w = workdir();
    for r in 0..2 {
        let d = w.path().join(format!("pg.{r}"));
        setup(&[
            "--dir",
            d.to_str().unwrap(),
            "--schemas",
            "2",
            "--scale",
            "2000",
        ]);
    }
    let store = w.path().join("results.sqlite");
    let dir = w.path().join("pg.{rank}");
    let args = [
        "db",
        "run",
        "--dir",
        dir.to_str().unwrap(),
        "--readers",
        "2",
        "--writers",
        "1",
        "--time",
        "3s",
        "--work-unit",
        "8",
        "--json",
    ];
    let v = mpirun_json(2, &store, &args);
    assert_eq!(v["kind"], "db");
    // Each rank ran the whole workload (3 sessions) on its own server.
    check_ranks(&v, &[3, 3]);
    let ranks = v["ranks"].as_array().unwrap();
    for (r, k) in ranks.iter().enumerate() {
        let want = w.path().join(format!("pg.{r}"));
        assert_eq!(k["location"], want.to_str().unwrap());
    }
    // Separate servers: their load profiles add up.
    let each: f64 = ranks
        .iter()
        .map(|k| f(&k["summary"]["db"]["logical_reads_s"]))
        .sum();
    let job = f(&v["summary"]["db"]["logical_reads_s"]);
    assert!((job / each - 1.0).abs() < 0.05, "{job} vs {each}");
    assert_eq!(stored_runs(&store), 1);
    // No server outlives the job.
    for r in 0..2 {
        let data = w.path().join(format!("pg.{r}/data/postmaster.pid"));
        assert!(!data.exists(), "rank {r}'s server still running");
    }
    // Without {rank} every rank would start one cluster: said once, exit 2.
    let one = w.path().join("pg.0");
    let (code, _, err) = mpirun(
        2,
        &store,
        &["db", "run", "--dir", one.to_str().unwrap(), "--time", "2s"],
    );
    assert_eq!(code, Some(2), "{err}");
    let said: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(said[0].contains("{rank}"), "{err}");
}

/// A PostgreSQL the test starts itself (Debian's, as `postgres`, on a Unix socket only, trust
/// for local connections): what a `--dsn` names. Stopped when dropped.
struct Server {
    dir: PathBuf,
    bin: PathBuf,
}

impl Server {
    fn start(dir: &Path, port: u16) -> Server {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("Debian's PostgreSQL (scripts/test installs it)")
            .flatten()
            .map(|e| e.path().join("bin"))
            .find(|b| b.join("initdb").exists())
            .expect("an initdb under /usr/lib/postgresql");
        std::fs::create_dir_all(dir).unwrap();
        let own = Command::new("chown")
            .arg("postgres")
            .arg(dir)
            .status()
            .unwrap();
        assert!(own.success());
        let as_pg = |args: &[&str]| {
            let st = Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .args(args)
                .stdout(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(st.success(), "{args:?}");
        };
        let data = dir.join("data");
        let initdb = bin.join("initdb");
        as_pg(&[
            initdb.to_str().unwrap(),
            "-D",
            data.to_str().unwrap(),
            "-A",
            "trust",
            "-U",
            "postgres",
        ]);
        let opts = format!("-p {port} -k {} -c listen_addresses=''", dir.display());
        let pg_ctl = bin.join("pg_ctl");
        let log = dir.join("log");
        as_pg(&[
            pg_ctl.to_str().unwrap(),
            "-D",
            data.to_str().unwrap(),
            "-o",
            &opts,
            "-l",
            log.to_str().unwrap(),
            "-w",
            "start",
        ]);
        Server {
            dir: dir.to_path_buf(),
            bin,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args([
                "-D",
                self.dir.join("data").to_str().unwrap(),
                "-m",
                "immediate",
                "stop",
            ])
            .stdout(std::process::Stdio::null())
            .status();
    }
}

#[test]
fn one_server_shared_by_the_ranks() {
    require_root();
    let _g = heavy();
    let w = workdir();
    // The work directory must be reachable by the postgres user.
    let sock = PathBuf::from(format!("/tmp/iogauge-mpi-dsn-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&sock);
    let server = Server::start(&sock, 5497);
    let dsn = format!(
        "host={} port=5497 user=postgres dbname=postgres",
        sock.display()
    );
    setup(&["--dsn", &dsn, "--schemas", "4", "--scale", "2000"]);
    let store = w.path().join("results.sqlite");
    let args = [
        "db",
        "run",
        "--dsn",
        &dsn,
        "--readers",
        "3",
        "--writers",
        "2",
        "--time",
        "3s",
        "--work-unit",
        "8",
        "--json",
    ];
    let v = mpirun_json(2, &store, &args);
    // Five sessions over two ranks, as one process numbers them: 0–2 (readers), 3–4 (writers).
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
    let (code, _, err) = mpirun(
        3,
        &store,
        &[
            "db",
            "run",
            "--dsn",
            &dsn,
            "--readers",
            "1",
            "--writers",
            "1",
            "--time",
            "2s",
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    let said: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(said.len(), 1, "{err}");
    drop(server);
    let _ = std::fs::remove_dir_all(&sock);
}

/// MariaDB over ranks: each rank sets up and runs a private MariaDB of its own on first use
/// (`--dir PATH.{rank}`); one stored run, the engine recorded, no server left.
#[test]
fn a_private_mariadb_per_rank() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let store = w.path().join("results.sqlite");
    let dir = w.path().join("maria.{rank}");
    let args = [
        "db",
        "run",
        "--engine",
        "mariadb",
        "--dir",
        dir.to_str().unwrap(),
        "--readers",
        "1",
        "--writers",
        "1",
        "--time",
        "2s",
        "--work-unit",
        "8",
        "--json",
    ];
    let v = mpirun_json(2, &store, &args);
    assert_eq!(v["server"]["engine"], "mariadb");
    check_ranks(&v, &[2, 2]);
    assert!(
        f(&v["summary"]["db"]["avg_wal_sync_ms"]) > 0.0,
        "{}",
        v["summary"]["db"]
    );
    assert_eq!(stored_runs(&store), 1);
    for r in 0..2 {
        let pid = w.path().join(format!("maria.{r}/run/mysqld.pid"));
        assert!(!pid.exists(), "rank {r}'s server still running");
    }
}

/// One MariaDB of the user's shared by the ranks (`--dsn mysql://…`): the sessions split as
/// one process numbers them, the server's load profile counted once, the password nowhere in
/// what the job printed.
#[test]
fn one_mariadb_shared_by_the_ranks() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let server = UserMaria::start(&w.path().join("theirs"));
    let dsn = server.dsn();
    setup(&["--dsn", &dsn, "--schemas", "2", "--scale", "8M"]);
    let store = w.path().join("results.sqlite");
    let args = [
        "db",
        "run",
        "--dsn",
        &dsn,
        "--readers",
        "2",
        "--writers",
        "1",
        "--time",
        "3s",
        "--work-unit",
        "8",
        "--json",
    ];
    let (code, out, err) = mpirun(2, &store, &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !format!("{out}{err}").contains(MARIA_SECRET),
        "the job echoed the password: {err}"
    );
    let v: Value = serde_json::from_str(&out).expect("one JSON document on stdout");
    assert_eq!(v["server"]["engine"], "mariadb");
    check_ranks(&v, &[2, 1]);
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(f(&ranks[0]["summary"]["sessions"]["updates_s"]), 0.0);
    assert_eq!(f(&ranks[1]["summary"]["sessions"]["reads_s"]), 0.0);
    let job = f(&v["summary"]["db"]["logical_reads_s"]);
    let r0 = f(&ranks[0]["summary"]["db"]["logical_reads_s"]);
    assert!((job / r0 - 1.0).abs() < 0.01, "{job} vs rank 0's {r0}");
    assert_eq!(stored_runs(&store), 1);
}
