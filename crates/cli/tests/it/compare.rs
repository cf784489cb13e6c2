//! `iogauge compare CAL DB`: the placement study's table (ORION beside SLOB, issue #28) of a
//! real calibration and a real db run stored side by side, either way round, as text, JSON
//! and in `report`; `db run --disks` dividing the reads per disk, and what it is without it;
//! two other kinds refused in one line.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// `iogauge ARGS` on the store `store`, which must succeed: its stdout and stderr.
fn on(store: &Path, args: &[&str]) -> (String, String) {
    let out = bin()
        .env("IOGAUGE_STORE", store)
        .args(args)
        .output()
        .expect("spawn iogauge");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {err}");
    (String::from_utf8(out.stdout).expect("UTF-8"), err)
}

/// `iogauge ARGS --json` stored in `store`: its document and id.
fn stored(store: &Path, args: &[&str]) -> (Value, i64) {
    let (out, err) = on(store, &[args, &["--json"]].concat());
    let v = serde_json::from_str(&out).expect("JSON on stdout");
    (v, stored_id(err.as_bytes()))
}

/// The row `metric` of the table's JSON.
fn row<'a>(table: &'a Value, metric: &str) -> &'a Value {
    table["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {metric} in {table}"))
}

/// The figures of the text's line `name`: calibration, db run and ratio (`None` for `-`).
fn text_row(text: &str, name: &str) -> [Option<f64>; 3] {
    let line = text
        .lines()
        .find(|l| l.strip_prefix(name).is_some_and(|r| r.starts_with("  ")))
        .unwrap_or_else(|| panic!("no line {name:?} in {text}"));
    let figs: Vec<Option<f64>> = line[name.len()..]
        .split_whitespace()
        .map(|x| x.parse().ok())
        .collect();
    figs.try_into().unwrap_or_else(|_| panic!("{line}"))
}

/// `text` reads `want` to the digits it prints, within `rel` of it or `abs` (a figure keeps
/// three significant digits or four decimals; a ratio three decimals, or two digits in
/// exponent form below 0.001).
fn close(text: Option<f64>, want: &Value, rel: f64, abs: f64) -> bool {
    match (text, want.as_f64()) {
        (Some(t), Some(w)) => (t - w).abs() <= w.abs() * rel + abs,
        (None, None) => true,
        _ => false,
    }
}

