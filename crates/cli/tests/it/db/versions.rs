//! The same run on each PostgreSQL the suite has (15 from Debian, 18 from PyPI's wheel): the
//! load profile's queries differ by version; a cluster keeps the PostgreSQL it was made with.

use super::*;

/// `db setup` + `db run --readers 1 --writers 2` on each PostgreSQL the suite has (15 from
/// Debian, the newest found by default; 18 by --pg-bin): the load profile's queries differ
/// (pg_stat_wal's WAL columns moved to pg_stat_io in 18), and both give the log writer's
/// write and sync latency.
#[test]
fn db_runs_on_postgresql_15_and_18() {
    require_root();
    let _g = busy();
    let pg18 = pg18_bin();
    for (pg_bin, major) in [(None, "15"), (Some(pg18.as_str()), "18")] {
        let w = workdir();
        let dir = w.path().join("pg");
        let d = dir.to_str().unwrap();
        let mut setup = vec!["setup", "--dir", d, "--schemas", "2", "--scale", "1000"];
        setup.extend(pg_bin.iter().flat_map(|b| ["--pg-bin", *b]));
        let out = ok(&setup);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("server_version={major}.")), "{text}");
        assert!(text.contains("track_wal_io_timing=on"), "{text}");
        let (v, _) = run_json(
            d,
            &[
                "--readers",
                "1",
                "--writers",
                "2",
                "--time",
                "2s",
                "--work-unit",
                "8",
            ],
        );
        load_profile_of(&v, major);
        if let Some(b) = pg_bin {
            a_cluster_keeps_its_postgresql(d, b);
        }
        ok(&["drop", "--dir", d]);
        assert!(server_gone(&dir));
    }
    let e = fails(
        &[
            "db",
            "setup",
            "--dir",
            "/tmp/x-never",
            "--pg-bin",
            "/nonexistent",
        ],
        2,
    );
    assert!(
        e.contains("--pg-bin /nonexistent: no executable initdb"),
        "{e}"
    );
    let e = fails(
        &[
            "db",
            "run",
            "--dir",
            "/tmp/x-never",
            "--think-time",
            "5ms..1ms",
        ],
        2,
    );
    assert!(e.contains("--think-time") && e.contains("MIN..MAX"), "{e}");
    assert!(!Path::new("/tmp/x-never").exists());
}

/// A PostgreSQL `major`'s load profile in a db run's JSON: the log writer's write and sync
/// latency, the buffers written, and I/O by process type where pg_stat_io has it (16+).
fn load_profile_of(v: &Value, major: &str) {
    let version = v["server"]["version"].as_str().unwrap_or_default();
    assert!(
        version.starts_with(&format!("{major}.")),
        "version {version}"
    );
    let load = &v["summary"]["db"];
    for k in [
        "wal_writes_s",
        "wal_syncs_s",
        "avg_wal_write_ms",
        "avg_wal_sync_ms",
    ] {
        assert!(f(&load[k]) > 0.0, "PostgreSQL {major}: db.{k} in {load}");
    }
    for k in ["checkpointer", "bgwriter", "backend"] {
        assert!(load["buffers_written_s"][k].is_number(), "{load}");
    }
    // I/O by process type from pg_stat_io (16+): the sessions' reads and their time.
    let backends = &load["by_process"]["client_backends"];
    if major == "18" {
        assert!(f(&backends["reads_s"]) > 0.0, "{backends}");
        assert!(f(&backends["avg_read_ms"]) > 0.0, "{backends}");
    } else {
        assert_eq!(
            f(&backends["reads_s"]),
            0.0,
            "no pg_stat_io before 16: {backends}"
        );
    }
    assert!(f(&v["summary"]["sessions"]["updates_s"]) > 0.0);
    assert!(f(&v["summary"]["sessions"]["reads_s"]) > 0.0);
}

/// A cluster made with one PostgreSQL (its bin directory `b`) is not run with another, and
/// runs again with its own.
fn a_cluster_keeps_its_postgresql(d: &str, b: &str) {
    let e = fails(
        &[
            "db",
            "run",
            "--dir",
            d,
            "--readers",
            "1",
            "--pg-bin",
            "/usr/lib/postgresql/15/bin",
        ],
        2,
    );
    assert!(
        e.contains("--pg-bin") && e.contains("was made with PostgreSQL 18"),
        "{e}"
    );
    ok(&[
        "run",
        "--dir",
        d,
        "--readers",
        "1",
        "--time",
        "1s",
        "--pg-bin",
        b,
    ]);
}
