//! What only MariaDB has (Debian's 10.11, InnoDB): the redo log timed by a probe on the
//! server's syscalls, every page the buffer pool missed read from the device, and `run
//! --like` replaying its 16 KiB pages. Alone on the machine (an exclusive test: it unmounts
//! tracefs), so the device's figures are the database's. What both engines do is
//! `db/lifecycle.rs`'s.

use super::*;

/// Set up, run and drop. The run starts with tracefs unmounted, as on a fresh machine
/// without systemd: the redo probe's syscall tracepoints still attach (iogauge mounts it, as
/// bpftrace does), and the redo log's writes and syncs are timed.
#[test]
fn mariadb_setup_run_readers_and_writers_drop() {
    let (_g, w) = db_test(Engine::Mariadb, exclusive);
    let db = Db::new(&w, Engine::Mariadb);
    db.setup(&["--schemas", "2", "--scale", "32M"]);
    let _unmounted = NoTracefs::new();
    let (v, id) = db.run_json(&[
        "--readers",
        "2",
        "--writers",
        "2",
        "--time",
        "3s",
        "--cache-limit",
        "256M",
    ]);
    assert!(db.gone(), "run left its server running");
    assert!(
        v["server"]["version"].as_str().unwrap().contains("MariaDB"),
        "{}",
        v["server"]
    );
    let s = &v["summary"]["sessions"];
    assert!(f(&s["reads_s"]) > 0.0 && f(&s["updates_s"]) > 0.0, "{s}");
    let db_ = &v["summary"]["db"];
    assert!(f(&db_["log_bytes_s"]) > 0.0, "redo written: {db_}");
    // The redo log's writes and fdatasyncs, timed by the probe on the server's syscalls.
    for (n, ms) in [
        ("log_writes_s", "avg_log_write_ms"),
        ("log_syncs_s", "avg_log_sync_ms"),
    ] {
        assert!(f(&db_[n]) > 0.0 && f(&db_[ms]) > 0.0, "{db_}");
    }
    assert!(tracefs_mounted(), "the probe mounted tracefs");
    // InnoDB's data file reads timed by performance_schema; the doublewrite counted.
    assert!(f(&db_["avg_read_ms"]) > 0.0, "{db_}");
    assert!(f(&db_["innodb"]["dblwr_pages_s"]) > 0.0, "{db_}");
    // Average active sessions by wait event: the readers wait on the data file.
    let aas = &v["summary"]["aas"]["sessions"];
    assert!(f(&aas["innodb_data_file read"]) > 0.2, "{aas}");
    every_miss_is_one_device_read(&v);
    let text = text_of(&["show", &id.to_string()]);
    assert!(text.contains("MariaDB read "), "{text}");
    like_replays_its_pages(&w, id);
    db.drop_it();
    assert!(
        !db.dir.exists(),
        "drop removes the directory iogauge created"
    );
}

/// Every page the buffer pool missed was one device read (O_DIRECT, read-ahead off) of
/// 16 KiB, and one at most per row read.
fn every_miss_is_one_device_read(v: &Value) {
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
    let per = f(&c["device_read_mb_s"]) * 1024.0 / dev;
    assert!(
        (15.0..=17.0).contains(&per),
        "{per:.1} KiB per device read: {c}"
    );
}

/// `run --like` replays the run's shape with InnoDB's 16 KiB pages and names its redo; the
/// doublewrite's copies are named, not replayed.
fn like_replays_its_pages(w: &tempfile::TempDir, id: i64) {
    let like = w.path().join("like");
    let (id, like) = (id.to_string(), s(&like));
    let out = succeeds(&[
        "run", "--like", &id, "--target", like, "--size", "256m", "--time", "1s", "--json",
    ]);
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let l = &r["options"]["like"];
    assert_eq!(l["engine"], "mariadb", "{l}");
    assert_eq!(f(&l["shape"]["write_kib"]), 16.0, "{l}");
    assert!(f(&l["shape"]["doublewrite"]["pages_s"]) > 0.0, "{l}");
    let text = text_of(&["show", &stored_id(&out.stderr).to_string()]);
    assert!(
        text.contains("MariaDB wrote")
            && text.contains("its redo:")
            && text.contains("its doublewrite: "),
        "{text}"
    );
}
