//! The shipped examples at smoke scale, and a database campaign on a real private PostgreSQL.

use super::*;

/// The shipped examples, each a test of its own below (so that busy tests share the machine's
/// two threads); a new example without one fails here.
const EXAMPLES: [&str; 5] = [
    "filesystems",
    "filesystems-io",
    "placement",
    "queue-depth",
    "redundancy",
];

#[test]
fn every_example_has_its_smoke_test() {
    let _g = shared();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut names: Vec<String> = std::fs::read_dir(&examples)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    names.sort();
    assert_eq!(names, EXAMPLES, "add a smoke test for each new example");
}

#[test]
fn filesystems_io_runs_at_smoke_scale() {
    smoke("filesystems-io");
}

/// Builds loop filesystems and PostgreSQL clusters: root, mkfs.xfs and mkfs.btrfs, which the
/// test command installs.
#[test]
fn filesystems_runs_at_smoke_scale() {
    smoke("filesystems");
}

#[test]
fn placement_runs_at_smoke_scale() {
    smoke("placement");
}

#[test]
fn queue_depth_runs_at_smoke_scale() {
    smoke("queue-depth");
}

#[test]
fn redundancy_runs_at_smoke_scale() {
    smoke("redundancy");
}

/// A shipped example at smoke scale: two runs a case, stored, and its report from those real
/// runs rendered in a real browser without a console message.
fn smoke(stem: &str) {
    require_root();
    let _g = busy();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let name = format!("{stem}.toml");
    let w = workdir();
    let dir = w.path();
    let store = dir.join("s.sqlite");
    let file = examples.join(&name);
    let out = campaign_in(dir, &store, &[file.to_str().unwrap(), "--smoke"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name} --smoke failed: {err}");
    let v = export_json(&store, &format!("{stem}-smoke"));
    assert_eq!(v["smoke"], true);
    for c in v["cases"].as_array().unwrap() {
        assert_eq!(
            c["runs"].as_array().unwrap().len(),
            2,
            "{name}: {}",
            c["name"]
        );
    }
    assert!(!v["metrics"].as_array().unwrap().is_empty(), "{name}");

    // Its report, from real runs, in a real browser.
    let page = dir.join(format!("{stem}.html"));
    let out = bin()
        .args(["report", "--campaign", &format!("{stem}-smoke"), "-o"])
        .arg(&page)
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    for chart in ["bars:", "normalised:", "series:"] {
        assert!(
            html.contains(&format!("data-chart=\"{chart}")),
            "{name}: {chart}"
        );
    }
    if v["command"] == "db run" {
        assert!(html.contains("data-chart=\"aas:"), "{name}: no AAS chart");
    }
    let console = chromium_console(&page);
    assert!(console.is_empty(), "{name}: console messages {console:?}");
}

/// A database campaign on a real private PostgreSQL: the cluster set up by `start`, reset to
/// the data as loaded before every run (`reset = "db"`), a warm-up before every run, dropped
/// by `end`; updates and reads both measured.
#[test]
fn db_campaign_resets_before_every_run() {
    require_root();
    let _g = busy();
    let w = workdir();
    let dir = w.path();
    let store = dir.join("s.sqlite");
    std::fs::write(
        dir.join("db.toml"),
        r#"
name = "dbc"
command = "db run"
repeat = 2
warmup = "run"
[vars]
update_pct = [0, 50]
[options]
dir = "./pg"
sessions = 2
update_pct = "${update_pct}"
time = "1s"
interval = "500ms"
[commands]
reset = "db"
start = "$IOGAUGE db setup --dir ./pg --schemas 1 --scale 2000 >/dev/null"
end = "$IOGAUGE db drop --dir ./pg >/dev/null"
"#,
    )
    .unwrap();
    let out = campaign_in(dir, &store, &["db.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // 2 cases × 2 repetitions, each after a warm-up, each warm-up after a reset.
    assert_eq!(
        err.matches("back to the data as loaded").count(),
        8,
        "{err}"
    );
    assert_eq!(err.matches("(warm-up)").count(), 4, "{err}");
    assert!(!dir.join("pg").exists(), "end dropped the cluster");
    let v = export_json(&store, "dbc");
    assert_eq!(v["command"], "db run");
    let keys: Vec<&str> = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["key"].as_str().unwrap())
        .collect();
    for k in ["ops_s", "db_logical_reads_s", "commits_s"] {
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
    let runs = v["cases"][1]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(
        !runs[0]["aas"].as_array().unwrap().is_empty(),
        "AAS sampled"
    );
}
