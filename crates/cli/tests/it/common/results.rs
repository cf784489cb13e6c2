//! The steps the tests repeat around a result: run a command and check it worked, read its
//! JSON, find the stored id, pick the measured intervals, read figures out of the JSON.

use super::bin;
use serde_json::Value;
use std::process::Output;

/// Runs `iogauge ARGS` on the test store, asserts it succeeded, returns its output. Where it
/// printed a layer split, the split adds up (#45: every test that prints one checks it).
pub fn succeeds(args: &[&str]) -> Output {
    let out = bin().args(args).output().expect("spawn iogauge");
    assert_ran(&out, &format!("iogauge {args:?} failed"));
    let text = String::from_utf8_lossy(&out.stdout);
    if text.lines().any(|l| l.starts_with(SPLIT)) {
        assert_split_adds_up(&format!("iogauge {args:?}"), &text);
    }
    out
}

/// Asserts a command ended successfully, showing its stderr when it did not.
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A command stopped by a signal (Ctrl-C, SIGHUP, SIGTERM): exit 130 and one line of stderr
/// saying each of `says`. Returns that line.
pub fn stopped(out: &Output, says: &[&str]) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for s in says {
        assert!(err.contains(s), "{s}: {err}");
    }
    err
}

/// iogauge with `args` on the store at `store`, its output whatever it was.
pub fn on_store(store: &std::path::Path, args: &[&str]) -> Output {
    bin()
        .env("IOGAUGE_STORE", store)
        .args(args)
        .output()
        .unwrap()
}

/// iogauge with `args` on the store at `store`, asserted to succeed: its stdout.
pub fn ok_store(store: &std::path::Path, args: &[&str]) -> String {
    let out = on_store(store, args);
    assert_ran(&out, &format!("{args:?}"));
    String::from_utf8(out.stdout).unwrap()
}

/// Asserts a command (`what`) ended successfully, saying its stderr when it did not.
pub fn assert_ran(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts a command ended with exit code `code`, saying its stderr when it did not.
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// How `run`'s and `show`'s text begins its layer split.
const SPLIT: &str = "where an I/O's time went";

/// [`succeeds`]'s stdout as JSON.
pub fn json_of(args: &[&str]) -> Value {
    serde_json::from_slice(&succeeds(args).stdout).expect("stdout is JSON")
}

/// [`succeeds`]'s stdout as text.
pub fn text_of(args: &[&str]) -> String {
    String::from_utf8(succeeds(args).stdout).expect("stdout is UTF-8")
}

/// A stored result's document as `show ID --json EXTRA` prints it.
pub fn show_json(id: i64, extra: &[&str]) -> Value {
    let id = id.to_string();
    let mut args = vec!["show", id.as_str(), "--json"];
    args.extend_from_slice(extra);
    json_of(&args)
}

/// The intervals of a result's measured window (its ramp left out).
pub fn measured(v: &Value) -> impl Iterator<Item = &Value> {
    v["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .filter(|i| i["phase"] == "measure")
}

/// Runs `iogauge run ARGS --json`, asserts success, returns the parsed JSON.
pub fn run_json(args: &[&str]) -> Value {
    let out = bin()
        .arg("run")
        .args(args)
        .arg("--json")
        .output()
        .expect("spawn iogauge");
    assert_ran(&out, &format!("iogauge run {args:?} failed"));
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// `iogauge run --target TARGET --size SIZE EXTRA --json`: the result.
pub fn run_on(target: &std::path::Path, size: &str, extra: &[&str]) -> Value {
    let target = target.to_str().expect("UTF-8 path");
    run_json(&[&["--target", target, "--size", size], extra].concat())
}

/// Argument lists laid end to end, as owned strings.
pub fn owned(parts: &[&[&str]]) -> Vec<String> {
    parts.concat().into_iter().map(String::from).collect()
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// The id in iogauge's "stored as run N in …" line.
pub fn stored_id(stderr: &[u8]) -> i64 {
    let err = String::from_utf8_lossy(stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("stored as run "))
        .unwrap_or_else(|| panic!("no id: {err}"));
    line["stored as run ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The split's parts from `run`'s text line "where an I/O's time went (mean µs): iogauge A,
/// kernel submit + completion B, before the queue C, OS queue D, device E (of F)" (or
/// calibrate's "where an I/O's time went at max_iops (N outstanding, mean µs): …").
pub fn split_parts(text: &str) -> (Vec<f64>, f64) {
    let line = text
        .lines()
        .find(|l| l.starts_with(SPLIT))
        .unwrap_or_else(|| panic!("no split line in:\n{text}"));
    // The figures after the heading (calibrate's names its point: "at max_iops (64
    // outstanding, mean µs): ").
    let (_, figures) = line
        .split_once("): ")
        .unwrap_or_else(|| panic!("no figures in {line:?}"));
    let nums: Vec<f64> = figures
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter_map(|t| t.parse().ok())
        .collect();
    let (whole, parts) = nums.split_last().expect("numbers");
    (parts.to_vec(), *whole)
}

/// The parts of `text`'s split are never negative nor larger than the whole, and add up to
/// it within 5% (and the rounding of its one-decimal figures).
pub fn assert_split_adds_up(what: &str, text: &str) {
    let (parts, whole) = split_parts(text);
    assert!(parts.len() >= 4, "{what}: {text}");
    assert!(whole > 0.0, "{what}: {text}");
    for p in &parts {
        assert!(
            *p >= 0.0 && *p <= whole,
            "{what}: part {p} of {whole}: {text}"
        );
    }
    let sum: f64 = parts.iter().sum();
    assert!(
        (sum - whole).abs() <= 0.05 * whole + 0.05 * parts.len() as f64,
        "{what}: parts add to {sum}, of {whole}: {text}"
    );
    eprintln!("{what}: parts {parts:?} add to {sum:.1} of {whole:.1}");
}
