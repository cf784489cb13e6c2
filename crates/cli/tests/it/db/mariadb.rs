//! The SLOB method on MariaDB (Debian's 10.11, InnoDB): a private server set up, run with
//! readers and writers, and dropped; alone on the machine (an exclusive test), so the
//! device's figures are the database's.

use super::*;

/// Set up, run and drop. The run starts with tracefs unmounted, as on a fresh machine
/// without systemd: the redo probe's syscall tracepoints still attach (iogauge mounts it, as
/// bpftrace does), and the redo log's writes and syncs are timed.
#[test]
fn mariadb_setup_run_readers_and_writers_drop() {
    require_root();
    require_mariadb();
    let _g = exclusive();
    let w = workdir();
    let dir = w.path().join("maria");
    let d = dir.to_str().unwrap();
    let m = ["--engine", "mariadb", "--dir", d];
    let mut a = vec!["setup"];
    a.extend_from_slice(&m);
    a.extend_from_slice(&["--schemas", "2", "--scale", "32M"]);
    let text = String::from_utf8_lossy(&ok(&a).stdout).into_owned();
    assert!(text.contains("loaded 2 schemas x 2048 rows"), "{text}");
    assert!(text.contains("innodb_flush_method=O_DIRECT"), "{text}");
    assert!(text.contains("one row per 16 KiB page"), "{text}");
    assert!(server_gone(&dir), "setup left its server running");

    let _unmounted = NoTracefs::new();
    let mut a = vec!["run"];
    a.extend_from_slice(&m);
    a.extend_from_slice(&[
        "--readers",
        "2",
        "--writers",
        "2",
        "--json",
        "--time",
        "3s",
        "--interval",
        "500ms",
        "--cache-limit",
        "256M",
    ]);
    let out = ok(&a);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let id = stored_id(&out.stderr);
    assert!(server_gone(&dir), "run left its server running");
    assert_eq!(v["server"]["engine"], "mariadb");
    assert!(
        v["server"]["version"].as_str().unwrap().contains("MariaDB"),
        "{}",
        v["server"]
    );
    let s = &v["summary"]["sessions"];
    assert!(f(&s["reads_s"]) > 0.0 && f(&s["updates_s"]) > 0.0, "{s}");
    let db = &v["summary"]["db"];
    assert!(f(&db["wal_bytes_s"]) > 0.0, "redo written: {db}");
    assert!(f(&db["rows_updated_s"]) > 0.0, "{db}");
    // The redo log's writes and fdatasyncs, timed by the probe on the server's syscalls.
    for (n, ms) in [
        ("wal_writes_s", "avg_wal_write_ms"),
        ("wal_syncs_s", "avg_wal_sync_ms"),
    ] {
        assert!(f(&db[n]) > 0.0 && f(&db[ms]) > 0.0, "{db}");
    }
    assert!(tracefs_mounted(), "the probe mounted tracefs");
    // InnoDB's data file reads timed by performance_schema; the doublewrite counted.
    assert!(f(&db["avg_read_ms"]) > 0.0, "{db}");
    assert!(f(&db["innodb"]["dblwr_pages_s"]) > 0.0, "{db}");
    // Average active sessions by wait event: the readers wait on the data file.
    let aas = &v["summary"]["aas"]["sessions"];
    assert!(f(&aas["innodb_data_file read"]) > 0.2, "{aas}");
    // Every page the buffer pool missed was one device read: O_DIRECT, read-ahead off.
    let c = &v["cache"];
    let (dbr, dev) = (f(&c["db_physical_reads_s"]), f(&c["device_reads_s"]));
    assert!(dbr > 100.0, "{c}");
    let ratio = dev / dbr;
    assert!(
        (0.9..=1.1).contains(&ratio),
        "device/database reads {ratio:.3}: {c}"
    );
    // One page read per row at most (the buffer pool serves some): a lookup reads only its
    // row's page, not a neighbour (the session row sits between two fillers).
    let rows = f(&v["summary"]["sessions"]["rows_s"]);
    assert!(
        dbr <= rows * 1.05,
        "{dbr:.0} pages read/s for {rows:.0} rows/s: {c}"
    );
    // A 16 KiB page each.
    let per = f(&c["device_read_mb_s"]) * 1024.0 / dev;
    assert!(
        (15.0..=17.0).contains(&per),
        "{per:.1} KiB per device read: {c}"
    );

    let text = text_of(&["show", &id.to_string()]);
    assert!(text.contains("on MariaDB 10."), "{text}");
    assert!(text.contains("MariaDB read "), "{text}");

    // `run --like` replays the run's shape with InnoDB's 16 KiB pages and names its redo.
    let like = w.path().join("like");
    let (id, like) = (id.to_string(), like.to_str().unwrap());
    let out = succeeds(&[
        "run", "--like", &id, "--target", like, "--size", "256m", "--time", "1s", "--json",
    ]);
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let l = &r["options"]["like"];
    assert_eq!(l["engine"], "mariadb", "{l}");
    assert_eq!(f(&l["shape"]["write_kib"]), 16.0, "{l}");
    // The doublewrite's copies are named, not replayed.
    assert!(f(&l["shape"]["doublewrite"]["pages_s"]) > 0.0, "{l}");
    let text = text_of(&["show", &stored_id(&out.stderr).to_string()]);
    assert!(
        text.contains("MariaDB wrote")
            && text.contains("its redo:")
            && text.contains("its doublewrite: "),
        "{text}"
    );

    let mut a = vec!["drop"];
    a.extend_from_slice(&m);
    ok(&a);
    assert!(!dir.exists(), "drop removes the directory iogauge created");
}

