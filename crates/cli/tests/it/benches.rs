//! Every benchmark under `bench/` says what it does and what it needs (`--help`: root, peers,
//! packages) without running anything, from wherever it is started.

use std::path::{Path, PathBuf};
use std::process::Command;

fn benches() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench");
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    all.sort();
    all
}

#[test]
fn every_bench_says_what_it_needs() {
    let all = benches();
    assert!(all.len() >= 9, "{all:?}");
    for b in all {
        // Started from another directory: nothing may depend on the caller's.
        let out = Command::new(&b)
            .arg("--help")
            .current_dir(std::env::temp_dir())
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", b.display()));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}: {out:?}", b.display());
        assert!(
            text.contains("Needs"),
            "{}: no Needs line:\n{text}",
            b.display()
        );
    }
}
