//! `iogauge campaign`, `report`, `export` and `compare` end to end: a tiny campaign is
//! interrupted (Ctrl-C, then a kill of the runner), resumed, and every repetition ends up
//! stored exactly once; the report and exports read it back; the shipped examples run at
//! smoke scale (and the redundancy one shows the mirrors' write penalty); bad input gets
//! one-line errors.

use crate::common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, Instant};

mod redundancy;

/// Two cases × 3 repetitions of sub-second runs, with a warm-up per case and a `pre` hook
/// that logs what it was told.
const TINY: &str = r#"
name = "tiny"
command = "run"
repeat = 3
order = "interleaved"
warmup = "case"

[vars]
qd = [1, 8]

[options]
target = "./data"
size = "16m"
qd = "${qd}"
time = "600ms"
interval = "200ms"

[commands]
pre = "echo \"$IOGAUGE_CASE|$IOGAUGE_REP|$IOGAUGE_WARMUP|${qd}|$IOGAUGE_VAR_QD\" >> hooks.log"
end = "echo end >> hooks.log"
"#;

fn campaign_in(dir: &Path, store: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .current_dir(dir)
        .arg("campaign")
        .args(args)
        .arg("--store")
        .arg(store)
        .output()
        .expect("spawn iogauge campaign")
}

/// Starts the campaign and returns once its stderr shows `marker` (the runner is then in
/// the middle of the plan), with the child still running.
fn start_until(dir: &Path, store: &Path, marker: &str) -> std::process::Child {
    let mut child = command()
        .current_dir(dir)
        .args(["campaign", "tiny.toml", "--store"])
        .arg(store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn campaign");
    let err = child.stderr.take().unwrap();
    let mut lines = BufReader::new(err).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let line = lines
            .next()
            .expect("campaign ended before the marker")
            .unwrap();
        if line.contains(marker) {
            break;
        }
        assert!(Instant::now() < deadline, "no {marker:?} within 60 s");
    }
    // Keep draining so the runner never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    // The label is printed as the run starts: let it get into its 600 ms.
    std::thread::sleep(Duration::from_millis(300));
    child
}

