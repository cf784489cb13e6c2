//! A private server's life, on each engine: setup, read and write runs with every layer in
//! the JSON, show, history and report, reset and drop; the page cache capped by a memory
//! cgroup; Ctrl-C; `watch` following a run.

use super::*;

per_engine! {
    /// Set up, run readers (every layer in every interval) and writers (the log and dirty
    /// pages), show, list, report, reset and drop. PostgreSQL's in-server driver is the
    /// default; its client driver is run too (MariaDB has only the client one, its default).
    /// MariaDB's redo probe and `run --like` are `db/mariadb.rs`'s.
    fn setup_run_show_reset_drop(e) {
        let (_g, w) = db_test(e, busy);
        let db = Db::new(&w, e);
        let (scale, says): (_, &[&str]) = match e {
            Engine::Postgres => (
                "2000",
                &[
                    "loaded 2 schemas x 2000 rows",
                    "one row per 8 KiB block",
                    "enable_bitmapscan=off",
                    "track_io_timing=on",
                ],
            ),
            Engine::Mariadb => (
                "32M",
                &[
                    "loaded 2 schemas x 2048 rows",
                    "one row per 16 KiB page",
                    "innodb_flush_method=O_DIRECT",
                ],
            ),
        };
        let text = db.setup(&["--schemas", "2", "--scale", scale]);
        for s in says {
            assert!(text.contains(s), "{s}: {text}");
        }
        assert!(db.gone(), "setup left its server running");

        // Readers: every interval carries the database layer and wait events.
        let (v, id) = db.run_json(&["--readers", "2", "--time", "2s", "--work-unit", "8"]);
        readers_have_every_layer(&v);
        assert_eq!(v["server"]["engine"], e.name());
        assert!(db.gone(), "run left its server running");

        // Writers make WAL (redo) and dirty buffers.
        let heavy = ["--writers", "2", "--time", "2s", "--redo-stress", "heavy"];
        let (v, writers) = db.run_json(&heavy);
        let sum = &v["summary"]["db"];
        assert!(f(&sum["log_bytes_s"]) > 0.0, "{sum}");
        assert!(f(&sum["rows_updated_s"]) > 0.0, "{sum}");
        assert!(f(&v["summary"]["sessions"]["updates_s"]) > 0.0);
        let driver = match e {
            Engine::Postgres => "server",
            Engine::Mariadb => "client",
        };
        assert_eq!(v["workload"]["driver"], driver, "the default driver");
        if e == Engine::Postgres {
            the_client_driver(&db);
        }

        // Stored and shown; listed as a db run.
        let text = text_of(&["show", &id.to_string()]);
        for s in ["iogauge db run: 2 readers", "average active sessions", e.shown_as()] {
            assert!(text.contains(s), "{s}: {text}");
        }
        assert!(text.contains(&format!("{driver} driver")), "{text}");
        assert!(text_of(&["history"]).contains(" db "));

        shown_at_a_coarser_interval(writers);
        both_runs_in_one_report(&w.path().join("db.html"), id, writers);

        db.ok("reset", &[]);
        assert!(db.gone());
        db.drop_it();
        assert!(!db.dir.exists(), "drop removes the directory iogauge created");
        let err = db.fails("reset", &[], 2);
        assert!(err.contains(e.none_here()), "{err}");
    }
}

/// PostgreSQL's client driver: one statement per operation, the same figures.
fn the_client_driver(db: &Db) {
    let (v, _) = db.run_json(&[
        "--sessions",
        "2",
        "--update-pct",
        "50",
        "--time",
        "1s",
        "--driver",
        "client",
    ]);
    assert_eq!(v["workload"]["driver"], "client");
    assert!(f(&v["summary"]["sessions"]["reads_s"]) > 0.0);
    assert!(f(&v["summary"]["sessions"]["updates_s"]) > 0.0);
}

