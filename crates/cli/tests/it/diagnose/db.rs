//! Database bottlenecks. PostgreSQL (Debian's 15, a private cluster run as `postgres`):
//! writers on a tiny in-table hot spot wait on each other's row locks; one-row updates with
//! synchronous commit wait for the WAL's fsync. MariaDB (Debian's 10.11, a private server
//! with iogauge's settings: a 16 MiB buffer pool, O_DIRECT, read-ahead off): random
//! single-row reads of a table 8× the pool wait for data-file reads.

use super::{assert_top, findings};
use crate::common::*;
use serde_json::Value;

fn db(args: &[&str]) -> Value {
    let mut a = vec!["db"];
    a.extend_from_slice(args);
    json_of(&a)
}

/// A private PostgreSQL cluster at `dir` with one schema of `scale` rows.
fn setup(dir: &str, scale: &str) {
    succeeds(&[
        "db",
        "setup",
        "--dir",
        dir,
        "--schemas",
        "1",
        "--scale",
        scale,
    ]);
}

#[test]
fn db_lock_bound() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = dir.to_str().unwrap();
    setup(d, "2000");
    let v = db(&[
        "run",
        "--dir",
        d,
        "--json",
        "--writers",
        "8",
        "--work-unit",
        "1",
        "--hotspot",
        "8k@0:1",
        "--time",
        "3s",
    ]);
    assert_top(&v, "db_locks", 0.3, &[]);
    succeeds(&["db", "drop", "--dir", d]);
}

#[test]
fn db_wal_bound() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = dir.to_str().unwrap();
    setup(d, "2000");
    let v = db(&[
        "run",
        "--dir",
        d,
        "--json",
        "--writers",
        "4",
        "--work-unit",
        "1",
        "--time",
        "3s",
    ]);
    assert_top(&v, "db_wal", 0.2, &[]);
    succeeds(&["db", "drop", "--dir", d]);
}

/// The bar for a scenario built on its own: no other finding explains as much as
/// this share (stricter than [`super::FALSE_HIGH`]).
const OTHERS_BELOW: f64 = 0.2;

/// Words of PostgreSQL's that a MariaDB run's findings must not use.
const PG_ONLY: [&str; 6] = [
    "PostgreSQL",
    "pg_stat_io",
    "shared_buffers",
    "blks_read",
    "blk_read_time",
    "WAL",
];

#[test]
fn maria_read_bound() {
    require_root();
    require_mariadb();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("maria");
    let d = dir.to_str().unwrap();
    let m = ["--engine", "mariadb", "--dir", d];
    let mut a = vec!["setup"];
    a.extend_from_slice(&m);
    // 8192 rows of a page each: 128 MiB against the private server's 16 MiB buffer pool.
    a.extend_from_slice(&["--schemas", "1", "--scale", "128M"]);
    succeeds(&db_args(&a));
    let mut a = vec!["run"];
    a.extend_from_slice(&m);
    a.extend_from_slice(&[
        "--json",
        "--readers",
        "4",
        "--work-unit",
        "1",
        "--time",
        "10s",
    ]);
    let v = db(&a);
    assert_eq!(v["server"]["engine"], "mariadb");
    let top = assert_top(&v, "db_io", 0.5, &[]);
    let all = findings(&v);
    assert_eq!(all[0].0, "db-io-reads", "{all:?}");
    eprintln!("findings: {all:?}");
    for (rule, layer, impact) in &all[1..] {
        assert!(
            *impact < OTHERS_BELOW,
            "{rule} ({layer}) {impact:.2} beside db-io-reads {top:.2}: {all:?}"
        );
    }
    let f = &v["findings"][0];
    let aas = f["evidence"].to_string();
    assert!(aas.contains("AAS on innodb_data_file read"), "{aas}");
    assert!(
        f["next"]
            .as_str()
            .unwrap()
            .contains("innodb_buffer_pool_size"),
        "{f}"
    );
    let said = v["findings"].to_string();
    for word in PG_ONLY {
        assert!(
            !said.contains(word),
            "{word} in a MariaDB run's findings: {said}"
        );
    }
    succeeds(&db_args(&["drop", "--engine", "mariadb", "--dir", d]));
}

fn db_args<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["db"];
    a.extend_from_slice(args);
    a
}

/// PostgreSQL's buffered writes, written back by a flusher thread (dirty pages expire after
/// 1 s): that writeback, tagged with the root cgroup on cgroup v1, is the job's (the data
/// set's files are the tracer's), not a neighbour's. Here 8 writers on a 160 MiB table with
/// a 16 MiB buffer pool make ~2,000 writes a second, and flusher threads queue ~10% of them
/// (bpftrace, by process): before, those read as another process's writes; now the
/// others' writeback is under 5% of the job's.
#[test]
fn db_writeback_is_the_job_s() {
    require_root();
    let _g = exclusive();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = dir.to_str().unwrap();
    setup(d, "20000");
    let _e = Sysctl::set("/proc/sys/vm/dirty_expire_centisecs", "100");
    let _b = Sysctl::set("/proc/sys/vm/dirty_writeback_centisecs", "100");
    let v = db(&[
        "run",
        "--dir",
        d,
        "--json",
        "--writers",
        "8",
        "--time",
        "8s",
    ]);
    let shown = serde_json::to_string_pretty(&v["findings"]).unwrap_or_default();
    assert!(
        findings(&v).iter().all(|(r, ..)| r != "neighbours"),
        "the flusher's writeback of the data files is the job's: {shown}"
    );
    let ivs = v["intervals"].as_array().expect("intervals");
    let ours: f64 = ivs
        .iter()
        .flat_map(|i| {
            let dur = i["dur_s"].as_f64().unwrap_or_default();
            i["layers"]
                .as_object()
                .into_iter()
                .flat_map(|l| l.values())
                .filter_map(move |l| Some(dur * l["ours"]["write"]["req_s"].as_f64()?))
        })
        .sum();
    let theirs: f64 = ivs
        .iter()
        .filter_map(|i| i["others"].as_array())
        .flatten()
        .filter_map(|o| o["writeback"].as_f64())
        .sum();
    assert!(ours > 1000.0, "the job's writes: {ours}");
    assert!(
        theirs < 0.05 * ours,
        "others' writeback {theirs} bios beside the job's {ours} writes"
    );
    succeeds(&["db", "drop", "--dir", d]);
}
