//! A campaign that varies the database engine like any other variable: PostgreSQL and
//! MariaDB on the same storage, one report comparing them.

use super::*;

#[test]
fn a_campaign_compares_postgresql_and_mariadb_on_the_same_storage() {
    let (_g, w) = root_test(busy);
    let dir = w.path();
    let store = dir.join("s.sqlite");
    std::fs::write(
        dir.join("engines.toml"),
        r#"
name = "engines"
command = "db run"
repeat = 1
baseline = "engine=postgres"
[vars]
engine = ["postgres", "mariadb"]
[options]
engine = "${engine}"
dir = "./${engine}"
readers = 2
work_unit = 1
time = "1s"
interval = "500ms"
[commands]
reset = "db"
start = "$IOGAUGE db setup --dir ./postgres --schemas 1 --scale 2000 >/dev/null && $IOGAUGE db setup --engine mariadb --dir ./mariadb --schemas 1 --scale 16M >/dev/null"
end = "$IOGAUGE db drop --dir ./postgres >/dev/null; $IOGAUGE db drop --engine mariadb --dir ./mariadb >/dev/null"
"#,
    )
    .unwrap();
    let out = campaign_in(dir, &store, &["engines.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Each engine's reset before its run: PostgreSQL's file copy, MariaDB's reload.
    assert!(err.contains("back to the data as loaded"), "{err}");
    assert!(err.contains("schemas reloaded"), "{err}");
    assert!(!dir.join("postgres").exists() && !dir.join("mariadb").exists());
    let v = export_json(&store, "engines");
    let cases: Vec<&str> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cases, ["engine=postgres", "engine=mariadb"]);
    // Each case's run is of its engine, and read.
    for (c, engine) in v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["postgres", "mariadb"])
    {
        let id = c["runs"][0]["id"].to_string();
        let out = bin()
            .args(["show", &id, "--json", "--store"])
            .arg(&store)
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["server"]["engine"], engine);
        assert!(f(&doc["summary"]["sessions"]["reads_s"]) > 0.0, "{engine}");
    }
    // The report draws both, relative to the baseline.
    let page = dir.join("engines.html");
    let out = bin()
        .args(["report", "--campaign", "engines", "--store"])
        .arg(&store)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert_success(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("engine=mariadb") && html.contains("engine=postgres"));
}
