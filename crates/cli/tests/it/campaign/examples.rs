//! The shipped examples at smoke scale, and a database campaign on a real private PostgreSQL.

use super::*;

/// The shipped examples, each a test of its own below (so that busy tests share the machine's
/// two threads); a new example without one fails here.
const EXAMPLES: [&str; 6] = [
    "filesystems",
    "filesystems-io",
    "placement",
    "queue-depth",
    "redundancy",
    "redundancy-db",
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
/// test command installs. The raw cases are stand-ins replaying the ext4 runs of the same
/// repetition, and every metric of every filesystem case has a ratio against raw.
#[test]
fn filesystems_runs_at_smoke_scale() {
    let (_dir, v) = smoke_with("filesystems", &[]);
    let store = v["store"].as_str().unwrap().to_string();
    // Every metric but those with no raw counterpart: buffer accesses, and the percentiles of
    // an operation (the raw side's operation latency is a sum of means).
    let no_raw =
        |k: &str| k == "db_logical_reads_s" || (k.starts_with("op_") && k.contains("_p99"));
    let (mut shown, mut missing) = (Vec::new(), Vec::new());
    for m in v["metrics"].as_array().unwrap() {
        let key = m["key"].as_str().unwrap();
        for c in m["cases"].as_array().unwrap() {
            let case = c["case"].as_str().unwrap();
            let r = &c["ratio"]["ratio"];
            // A raw side that did none of it in a repetition (a read-only replay writes only
            // when its db run's disks did) gives no ratio, rightly: the statistics refuse a
            // baseline sample of 0.
            let raw_samples: Vec<f64> = m["cases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["case"] == entry(&v["cases"], "name", case)["baseline"])
                .map(|b| b["samples"].as_array().unwrap().iter().map(f).collect())
                .unwrap_or_default();
            // Nor is there a per-write figure where raw wrote nothing, nor the rates of the
            // stream a stand-in replays at its db run's own rate (the one that was not the
            // load: the WAL's in a read/write test, the data's in a redo test).
            let per_write = key == "device_writes_per_db_write" && raw_samples.is_empty();
            let at_its_rate = [
                "db_physical_reads_s",
                "db_physical_writes_s",
                "commits_s",
                "log_mbps",
            ];
            let own_rate = at_its_rate.contains(&key) && raw_samples.is_empty();
            if raw_samples.contains(&0.0) || per_write || own_rate {
                continue;
            }
            if case.contains("fs=raw") || no_raw(key) {
                assert!(!case.contains("fs=raw") || r.is_null(), "{case}: {key} {r}");
                continue;
            }
            // A ratio of 0 is one: the filesystem case did none of what raw did.
            match r.as_f64().filter(|r| *r >= 0.0) {
                Some(r) if case.contains("fs=xfs") => shown.push(format!("{case} {key} {r:.2}")),
                Some(_) => {}
                None => missing.push(format!("{case}: {key} (raw {raw_samples:?})")),
            }
        }
    }
    assert!(missing.is_empty(), "no ratio against raw: {missing:#?}");
    // Each test's defining metrics are among them.
    let keys: Vec<&str> = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["key"].as_str())
        .collect();
    for k in [
        "db_physical_reads_s",
        "commits_s",
        "log_mbps",
        "log_write_ms",
        "log_sync_ms",
        "op_update_lat_mean_ms",
        "op_read_lat_mean_ms",
        "ops_s",
    ] {
        assert!(keys.contains(&k), "no {k} in {keys:?}");
    }
    // A raw case's runs are `run --like` of its ext4 partner's run of the same repetition.
    let _g = shared();
    let runs = |name: &str| -> Vec<(u64, String)> {
        entry(&v["cases"], "name", name)["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["rep"].as_u64().unwrap(), r["id"].to_string()))
            .collect()
    };
    for test in ["read-only", "read-write", "redo"] {
        let ext4 = runs(&format!("{test} fs=ext4 sessions=2"));
        for (rep, id) in runs(&format!("{test} fs=raw sessions=2")) {
            let out = bin()
                .args(["show", &id, "--json", "--store", &store])
                .output()
                .unwrap();
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            let like = doc["options"]["like"]["run"].to_string();
            let partner = ext4.iter().find(|(r, _)| *r == rep).unwrap();
            assert_eq!(like, partner.1, "{test} rep {rep}");
            let logged = !doc["log"].is_null();
            assert_eq!(
                logged,
                test != "read-only",
                "{test}: log writer {}",
                doc["log"]
            );
        }
    }
    eprintln!(
        "filesystems example, smoke scale, xfs/raw: {}",
        shown.join(", ")
    );
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

/// PostgreSQL 16+ (for O_DIRECT) on btrfs over three throttled loop devices in memory (raid0
/// and raid1c3 under --smoke): root, mkfs.btrfs, cgroup v1's blkio. Even at smoke scale the
/// three copies' members receive more writes per PostgreSQL write than one copy's.
#[test]
fn redundancy_db_runs_at_smoke_scale() {
    let (_dir, v) = smoke_with("redundancy-db", &[("PG_BIN", &pg18_bin())]);
    let per_write = |case: &str| -> f64 {
        let m = entry(&v["metrics"], "key", "device_writes_per_db_write");
        f(&entry(&m["cases"], "case", case)["describe"]["mean"])
    };
    let copies: Vec<f64> = ["raid0", "raid1c3"]
        .iter()
        .map(|p| per_write(&format!("writers profile={p}")))
        .collect();
    assert!(copies[0] * 1.5 < copies[1], "{copies:?}");
    // The three-copy writers' runs name the copies among their findings.
    let c3 = entry(&v["cases"], "name", "writers profile=raid1c3");
    let store = v["store"].as_str().unwrap();
    let _g = shared();
    for run in c3["runs"].as_array().unwrap() {
        let id = run["id"].to_string();
        let out = bin()
            .args(["show", &id, "--json", "--store", store])
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let rules: Vec<&str> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["rule"].as_str())
            .collect();
        assert!(
            rules.contains(&"write-multiplication"),
            "run {id}: {rules:?}"
        );
    }
}

/// btrfs-copies.sh's mistakes are one line each, exit 2, before it touches the machine.
#[test]
fn btrfs_copies_mistakes_are_one_line() {
    let _g = shared();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/btrfs-copies.sh");
    let w = workdir();
    let root = w.path().join("r");
    let root = root.to_str().unwrap();
    for (args, says) in [
        (vec![], "usage: btrfs-copies.sh up ROOT"),
        (vec!["up", root, "raid1"], "usage: btrfs-copies.sh up ROOT"),
        (vec!["sideways", root], "usage: btrfs-copies.sh up ROOT"),
        (
            vec!["up", root, "raid5", "300"],
            "PROFILE is raid0, raid1 or raid1c3, not raid5",
        ),
        (vec!["up", root, "raid1", "lots"], "IOPS is a whole number"),
    ] {
        let out = std::process::Command::new("sh")
            .arg(&script)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!Path::new(root).exists(), "{args:?} made {root}");
    }
}

/// The loop devices attached to files under `root` and the mounts under it.
fn left_under(root: &Path) -> Vec<String> {
    let root = root.to_str().unwrap();
    let loops = std::process::Command::new("losetup")
        .arg("-a")
        .output()
        .expect("losetup");
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    String::from_utf8_lossy(&loops.stdout)
        .lines()
        .chain(mounts.lines())
        .filter(|l| l.contains(root))
        .map(str::to_string)
        .collect()
}

/// fs-loop.sh (issue #44, L7): a usage line for no or bad arguments; an unknown kind refused
/// before a loop device is attached (one leaked before); a failed step takes down what it
/// made of its kind (a mount was left); a kind is done only once made whole, so a rerun
/// makes an unfinished one again (one whose device was attached was skipped).
#[test]
fn fs_loop_leaves_nothing_of_a_failure_and_finishes_an_unfinished_kind() {
    require_root();
    let _g = busy();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fs-loop.sh");
    let w = workdir();
    let root = w.path().join("fs");
    let r = root.to_str().unwrap();
    let fs_loop = |args: &[&str], iogauge: &str| {
        std::process::Command::new("sh")
            .arg(&script)
            .args(args)
            .env("IOGAUGE", iogauge)
            .env("IOGAUGE_SMOKE", "1")
            .output()
            .unwrap()
    };
    for (args, says) in [
        (vec![], "usage: fs-loop.sh up ROOT"),
        (vec!["sideways", r, "ext4"], "usage: fs-loop.sh up ROOT"),
        (vec!["up", r], "usage: fs-loop.sh up ROOT"),
        (vec!["up", r, "ext4", "zfs"], "unknown kind zfs"),
    ] {
        let out = fs_loop(&args, "true");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!root.exists(), "{args:?} made {r}");
    }
    let help = fs_loop(&["-h"], "true");
    assert!(help.status.success() && String::from_utf8_lossy(&help.stdout).starts_with("usage:"));
    // The clusters' setup fails (IOGAUGE=false) after ext4 is made and mounted: ext4 is
    // taken down; the WAL's device, done before, stays until `down`.
    let out = fs_loop(&["up", r, "--db", "ext4"], "false");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ext4 failed"), "{err}");
    let left = left_under(&root);
    assert!(
        left.iter().all(|l| l.contains("wal")),
        "ext4 left: {left:?}"
    );
    assert!(!root.join("ext4.img").exists() && root.join("wal.done").exists());
    // Made whole, then as a killed `up` leaves it: attached, not mounted, not done.
    let out = fs_loop(&["up", r, "--db", "ext4"], "true");
    assert_success(&out);
    sh(&format!("umount '{r}/ext4' && rm '{r}/ext4.done'"));
    let out = fs_loop(&["up", r, "--db", "ext4"], "true");
    assert_success(&out);
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(
        mounts.contains(&format!(" {r}/ext4 ")),
        "the rerun skipped ext4"
    );
    let loops = left_under(&root)
        .iter()
        .filter(|l| l.contains("ext4.img"))
        .count();
    assert_eq!(loops, 1, "{:?}", left_under(&root));
    let out = fs_loop(&["down", r, "ext4"], "true");
    assert_success(&out);
    assert_eq!(left_under(&root), Vec::<String>::new());
    assert!(!root.exists(), "down leaves {r}");
}

