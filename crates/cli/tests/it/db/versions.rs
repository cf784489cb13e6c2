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
        let db = Db::new(&w, Engine::Postgres);
        let mut setup = vec!["--schemas", "2", "--scale", "1000"];
        setup.extend(pg_bin.iter().flat_map(|b| ["--pg-bin", *b]));
        let text = db.setup(&setup);
        assert!(text.contains(&format!("server_version={major}.")), "{text}");
        assert!(text.contains("track_wal_io_timing=on"), "{text}");
        // 18 reads with O_DIRECT, as SLOB does; 15 cannot.
        let mut args = vec![
            "--readers",
            "1",
            "--writers",
            "2",
            "--time",
            "2s",
            "--work-unit",
            "8",
        ];
        args.extend(pg_bin.map(|_| "--direct-io"));
        let (v, _) = db.run_json(&args);
        load_profile_of(&v, major);
        read_ahead_is_weighed(&v, pg_bin.is_some());
        if let Some(b) = pg_bin {
            a_cluster_keeps_its_postgresql(&db, b);
        }
        db.drop_it();
        assert!(db.gone());
    }
    let w = workdir();
    let old = w.path().join("pg15");
    let e = fails(
        &["db", "setup", "--dir", old.to_str().unwrap(), "--direct-io"],
        2,
    );
    assert!(
        e.contains("--direct-io (debug_io_direct=data)") && e.contains("PostgreSQL 16 or newer"),
        "{e}"
    );
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

/// With `--direct-io` the server says it reads its data with O_DIRECT and the read-ahead
/// draws no warning; without it, the preflight warns exactly when a data device reads ahead
/// more than 32 of PostgreSQL's blocks (256 KiB).
fn read_ahead_is_weighed(v: &Value, direct: bool) {
    let settings = v["server"]["settings"].as_array().unwrap();
    let set = settings
        .iter()
        .any(|s| s["name"] == "debug_io_direct" && s["setting"] == "data");
    assert_eq!(set, direct, "{settings:?}");
    fn most(d: &Value) -> u64 {
        let below = d["below"].as_array().into_iter().flatten().map(most);
        below
            .chain(d["queue"]["read_ahead_kb"].as_u64())
            .max()
            .unwrap_or(0)
    }
    let pre = &v["preflight"];
    let ra = pre["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["role"] != "wal")
        .map(|t| most(&t["device"]))
        .max()
        .unwrap();
    let warned = pre["warnings"].to_string().contains("reads ahead");
    assert_eq!(warned, !direct && ra > 256, "read-ahead {ra} KiB: {pre}");
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
        "log_writes_s",
        "log_syncs_s",
        "avg_log_write_ms",
        "avg_log_sync_ms",
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
fn a_cluster_keeps_its_postgresql(db: &Db, b: &str) {
    let e = db.fails(
        "run",
        &["--readers", "1", "--pg-bin", "/usr/lib/postgresql/15/bin"],
        2,
    );
    assert!(
        e.contains("--pg-bin") && e.contains("was made with PostgreSQL 18"),
        "{e}"
    );
    // The same binaries by another path (a link to their directory, `..` in it): the same
    // PostgreSQL, accepted (issue #44: it used to be refused).
    let link = db.dir.with_file_name("pg18-bin-link");
    std::os::unix::fs::symlink(b, &link).unwrap();
    let dotted = format!("{b}/../bin");
    for bin in [b, s(&link), dotted.as_str()] {
        db.ok("run", &["--readers", "1", "--time", "1s", "--pg-bin", bin]);
    }
    std::fs::remove_file(&link).unwrap();
}
