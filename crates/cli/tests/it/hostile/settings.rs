//! Issue #44, M5: `db run --pg-set` is that run's alone. It was written into the cluster's
//! `iogauge.conf` and kept, so later plain runs used it, and a value that stopped the server
//! broke every later run. Real PostgreSQL 15; as root.

use crate::common::*;
use std::time::Duration;

/// `work_mem` as the stored run `id` says the server had it (kB), if reported.
fn work_mem(id: i64) -> Option<String> {
    let v = show_json(id, &[]);
    v["server"]["settings"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == "work_mem")
        .map(|s| s["setting"].as_str().unwrap_or_default().to_string())
}

#[test]
fn m5_pg_set_applies_to_its_run_only() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let db = Db::new(&w, Engine::Postgres);
    db.setup_small();
    let one_second = ["--readers", "1", "--time", "1s"];
    let run = |extra: &[&str]| stored_id(&db.ok("run", &[&one_second[..], extra].concat()).stderr);
    let plain = work_mem(run(&[]));
    assert_ne!(
        plain.as_deref(),
        Some("7168"),
        "iogauge's default is not 7MB"
    );
    assert_eq!(
        work_mem(run(&["--pg-set", "work_mem=7MB"])).as_deref(),
        Some("7168")
    );
    assert_eq!(
        work_mem(run(&[])),
        plain,
        "the last run's --pg-set outlived it"
    );
    // Killed while it runs (SIGKILL: no clean-up of its own), the next plain run still has
    // iogauge's settings.
    let killed_run = [
        "--readers",
        "1",
        "--time",
        "60s",
        "--pg-set",
        "work_mem=7MB",
    ];
    let mut killed = db.spawn("run", &killed_run);
    assert!(
        within(60, || !db.gone()),
        "the server of the db run never came up"
    );
    std::thread::sleep(Duration::from_secs(1));
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(within(30, || db.gone()), "its server lives on");
    assert_eq!(
        work_mem(run(&[])),
        plain,
        "a killed run's --pg-set outlived it"
    );
    // A value the server cannot start with fails its own run, and only that one.
    let out = bin()
        .args(db.args("run", &one_second))
        .args(["--pg-set", "shared_buffers=64GB"])
        .output()
        .unwrap();
    assert_exit(&out, 1);
    assert_eq!(work_mem(run(&[])), plain);
    db.drop_it();
}