/// PostgreSQL's flags with --engine mariadb, and an engine that contradicts its DSN: one line
/// each, naming the flag.
#[test]
fn mariadb_mistakes_are_one_line_each() {
    let _g = shared();
    let w = workdir();
    let d = w.path().join("m");
    let d = d.to_str().unwrap();
    let e = fails(
        &[
            "db", "setup", "--engine", "mariadb", "--dir", d, "--pg-set", "a=b",
        ],
        2,
    );
    assert!(e.contains("--pg-set") && e.contains("mariadb"), "{e}");
    let e = fails(
        &[
            "db",
            "run",
            "--engine",
            "postgres",
            "--dsn",
            "mysql://u:s3cret@h/db",
        ],
        2,
    );
    assert!(
        e.contains("--engine postgres") && !e.contains("s3cret"),
        "{e}"
    );
    let e = fails(&["db", "run", "--engine", "oracle"], 2);
    assert!(e.contains("postgres or mariadb"), "{e}");
    // A flag for PostgreSQL's in-server driver; and a cache limit below the server's own
    // memory, refused before anything starts rather than thrashed.
    for (flag, value, said) in [
        ("--driver", "server", "--driver server"),
        (
            "--cache-limit",
            "96M",
            "--cache-limit 96 MiB is too small for MariaDB",
        ),
    ] {
        let e = fails(
            &[
                "db",
                "run",
                "--engine",
                "mariadb",
                "--dir",
                d,
                flag,
                value,
                "--readers",
                "1",
            ],
            2,
        );
        assert!(e.contains(said), "{e}");
    }
    assert!(!Path::new(d).exists(), "a refused run made nothing");
}

/// `iogauge watch` follows a MariaDB run: its plain lines carry the load profile and the
/// sessions active by wait event, read from the private server while the run goes on.
#[test]
fn watch_shows_a_mariadb_run_in_progress() {
    require_root();
    require_mariadb();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("maria");
    let d = dir.to_str().unwrap();
    ok(&[
        "setup",
        "--engine",
        "mariadb",
        "--dir",
        d,
        "--schemas",
        "1",
        "--scale",
        "32M",
    ]);
    let store = w.path().join("s.sqlite");
    let run = spawn_on(
        &store,
        &[
            "db",
            "run",
            "--engine",
            "mariadb",
            "--dir",
            d,
            "--readers",
            "2",
            "--time",
            "6s",
        ],
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    let out = bin()
        .env("IOGAUGE_STORE", &store)
        .args(["watch", "--plain", "--count", "3", "--interval", "500ms"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let tag = format!("| db run {}", run.id());
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(&tag)).collect();
    assert!(
        lines.iter().any(|l| l.contains("| db logical/s ")
            && l.contains(" redo MiB/s ")
            && l.contains("| active ")
            && l.contains("innodb_data_file read")),
        "{text}"
    );
    let out = run.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ok(&["drop", "--engine", "mariadb", "--dir", d]);
}

/// A MariaDB of the user's by `--dsn mysql://…` (a server the test started, an account with
/// a password, over TCP): setup, a run, a reset and a drop work on it, iogauge starts no
/// server of its own, and the password is in no output and nowhere in the results store.
#[test]
fn a_users_mariadb_by_dsn() {
    require_mariadb();
    let _g = heavy();
    let w = workdir();
    let server = UserMaria::start(&w.path().join("theirs"));
    let dsn = server.dsn();
    let store = w.path().join("s.sqlite");
    let said = |args: &[&str]| -> (std::process::Output, String) {
        let out = bin()
            .env("IOGAUGE_STORE", &store)
            .args(args)
            .output()
            .unwrap();
        let all = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {all}");
        assert!(
            !all.contains(MARIA_SECRET),
            "{args:?} echoed the password: {all}"
        );
        (out, all)
    };
    let (_, text) = said(&[
        "db",
        "setup",
        "--dsn",
        &dsn,
        "--schemas",
        "2",
        "--scale",
        "8M",
    ]);
    assert!(text.contains("loaded 2 schemas x 512 rows"), "{text}");
    assert!(
        text.contains("mysql://bench@127.0.0.1:"),
        "the server named: {text}"
    );
    let (out, _) = said(&[
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
        "--json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    // The user's server reads ahead (MariaDB's default): the result says so.
    assert!(
        v["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .starts_with("innodb_read_ahead_threshold=56:")),
        "{}",
        v["warnings"]
    );
    assert_eq!(v["server"]["engine"], "mariadb");
    let s = &v["summary"]["sessions"];
    assert!(f(&s["reads_s"]) > 0.0 && f(&s["updates_s"]) > 0.0, "{s}");
    assert!(
        f(&v["summary"]["db"]["rows_updated_s"]) > 0.0,
        "{}",
        v["summary"]["db"]
    );
    let id = stored_id(&out.stderr).to_string();
    let (_, text) = said(&["show", &id]);
    assert!(text.contains("on MariaDB 10."), "{text}");
    said(&["db", "reset", "--dsn", &dsn]);
    let (_, text) = said(&["db", "drop", "--dsn", &dsn]);
    assert!(text.contains("iogauge schemas dropped"), "{text}");
    let (ok, left) = server.root_sql("SHOW DATABASES LIKE 'iogauge%'");
    assert!(ok && left.trim().is_empty(), "schemas left: {left}");
    // Nowhere in the store's files (the database and any journal beside it).
    for f in std::fs::read_dir(w.path()).unwrap().flatten() {
        if !f.file_name().to_string_lossy().starts_with("s.sqlite") {
            continue;
        }
        let bytes = std::fs::read(f.path()).unwrap();
        assert!(
            !bytes
                .windows(MARIA_SECRET.len())
                .any(|b| b == MARIA_SECRET.as_bytes()),
            "the password is in {}",
            f.path().display()
        );
    }
}