#[test]
fn a_calibration_beside_a_db_run() {
    let (_g, w) = root_test(busy);
    let store = w.path().join("s.sqlite");
    let st = store.to_str().unwrap();
    let p = |s: &str| w.path().join(s).to_str().unwrap().to_string();
    let (cal, cal_id) = stored(
        &store,
        &[
            "calibrate",
            "--target",
            &p("cal"),
            "--size",
            "16m",
            "--point-time",
            "500ms",
            "--max-latency",
            "50ms",
            "--disks",
            "2",
        ],
    );
    let pg = p("pg");
    on(
        &store,
        &[
            "db",
            "setup",
            "--dir",
            &pg,
            "--schemas",
            "1",
            "--scale",
            "500",
        ],
    );
    let db_run = ["db", "run", "--dir", &pg, "--readers", "1", "--time", "1s"];
    let db_run = [&db_run[..], &["--work-unit", "8", "--interval", "500ms"]].concat();
    // Without --disks: the data's disks it sampled.
    let (plain, plain_id) = stored(&store, &db_run);
    let sampled = plain["cache"]["disks"]
        .as_array()
        .expect("disks sampled")
        .len();
    assert!(sampled > 0, "{}", plain["cache"]);
    assert_eq!(u(&plain["num_disks"]), sampled as u64);
    // The OS cache dropped (--cache-limit) so the first reads reach the disk.
    let more = ["--disks", "3", "--cache-limit", "80M"];
    let (db, db_id) = stored(&store, &[&db_run[..], &more].concat());
    assert_eq!(db["num_disks"], 3);
    let dev_reads = f(&db["cache"]["device_reads_s"]);
    assert!(dev_reads > 0.0, "no device reads: {}", db["cache"]);

    let (c, d) = (cal_id.to_string(), db_id.to_string());
    let (json, _) = on(&store, &["compare", &c, &d, "--json"]);
    let t: Value = serde_json::from_str(&json).unwrap();
    placement_holds_the_documents_figures(&t, &cal, &db);
    assert_eq!(
        (t["calibration"]["id"].as_i64(), t["db_run"]["id"].as_i64()),
        (Some(cal_id), Some(db_id))
    );
    assert_eq!(t["same_disks"], true, "both under the work directory");
    let (text, _) = on(&store, &["compare", &c, &d]);
    text_matches_json(&text, &t, cal_id, db_id);
    // Either order: the same table.
    assert_eq!(on(&store, &["compare", &d, &c]).0, text);
    assert_eq!(on(&store, &["compare", &d, &c, "--json"]).0, json);

    // In the report of both: the table, a row per figure.
    let page = w.path().join("r.html");
    on(&store, &["report", &c, &d, "-o", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("id=\"placement\""));
    assert_eq!(html.matches("<tr data-metric=").count(), 7);

    history_has_each_result_s_disks(&store, [(cal_id, 2), (plain_id, sampled), (db_id, 3)]);

    // Two other kinds: one line naming what compares, exit 2.
    let (_, err) = on(
        &store,
        &[
            "run",
            "--target",
            &p("data"),
            "--size",
            "8m",
            "--ios",
            "200",
        ],
    );
    let run_id = stored_id(err.as_bytes()).to_string();
    let e = fails(&["compare", &run_id, &d, "--store", st], 2);
    assert!(
        e.contains(&format!("run {run_id} is a run and run {d} a db run"))
            && e.contains("a calibration with a db run"),
        "{e}"
    );
    raw_stand_in(&store, &p("raw"), (&db, db_id), &run_id);
    on(&store, &["db", "drop", "--dir", &pg]);
}

/// `run --like DB` replays the db run's device I/O on a file (the raw stand-in): the shape
/// is the one its data disks did, the job is made of it, `compare RAW DB` puts the two side
/// by side under the database's names; a run's id or an explicit --bs is refused in a line.
fn raw_stand_in(store: &Path, target: &str, (db, db_id): (&Value, i64), run_id: &str) {
    let like = db_id.to_string();
    let (raw, raw_id) = stored(
        store,
        &[
            "run", "--like", &like, "--target", target, "--size", "16m", "--time", "1s",
        ],
    );
    let l = &raw["options"]["like"];
    assert_eq!(l["run"].as_i64(), Some(db_id), "{l}");
    let shape = &l["shape"];
    let dev_reads = f(&db["cache"]["device_reads_s"]);
    let reads = f(&shape["reads_s"]);
    assert!(
        (reads - dev_reads).abs() <= dev_reads * 0.05 + 1.0,
        "the shape's reads {reads}/s against the db run's device reads {dev_reads}/s"
    );
    // Readers only: random reads of the disks' request size, at their depth.
    assert_eq!(raw["options"]["rw"], "randread", "{shape}");
    let bs = ((f(&shape["read_kib"]) / 4.0).round().max(1.0) as u64) * 4096;
    assert_eq!(u(&raw["options"]["bs"][0]["bs"]), bs, "{}", raw["options"]);
    let depth = f(&shape["depth"]).round().max(1.0) as u64;
    assert_eq!(u(&raw["options"]["qd"]), depth);
    let (text, _) = on(store, &["show", &raw_id.to_string()]);
    assert!(
        text.contains(&format!("like db run {db_id}: its data disks did")),
        "{text}"
    );
    let (cmp, _) = on(store, &["compare", &raw_id.to_string(), &like]);
    assert!(
        cmp.contains("the run replays the db run's device I/O (run --like)"),
        "{cmp}"
    );
    let (cmp, _) = on(store, &["compare", &raw_id.to_string(), &like, "--json"]);
    let cmp: Value = serde_json::from_str(&cmp).unwrap();
    let metrics: Vec<&str> = cmp["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["metric"].as_str())
        .collect();
    for m in ["db_physical_reads_s", "db_avg_read_ms", "device_iops"] {
        assert!(metrics.contains(&m), "{m} in {metrics:?}");
    }
    let st = store.to_str().unwrap();
    let e = fails(
        &["run", "--like", run_id, "--target", target, "--store", st],
        2,
    );
    assert!(
        e.contains(&format!(
            "--like {run_id}: run {run_id} is a run, not a db run"
        )),
        "{e}"
    );
    let e = fails(
        &["run", "--like", &like, "--bs", "4k", "--target", target],
        2,
    );
    assert!(e.contains("--like") && e.contains("--bs"), "{e}");
}

/// `history` shows each result's disks: `--disks`, or the disks a db run sampled; and says
/// the db run's columns are the database's.
fn history_has_each_result_s_disks(store: &Path, want: [(i64, usize); 3]) {
    let (h, _) = on(store, &["history"]);
    for (id, disks) in want {
        let line = h
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&id.to_string()))
            .unwrap_or_else(|| panic!("no result {id}: {h}"));
        assert_eq!(
            line.split_whitespace().nth(8),
            Some(&*disks.to_string()),
            "{h}"
        );
    }
    assert!(
        h.contains("db: max_iops and lat_ms are the database's reads/s"),
        "{h}"
    );
}