/// A readers' run: every interval carries the database layer, the wait events and the
/// devices; the sessions' operations add up over the intervals.
fn readers_have_every_layer(v: &Value) {
    assert_eq!(v["kind"], "db");
    assert_eq!(v["interrupted"], false);
    let ivs = v["intervals"].as_array().unwrap();
    assert_eq!(ivs.len(), 4);
    for iv in ivs {
        for k in [
            "logical_reads_s",
            "physical_reads_s",
            "commits_s",
            "rows_updated_s",
            "log_bytes_s",
            "log_syncs_s",
        ] {
            assert!(iv["db"][k].is_number(), "db.{k} in {iv}");
        }
        for k in ["checkpointer", "bgwriter", "backend"] {
            assert!(iv["db"]["buffers_written_s"][k].is_number());
        }
        assert!(iv["aas"]["sessions"].is_object());
        assert!(iv["disks"].is_object(), "device figures on the same grid");
    }
    let s = &v["summary"];
    assert!(f(&s["sessions"]["reads_s"]) > 0.0);
    assert!(f(&s["db"]["logical_reads_s"]) >= 8.0 * f(&s["sessions"]["reads_s"]) * 0.99);
    let ops: u64 = v["per_session"].as_array().unwrap().iter().map(u).sum();
    let by_interval: f64 = ivs
        .iter()
        .map(|i| f(&i["sessions"]["ops_s"]) * f(&i["dur_s"]))
        .sum();
    assert!(
        (by_interval - ops as f64).abs() < 1.0,
        "{by_interval} vs {ops}"
    );
    assert!(v["cache"]["page_cache_pct"].is_number(), "{}", v["cache"]);
}

/// At a coarser interval: 2 s measured on a 500 ms grid is 2 intervals of 1 s, whose
/// operations add up to the recorded ones'.
fn shown_at_a_coarser_interval(id: i64) {
    let coarse = show_json(id, &["--interval", "1s"]);
    let fine = show_json(id, &["--interval", "500ms"]);
    let ops = |v: &Value| -> Vec<u64> { measured(v).map(|i| u(&i["sessions"]["ops"])).collect() };
    assert_eq!(ops(&coarse).len(), 2, "{coarse}");
    assert_eq!(
        ops(&coarse).iter().sum::<u64>(),
        ops(&fine).iter().sum::<u64>()
    );
    let p99 = f(&coarse["intervals"][1]["sessions"]["update_lat_us"]["p99"]);
    assert!(p99 > 0.0, "percentiles from the stored histograms");
}

