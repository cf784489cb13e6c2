//! The shipped examples at smoke scale, and a database campaign on a real private PostgreSQL.

use super::*;

/// Every shipped example runs at smoke scale (the filesystem one builds loop filesystems
/// and PostgreSQL clusters: root, mkfs.xfs and mkfs.btrfs, which the test command installs).
#[test]
fn examples_run_at_smoke_scale() {
    require_root();
    let _g = heavy();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut names: Vec<String> = std::fs::read_dir(&examples)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 4, "{names:?}");
    for name in names {
        let w = workdir();
        let dir = w.path();
        let store = dir.join("s.sqlite");
        let file = examples.join(&name);
        let out = campaign_in(dir, &store, &[file.to_str().unwrap(), "--smoke"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name} --smoke failed: {err}");
        let stem = name.trim_end_matches(".toml");
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
}

/// A database campaign on a real private PostgreSQL: the cluster set up by `start`, reset to
/// the data as loaded before every run (`reset = "db"`), a warm-up before every run, dropped
/// by `end`; updates and reads both measured.
#[test]
fn db_campaign_resets_before_every_run() {
    require_root();
    let _g = heavy();
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
