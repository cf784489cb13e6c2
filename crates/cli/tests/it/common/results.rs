//! The steps the tests repeat around a result: run a command and check it worked, read its
//! JSON, find the stored id, pick the measured intervals, read figures out of the JSON.

use super::bin;
use serde_json::Value;
use std::process::Output;

/// Runs `iogauge ARGS` on the test store, asserts it succeeded, returns its output.
pub fn succeeds(args: &[&str]) -> Output {
    let out = bin().args(args).output().expect("spawn iogauge");
    assert!(
        out.status.success(),
        "iogauge {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

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
    assert!(
        out.status.success(),
        "iogauge run {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
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
