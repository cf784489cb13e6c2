//! Database bottlenecks, each built for real on both engines: Debian's PostgreSQL 15 (a
//! private cluster run as `postgres`; the read-bound one on PyPI's 18, for O_DIRECT) and
//! Debian's MariaDB 10.11 (a private server with iogauge's settings: a 16 MiB buffer pool,
//! O_DIRECT, read-ahead off, every commit syncing the redo). Writers on a one-row hot spot
//! wait on each other's row lock; one-row updates by 4 writers wait for the log's sync at
//! commit (PostgreSQL's WAL; MariaDB's redo, seen as the `Commit` stage); random single-row
//! reads of a table 8× the buffer pool wait for data-file reads.

use super::{assert_top, findings};
use crate::common::*;
use serde_json::Value;

/// A private server of `e`'s with one schema of `scale` (`setup` added to its setup), run
/// with `run` (`--json` added): the result, the server dropped.
fn scenario(w: &tempfile::TempDir, e: Engine, scale: &[&str], run: &[&str]) -> Value {
    let db = Db::new(w, e);
    db.setup(&[&["--schemas", "1", "--scale"], scale].concat());
    let v = json_of(&db.args("run", &[&["--json"], run].concat()));
    assert_eq!(v["server"]["engine"], e.name());
    db.drop_it();
    v
}

/// The top finding's evidence has the AAS of an event whose name starts with `event`.
fn evidence_names(v: &Value, event: &str) {
    let said = v["findings"][0]["evidence"].to_string();
    assert!(said.contains(&format!("AAS on {event}")), "{said}");
}

per_engine! {
    /// Writers on a hot spot (every operation on it) wait on each other's row locks. How
    /// long a lock is held differs by engine, so the hot spot does: PostgreSQL holds a row's
    /// lock until its commit record is flushed, so one row updated a statement at a time
    /// is enough; InnoDB releases its row locks at commit before the redo is written, so one
    /// row a statement contends on the log (`Commit`) and the CPU, not the lock, and its
    /// writers update 64 rows a statement, each holding the rows it has while it takes the
    /// next (measured on 10.11, 8 writers: work unit 1, `innodb_row_lock wait` 0.1 of 7.5
    /// AAS; work unit 64, 4.1 of 7.6 and db-locks 0.54).
    fn db_lock_bound(e) {
        let (_g, w) = db_test(e, heavy);
        // PostgreSQL: one row in its 8 KiB block; InnoDB: 64 rows of a 16 KiB page each.
        let (unit, rows) = match e {
            Engine::Postgres => ("1", "8k@0:1"),
            Engine::Mariadb => ("64", "1m@0:1"),
        };
        let v = scenario(
            &w,
            e,
            &[e.small_scale()],
            &["--writers", "8", "--work-unit", unit, "--hotspot", rows, "--time", "3s"],
        );
        assert_top(&v, "db_locks", 0.3, &[]);
    }

    /// One-row updates by 4 writers, every commit syncing the log: they wait for its write
    /// and fsync (PostgreSQL's WAL events; MariaDB's `Commit` stage, with
    /// `innodb_flush_log_at_trx_commit=1` as iogauge's private server has it).
    fn db_wal_bound(e) {
        let (_g, w) = db_test(e, heavy);
        // 8 MiB, half the 16 MiB buffer pool: the rows stay in it, and the only wait is the
        // log's (a table the size of MariaDB's pool made it read ~5,600 pages a second,
        // `db-io-reads` 0.24 beside `db-wal`).
        let v = scenario(
            &w,
            e,
            &["8M"],
            &["--writers", "4", "--work-unit", "1", "--time", "3s"],
        );
        assert_top(&v, "db_wal", 0.2, &[]);
        evidence_names(
            &v,
            match e {
                Engine::Postgres => "WAL",
                Engine::Mariadb => "Commit",
            },
        );
    }
}

/// The bar for a scenario built on its own: no other finding explains as much as
/// this share (stricter than [`super::FALSE_HIGH`]).
const OTHERS_BELOW: f64 = 0.2;

/// Words of the other engine's that a run's findings must not use.
fn foreign_words(e: Engine) -> &'static [&'static str] {
    match e {
        Engine::Postgres => &["MariaDB", "InnoDB", "innodb_", "performance_schema"],
        Engine::Mariadb => &[
            "PostgreSQL",
            "pg_stat_io",
            "shared_buffers",
            "blks_read",
            "blk_read_time",
            "WAL",
        ],
    }
}

per_engine! {
    /// 4 readers of single rows of a table 8× the buffer pool (128 MiB against 16 MiB), read
    /// with O_DIRECT: they wait for data-file reads, and the finding speaks of the engine's
    /// own memory.
    fn db_read_bound(e) {
        let (_g, w) = db_test(e, heavy);
        // Reads with O_DIRECT, as SLOB's: MariaDB's by default; PostgreSQL's from 16 on, so
        // its cluster is made with the suite's 18 (15 reads through the page cache, whose
        // read-ahead is a finding of its own).
        let pg18 = (e == Engine::Postgres).then(pg18_bin).unwrap_or_default();
        let (setup, direct, memory): (&[&str], &[&str], _) = match e {
            Engine::Postgres => (
                &["--pg-bin", &pg18, "--direct-io"],
                &["--direct-io"],
                "shared_buffers",
            ),
            Engine::Mariadb => (&[], &[], "innodb_buffer_pool_size"),
        };
        let run = ["--readers", "4", "--work-unit", "1", "--time", "10s"];
        let v = scenario(&w, e, &[&["128M"], setup].concat(), &[&run[..], direct].concat());
        let top = assert_top(&v, "db_io", 0.5, &[]);
        let all = findings(&v);
        eprintln!("findings: {all:?}");
        assert_eq!(all[0].0, "db-io-reads", "{all:?}");
        for (rule, layer, impact) in &all[1..] {
            assert!(
                *impact < OTHERS_BELOW,
                "{rule} ({layer}) {impact:.2} beside db-io-reads {top:.2}: {all:?}"
            );
        }
        evidence_names(&v, e.read_event());
        let f = &v["findings"][0];
        assert!(f["next"].as_str().unwrap().contains(memory), "{f}");
        let said = v["findings"].to_string();
        for word in foreign_words(e) {
            assert!(!said.contains(word), "{word} in a {e:?} run's findings: {said}");
        }
    }
}

/// PostgreSQL's buffered writes, written back by a flusher thread (dirty pages expire after
/// 1 s): that writeback, tagged with the root cgroup on cgroup v1, is the job's (the data
/// set's files are the tracer's), not a neighbour's. Here 8 writers on a 160 MiB table with
/// a 16 MiB buffer pool make ~2,000 writes a second, and flusher threads queue ~10% of them
/// (bpftrace, by process): before, those read as another process's writes; now the
/// others' writeback is under 5% of the job's. PostgreSQL only: MariaDB writes its data
/// files with O_DIRECT, past the page cache and its flusher.
#[test]
fn db_writeback_is_the_job_s() {
    let (_g, w) = db_test(Engine::Postgres, exclusive);
    let _e = Sysctl::set("/proc/sys/vm/dirty_expire_centisecs", "100");
    let _b = Sysctl::set("/proc/sys/vm/dirty_writeback_centisecs", "100");
    let v = scenario(
        &w,
        Engine::Postgres,
        &["20000"],
        &["--writers", "8", "--time", "8s"],
    );
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
}
