//! Where a cluster's data goes: schemas over tablespaces, WAL apart, the preflight naming
//! every place, and the hot spot.

use super::*;

/// `db setup --target A,B --wal-dir W`: schemas round-robin over tablespaces in A and B, the
/// preflight names data, tablespaces and WAL (before loading and with the run's JSON), the
/// hot spot reaches the sessions, `reset` restores the tablespaces and `drop` removes them.
#[test]
fn placement_preflight_and_hotspot() {
    let (_g, w) = db_test(Engine::Postgres, heavy);
    let p = |s: &str| w.path().join(s).to_str().unwrap().to_string();
    let (d, a, b, wal) = (p("pg"), p("ts-a"), p("ts-b"), p("wal"));
    let targets = format!("{a},{b}");
    let db = Db::at(Engine::Postgres, d.clone().into());
    let text = db.setup(&[
        "--schemas",
        "3",
        "--scale",
        "500",
        "--target",
        &targets,
        "--wal-dir",
        &wal,
    ]);
    setup_names_every_place(&text, [&d, &a, &b, &wal]);
    let (v, _) = db.run_json(&[
        "--readers",
        "2",
        "--time",
        "2s",
        "--work-unit",
        "8",
        "--hotspot",
        "400k@1M:2",
    ]);
    assert_eq!(
        v["workload"]["hotspot"],
        serde_json::json!({"offset_blocks": 128, "size_blocks": 50, "every": 2})
    );
    run_names_every_place(&v, [&d, &a, &b, &wal]);
    assert!(f(&v["summary"]["sessions"]["reads_s"]) > 0.0);
    // A hot spot past the end of a schema is refused, naming the flag.
    let e = db.fails("run", &["--readers", "1", "--hotspot", "1M@3M:2"], 2);
    assert!(
        e.contains("hotspot") && e.contains("past the 500 rows"),
        "{e}"
    );
    db.ok("reset", &[]);
    let (v, _) = db.run_json(&["--readers", "1", "--time", "1s", "--work-unit", "8"]);
    assert!(
        f(&v["summary"]["sessions"]["reads_s"]) > 0.0,
        "runs after reset"
    );
    db.drop_it();
    for gone in [&d, &a, &b, &wal] {
        assert!(!Path::new(gone).exists(), "{gone} left behind");
    }
}

/// Setup's preflight names the data, tablespace and WAL directories and where each schema
/// went; PostgreSQL made its version directory in each target.
fn setup_names_every_place(text: &str, [d, a, b, wal]: [&str; 4]) {
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
    for t in [a, b] {
        let inside: Vec<String> = std::fs::read_dir(t)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            inside.iter().any(|n| n.starts_with("PG_")),
            "{t}: {inside:?}"
        );
    }
}

/// The run's JSON carries the preflight: every place in order with its role, and how much
/// of the data each holds.
fn run_names_every_place(v: &Value, [d, a, b, wal]: [&str; 4]) {
    let roles: Vec<(&str, &str)> = v["preflight"]["targets"]
        .as_array()
        .expect("preflight in the JSON")
        .iter()
        .map(|t| (t["role"].as_str().unwrap(), t["path"].as_str().unwrap()))
        .collect();
    let want = [
        format!("{d}/data"),
        a.to_string(),
        b.to_string(),
        wal.to_string(),
    ];
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
}