fn export_json(store: &Path, name: &str) -> Value {
    let out = bin()
        .args(["export", "--campaign", name, "--format", "json", "--store"])
        .arg(store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("export is JSON")
}

#[test]
fn interrupted_twice_resumed_every_run_stored_once() {
    let _g = heavy();
    let w = workdir();
    let dir = w.path();
    let store = dir.join("results.sqlite");
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();

    // Ctrl-C in the middle: exit 130, finished runs kept.
    let child = start_until(dir, &store, "[4/8, ");
    sigint(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    wait_gone(store.to_str().unwrap());

    // The runner killed outright: its run in progress is interrupted by the kernel's
    // parent-death signal and stored as such, never as a finished repetition.
    let mut child = start_until(dir, &store, "rep 2/3:");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    wait_gone(store.to_str().unwrap());

    let out = campaign_in(dir, &store, &["tiny.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("runs to go"), "{err}");
    let stored: u32 = err
        .split(" stored, ")
        .next()
        .and_then(|s| s.rsplit(", ").next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no 'N stored' in {err}"));
    assert!(
        (1..6).contains(&stored),
        "resumed after {stored} runs: {err}"
    );

    let v = export_json(&store, "tiny");
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    let mut ids = Vec::new();
    for c in cases {
        let reps: Vec<u64> = c["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| u(&r["rep"]))
            .collect();
        assert_eq!(reps, [1, 2, 3], "case {}", c["name"]);
        ids.extend(c["runs"].as_array().unwrap().iter().map(|r| u(&r["id"])));
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 6, "six distinct measured runs");

    // The history keeps everything: measured, warm-ups (one per case per invocation that
    // ran it) and the interrupted runs.
    let out = bin()
        .args(["history", "--json", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let interrupted = rows.iter().filter(|r| r["status"] == "interrupted").count();
    assert!(interrupted >= 1, "the killed run is kept, marked: {rows:?}");
    assert!(rows.len() >= 6 + 2 + interrupted, "{}", rows.len());

    // The hooks saw each case's variables, repetitions and warm-ups; end ran once.
    let log = std::fs::read_to_string(dir.join("hooks.log")).unwrap();
    assert!(log.contains("qd=8|1|1|8|8"), "{log}");
    assert!(log.contains("qd=1|3|0|1|1"), "{log}");
    assert_eq!(log.matches("end").count(), 1, "{log}");

    // Nothing left to do: a rerun runs nothing.
    let out = campaign_in(dir, &store, &["tiny.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("6 stored, 0 runs to go"), "{err}");
    let log = std::fs::read_to_string(dir.join("hooks.log")).unwrap();
    assert_eq!(
        log.matches("end").count(),
        1,
        "nothing ran, so no end: {log}"
    );

    report_export_compare(dir, &store, &v);
}

/// The finished campaign read back every way.
fn report_export_compare(dir: &Path, store: &Path, v: &Value) {
    let html_path = dir.join("tiny.html");
    let out = bin()
        .args(["report", "--campaign", "tiny", "-o"])
        .arg(&html_path)
        .arg("--store")
        .arg(store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..100]);
    for chart in [
        "bars:iops",
        "normalised:iops",
        "latcurve:",
        "series:",
        "rw:",
    ] {
        assert!(html.contains(&format!("data-chart=\"{chart}")), "{chart}");
    }
    assert!(!html.contains("NaN"), "NaN in the report");
    // Never over an existing file without --force.
    let e = fails(
        &[
            "report",
            "--campaign",
            "tiny",
            "-o",
            html_path.to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
        ],
        2,
    );
    assert!(
        e.contains("exists; choose another name or pass --force"),
        "{e}"
    );

    let out = bin()
        .args(["export", "--campaign", "tiny", "--format", "csv", "--store"])
        .arg(store)
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("campaign,case,metric,unit,n,mean"),
        "{header}"
    );
    let iops_rows: Vec<&str> = csv.lines().filter(|l| l.contains(",iops,")).collect();
    assert_eq!(iops_rows.len(), 2, "{csv}");
    // CSV means equal the JSON's.
    let iops = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "iops")
        .unwrap();
    let mean0 = f(&iops["cases"][0]["describe"]["mean"]);
    let csv_mean: f64 = iops_rows[0].split(',').nth(5).unwrap().parse().unwrap();
    assert!(
        (csv_mean - mean0).abs() <= 1e-6 * mean0,
        "{csv_mean} vs {mean0}"
    );

    let out = bin()
        .args(["export", "--campaign", "tiny", "--format", "md", "--store"])
        .arg(store)
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("| qd=8 |"), "{md}");

    // Two cases: a verdict from three repetitions each.
    let out = bin()
        .args([
            "compare",
            "qd=1",
            "qd=8",
            "--campaign",
            "tiny",
            "--json",
            "--store",
        ])
        .arg(store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "iops")
        .unwrap();
    assert!(m["verdict"].as_str().unwrap().contains("qd=8"), "{m}");
    assert!(f(&m["ratio"]) > 0.0);

    // Two runs by id.
    let a = u(&v["cases"][0]["runs"][0]["id"]).to_string();
    let b = u(&v["cases"][1]["runs"][0]["id"]).to_string();
    let out = bin()
        .args(["compare", &a, &b, "--store"])
        .arg(store)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("iops"), "{text}");
    let e = fails(&["compare", "x", &b, "--store", store.to_str().unwrap()], 2);
    assert!(e.contains("is not a run id"), "{e}");
}

#[test]
fn dry_run_lists_and_creates_nothing() {
    let _g = shared();
    let w = workdir();
    let dir = w.path();
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    let store = dir.join("never.sqlite");
    let out = campaign_in(dir, &store, &["tiny.toml", "--dry-run"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches("(warm-up, discarded)").count(), 2, "{text}");
    assert!(
        text.contains("2 cases × 3 repetitions, 0 already stored, 8 runs to make"),
        "{text}"
    );
    assert!(text.contains("--qd 8"), "{text}");
    assert!(!store.exists(), "a dry run created the store");
    assert!(!dir.join("data").exists() && !dir.join("hooks.log").exists());
}

#[test]
fn bad_campaigns_are_one_line_usage_errors() {
    let _g = shared();
    let w = workdir();
    let dir = w.path();
    let store = dir.join("s.sqlite");
    let s = store.to_str().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let e = fails(&["campaign", "/nonexistent/x.toml", "--store", s], 2);
    assert!(
        e.contains("campaign file /nonexistent/x.toml: not found"),
        "{e}"
    );
    let p = write("syntax.toml", "command = \"run\"\nrepeat = \n");
    let e = fails(&["campaign", &p, "--store", s], 2);
    assert!(e.contains("line 2"), "{e}");
    let p = write("flag.toml", "command = \"run\"\n[options]\nqdd = 4\n");
    let e = fails(&["campaign", &p, "--store", s], 2);
    assert!(
        e.contains("case \"default\": unexpected argument '--qdd'"),
        "{e}"
    );
    let p = write(
        "var.toml",
        "command = \"run\"\n[options]\nqd = \"${depth}\"\n",
    );
    let e = fails(&["campaign", &p, "--store", s], 2);
    assert!(e.contains("${depth} is not a variable"), "{e}");
    assert!(!store.exists(), "errors before any run create no store");

    let e = fails(&["report", "--campaign", "nope", "--store", s], 2);
    assert!(e.contains("no campaign \"nope\""), "{e}");
    let e = fails(
        &[
            "export",
            "--campaign",
            "nope",
            "--format",
            "xml",
            "--store",
            s,
        ],
        2,
    );
    assert!(e.contains("xml"), "{e}");
}

#[test]
fn a_changed_campaign_needs_fresh() {
    let _g = heavy();
    let w = workdir();
    let dir = w.path();
    let store = dir.join("s.sqlite");
    let one = "name = \"chg\"\ncommand = \"run\"\nrepeat = 1\nwarmup = \"none\"\n[options]\ntarget = \"./data\"\nsize = \"16m\"\ntime = \"300ms\"\ninterval = \"100ms\"\n";
    std::fs::write(dir.join("c.toml"), one).unwrap();
    let out = campaign_in(dir, &store, &["c.toml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(dir.join("c.toml"), one.replace("16m", "8m")).unwrap();
    let e = fails(
        &[
            "campaign",
            dir.join("c.toml").to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
        ],
        2,
    );
    assert!(e.contains("pass --fresh to start over"), "{e}");
    let out = campaign_in(dir, &store, &["c.toml", "--fresh"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("0 stored, 1 runs to go"),
        "{err}"
    );
    // More repetitions of the same cases resume instead.
    std::fs::write(
        dir.join("c.toml"),
        one.replace("16m", "8m").replace("repeat = 1", "repeat = 2"),
    )
    .unwrap();
    let out = campaign_in(dir, &store, &["c.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("1 stored, 1 runs to go"),
        "{err}"
    );
}

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