/// Both runs in one report, in a real browser.
fn both_runs_in_one_report(page: &Path, id: i64, writers: i64) {
    let (id, writers) = (id.to_string(), writers.to_string());
    succeeds(&["report", &id, &writers, "-o", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(page).unwrap();
    assert_eq!(
        html.matches("data-chart=\"aas:").count(),
        2,
        "one AAS chart per run"
    );
    for chart in [
        "series:ops",
        "series:load",
        "series:latency",
        "series:device_iops",
    ] {
        assert!(html.contains(chart), "{chart}");
    }
    let console = chromium_console(page);
    assert!(console.is_empty(), "console: {console:?}");
}

per_engine! {
    /// With the server's memory (page cache included) capped, reads reach the disk: most of
    /// the database's physical reads show up as device reads, and the sessions wait on the
    /// data file. The cap: 80 MiB for PostgreSQL; MariaDB's server alone needs more (96 MiB
    /// is refused, `db/errors.rs`), so 256 MiB, its data set read with O_DIRECT anyway.
    fn cache_limit_sends_reads_to_the_disk(e) {
        let (_g, w) = db_test(e, heavy);
        let db = Db::new(&w, e);
        // 2 × 64 MiB against the 16 MiB buffer pool.
        db.setup(&["--schemas", "2", "--scale", "64M"]);
        let cap = match e {
            Engine::Postgres => "80M",
            Engine::Mariadb => "256M",
        };
        let (v, id) = db.run_json(&["--readers", "2", "--time", "2s", "--cache-limit", cap]);
        match e {
            Engine::Postgres => reads_per_relation(&v, id),
            // MariaDB's load profile has no reads per relation (PostgreSQL's pg_statio).
            Engine::Mariadb => assert!(v["relations"].as_array().is_none_or(Vec::is_empty)),
        }
        let c = &v["cache"];
        assert!(f(&c["db_physical_reads_s"]) > 100.0, "{c}");
        let pct = f(&c["page_cache_pct"]);
        assert!(
            pct < 50.0,
            "page cache still served {pct}% under the limit: {c}"
        );
        assert!(f(&v["summary"]["db"]["avg_read_ms"]) > 0.0);
        let aas = &v["summary"]["aas"]["sessions"];
        assert!(f(&aas[e.read_event()]) > 0.2, "{aas}");
        db.drop_it();
    }
}

/// The reads per relation (pg_statio) of iogauge's schemas: their tables and indexes are
/// there, their blocks read/s add up to most of PostgreSQL's blks_read/s and never more (the
/// rest is the catalog's), and the summary's table shows them.
fn reads_per_relation(v: &Value, id: i64) {
    let rels = v["relations"].as_array().expect("relations in the JSON");
    let ours: Vec<&Value> = rels
        .iter()
        .filter(|r| r["schema"].as_str().unwrap().starts_with("iogauge_"))
        .collect();
    for (schema, rel, kind) in [("iogauge_1", "cf1", "table"), ("iogauge_2", "cf1", "table")] {
        assert!(
            ours.iter()
                .any(|r| r["schema"] == schema && r["relation"] == rel && r["kind"] == kind),
            "no {schema}.{rel} in {rels:?}"
        );
    }
    assert!(ours.iter().any(|r| r["kind"] == "index"), "{rels:?}");
    let read = |r: &Value| {
        ["heap_blks_read_s", "idx_blks_read_s"]
            .iter()
            .filter_map(|k| r[*k].as_f64())
            .sum::<f64>()
    };
    let sum: f64 = ours.iter().map(|r| read(r)).sum();
    let blks_read_s = f(&v["summary"]["db"]["physical_reads_s"]);
    // The two windows differ by the few ms of the snapshot queries: 1% of slack above.
    assert!(
        sum <= blks_read_s * 1.01 && sum > 0.5 * blks_read_s,
        "relations read {sum}/s, the database {blks_read_s}/s"
    );
    let text = text_of(&["show", &id.to_string()]);
    assert!(text.contains("relations by blocks read/s"), "{text}");
    assert!(text.contains("iogauge_1.cf1"), "{text}");
}

per_engine! {
    /// Ctrl-C in a run: the sessions and the server stop within seconds, exit 130, and the
    /// partial result is printed and stored.
    fn ctrl_c_stops_sessions_and_server(e) {
        let (_g, w) = db_test(e, heavy);
        let db = Db::new(&w, e);
        db.setup_small();
        let child = db.spawn("run", &["--readers", "2", "--time", "60s", "--json"]);
        std::thread::sleep(std::time::Duration::from_secs(3));
        sigint(&child);
        let t = std::time::Instant::now();
        let out = child.wait_with_output().unwrap();
        assert!(t.elapsed().as_secs() < 15, "took {:?} to stop", t.elapsed());
        assert_exit(&out, 130);
        let v: Value = serde_json::from_slice(&out.stdout).expect("partial result printed");
        assert_eq!(v["interrupted"], true);
        assert!(f(&v["summary"]["sessions"]["ops"]) > 0.0);
        stored_id(&out.stderr);
        assert!(db.gone(), "a server process outlived Ctrl-C");
        db.drop_it();
    }

    /// `iogauge watch` follows a database run: its plain lines carry the load profile (the
    /// log by the engine's name: WAL, redo) and the sessions active by wait event, read from
    /// the private server while the run goes on; the readers of a table twice the buffer
    /// pool are seen on the data file.
    fn watch_follows_a_db_run_in_progress(e) {
        let (_g, w) = db_test(e, heavy);
        let db = Db::new(&w, e);
        db.setup(&["--schemas", "1", "--scale", "32M"]);
        // A store of the test's own: watch follows the newest run of its store, and on the
        // shared one that could be another test's.
        let store = w.path().join("s.sqlite");
        let run = spawn_on(&store, &db.args("run", &["--readers", "2", "--time", "6s"]));
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
        assert!(!lines.is_empty(), "run not followed: {text}");
        let log = match e {
            Engine::Postgres => " WAL MiB/s ",
            Engine::Mariadb => " redo MiB/s ",
        };
        assert!(
            lines.iter().any(|l| l.contains("| db logical/s ")
                && l.contains(log)
                && l.contains("| active ")),
            "{text}"
        );
        let busy = lines.iter().any(|l| {
            l.split("| active")
                .nth(1)
                .is_some_and(|a| !a.trim().starts_with("none"))
        });
        assert!(busy, "no active session seen: {text}");
        assert!(lines.iter().any(|l| l.contains(e.read_event())), "{text}");
        let out = run.wait_with_output().unwrap();
        assert_success(&out);
        db.drop_it();
    }
}
