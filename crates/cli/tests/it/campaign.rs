//! `iogauge campaign`, `report`, `export` and `compare` end to end: a tiny campaign is
//! interrupted (Ctrl-C, then a kill of the runner), resumed, and every repetition ends up
//! stored exactly once; the report and exports read it back; the shipped examples run at
//! smoke scale (and the redundancy one shows the mirrors' write penalty); bad input gets
//! one-line errors. The reading back is in `campaign/read_back.rs`, the examples in
//! `campaign/examples.rs` and `campaign/redundancy.rs`.

use crate::common::*;
use read_back::report_export_compare;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::{Duration, Instant};

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

/// The entry of the JSON array `list` whose `field` is `want` (a case by name, a metric by
/// key, a metric's case by case); panics naming what is missing.
fn entry<'a>(list: &'a Value, field: &str, want: &str) -> &'a Value {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .find(|e| e[field] == want)
        .unwrap_or_else(|| panic!("no {field} {want:?} in {list}"))
}

fn export_json(store: &Path, name: &str) -> Value {
    let out = bin()
        .args(["export", "--campaign", name, "--format", "json", "--store"])
        .arg(store)
        .output()
        .unwrap();
    assert_success(&out);
    serde_json::from_slice(&out.stdout).expect("export is JSON")
}

#[test]
fn interrupted_twice_resumed_every_run_stored_once() {
    let _g = busy();
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

#[test]
fn dry_run_lists_and_creates_nothing() {
    let _g = shared();
    let w = workdir();
    let dir = w.path();
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    let store = dir.join("never.sqlite");
    let out = campaign_in(dir, &store, &["tiny.toml", "--dry-run"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
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
    let _g = busy();
    let w = workdir();
    let dir = w.path();
    let store = dir.join("s.sqlite");
    let one = "name = \"chg\"\ncommand = \"run\"\nrepeat = 1\nwarmup = \"none\"\n[options]\ntarget = \"./data\"\nsize = \"16m\"\ntime = \"300ms\"\ninterval = \"100ms\"\n";
    std::fs::write(dir.join("c.toml"), one).unwrap();
    let out = campaign_in(dir, &store, &["c.toml"]);
    assert_success(&out);
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

mod engines;
mod examples;
mod read_back;
mod redundancy;
mod relative;

/// `case` sets each case up once before its first run (its warm-up included) and `case_end`
/// takes it down after its last, with the case's variables; `pre` runs inside them.
#[test]
fn case_steps_wrap_each_cases_runs() {
    let _g = busy();
    let w = workdir();
    let dir = w.path();
    let store = dir.join("results.sqlite");
    let file = TINY
        .replace("name = \"tiny\"", "name = \"cases\"")
        .replace("repeat = 3", "repeat = 2")
        .replace("order = \"interleaved\"", "order = \"as-written\"")
        .replace("time = \"600ms\"", "time = \"300ms\"")
        .replace(
            "end = \"echo end >> hooks.log\"",
            "case = \"echo case ${qd} $IOGAUGE_CASE >> hooks.log\"\n\
             case_end = \"echo case_end ${qd} >> hooks.log\"",
        );
    std::fs::write(dir.join("cases.toml"), file).unwrap();
    let out = campaign_in(dir, &store, &["cases.toml"]);
    assert_success(&out);
    let log = std::fs::read_to_string(dir.join("hooks.log")).unwrap();
    // The `pre` lines start with the case's name: "qd=1|rep|warm-up|…".
    let steps: Vec<&str> = log
        .lines()
        .map(|l| match l.split_once('|') {
            Some(("qd=1", _)) => "pre 1",
            Some(("qd=8", _)) => "pre 8",
            _ => l,
        })
        .collect();
    assert_eq!(
        steps,
        [
            "case 1 qd=1",
            "pre 1",
            "pre 1",
            "pre 1",
            "case_end 1",
            "case 8 qd=8",
            "pre 8",
            "pre 8",
            "pre 8",
            "case_end 8"
        ],
        "{log}"
    );
}