/// Each row of `compare --json` is the documents' own figure: the calibration's max_iops and
/// latency, the db run's device and PostgreSQL reads and read time; per disk over each side's
/// --disks; db ÷ calibration where both are.
fn placement_holds_the_documents_figures(t: &Value, cal: &Value, db: &Value) {
    let reads = row(t, "reads_s");
    assert_eq!(reads["calibration"], cal["max_iops"]);
    assert_eq!(reads["db_run"], db["cache"]["device_reads_s"]);
    let ratio = f(&db["cache"]["device_reads_s"]) / f(&cal["max_iops"]);
    assert_eq!(f(&reads["ratio"]), ratio);
    let pg = row(t, "pg_reads_s");
    assert_eq!(pg["db_run"], db["summary"]["db"]["physical_reads_s"]);
    assert!(pg["calibration"].is_null() && pg["ratio"].is_null(), "{pg}");
    let lat = row(t, "read_ms");
    assert!(
        (f(&lat["calibration"]) - f(&cal["latency"])).abs() < 1e-9,
        "the mean criterion"
    );
    assert_eq!(lat["db_run"], db["summary"]["db"]["avg_read_ms"]);
    let per = row(t, "reads_s_per_disk");
    assert_eq!(f(&per["calibration"]), f(&cal["max_iops"]) / 2.0);
    assert_eq!(f(&per["db_run"]), f(&db["cache"]["device_reads_s"]) / 3.0);
    assert_eq!(
        row(t, "read_mib_s")["db_run"],
        db["cache"]["device_read_mb_s"]
    );
    let large = row(t, "max_mib_s");
    assert_eq!(large["calibration"], cal["max_mbps"]);
    assert!(large["db_run"].is_null());
    assert!(
        f(&row(t, "device_await_ms")["db_run"]) > 0.0,
        "reads reached the disk"
    );
    assert_eq!(
        (
            t["calibration"]["disks"].as_u64(),
            t["db_run"]["disks"].as_u64()
        ),
        (Some(2), Some(3))
    );
}

/// The text prints the JSON's figures, a line each, under a head naming both results.
fn text_matches_json(text: &str, t: &Value, cal_id: i64, db_id: i64) {
    let head = text.lines().next().unwrap();
    assert!(
        head.starts_with(&format!("calibration {cal_id} ("))
            && head.contains(&format!("against db run {db_id} (")),
        "{text}"
    );
    for (name, metric) in [
        ("reads/s", "reads_s"),
        ("PostgreSQL reads/s", "pg_reads_s"),
        ("read latency, ms", "read_ms"),
        ("device await, ms", "device_await_ms"),
        ("reads/s per disk", "reads_s_per_disk"),
        ("read MiB/s", "read_mib_s"),
        ("max MiB/s, large reads", "max_mib_s"),
    ] {
        let [c, d, r] = text_row(text, name);
        let j = row(t, metric);
        let (fig, ratio) = ((5e-3, 6e-5), (0.05, 6e-4));
        for (got, want, (rel, abs)) in [
            (c, &j["calibration"], fig),
            (d, &j["db_run"], fig),
            (r, &j["ratio"], ratio),
        ] {
            assert!(
                close(got, want, rel, abs),
                "{name}: {got:?} vs {want}\n{text}"
            );
        }
    }
    assert!(text.contains("disks: calibration 2 ("), "{text}");
    assert!(text.contains(", db run 3 ("), "{text}");
    assert!(
        text.contains("PostgreSQL reads/s: blks_read, page-cache hits included"),
        "{text}"
    );
}