/// A shipped example at smoke scale: two runs a case, stored, and its report from those real
/// runs rendered in a real browser without a console message.
fn smoke(stem: &str) {
    smoke_with(stem, &[]);
}

/// [`smoke`] with `env` set for the campaign; returns its directory and its exported JSON
/// (with `store`, the results store's path in that directory).
fn smoke_with(stem: &str, env: &[(&str, &str)]) -> (tempfile::TempDir, Value) {
    require_root();
    let _g = busy();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let name = format!("{stem}.toml");
    let w = workdir();
    let dir = w.path();
    let store = dir.join("s.sqlite");
    let file = examples.join(&name);
    let out = bin()
        .current_dir(dir)
        .envs(env.iter().copied())
        .args(["campaign", file.to_str().unwrap(), "--smoke", "--store"])
        .arg(&store)
        .output()
        .unwrap();
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
    assert_success(&out);
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
    let mut v = v;
    v["store"] = store.to_string_lossy().into_owned().into();
    (w, v)
}

/// A database campaign on a real private PostgreSQL: the cluster set up by `start`, reset to
/// the data as loaded before every run (`reset = "db"`), a warm-up before every run, dropped
/// by `end`; updates and reads both measured.
#[test]
fn db_campaign_resets_before_every_run() {
    let (_g, w) = root_test(busy);
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
