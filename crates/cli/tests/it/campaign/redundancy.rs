//! The shipped redundancy example, run: the ratios it exists to show.

use super::{campaign_in, entry, export_json};
use crate::common::*;
use std::path::Path;

/// The shipped redundancy example pays the mirror's write penalty: with every member
/// throttled (the example's own `member_iops`) and each case against external redundancy
/// doing the same thing (`baseline = { layout = … }`), writes at normal (mirror:2) and high
/// (mirror:3) redundancy run at 1/2 and 1/3 of external's, reads at external's.
///
/// The members live in a tmpfs of their own, used through the page cache (`buffered = true`
/// added as a `[smoke]` override), as in `layout.rs`: this checks the layouts' arithmetic
/// under a fixed member rate, and this VM's disk stalls now and then for longer than a 1 s
/// smoke run can make up. `examples_run_at_smoke_scale` runs the example on the disk as is.
#[test]
fn redundancy_example_pays_the_mirror_write_penalty() {
    let (_g, w) = root_test(heavy);
    let dir = w.path();
    // Dropped before the work directory: unmounted before it is removed.
    let _mem = Mount::new(&dir.join("iogauge-scratch"), "tmpfs", "size=256m");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/redundancy.toml");
    let text = std::fs::read_to_string(example).unwrap();
    assert!(
        text.contains("\nmember_iops = ") && !text.contains("[smoke]"),
        "the example throttles its members and has no [smoke] table of its own:\n{text}"
    );
    std::fs::write(
        dir.join("redundancy.toml"),
        format!("{text}\n[smoke]\nbuffered = true\n"),
    )
    .unwrap();
    let store = dir.join("s.sqlite");
    let out = campaign_in(dir, &store, &["redundancy.toml", "--smoke"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v = export_json(&store, "redundancy-smoke");
    assert_eq!(v["statistic"], "mean");
    // (case, its baseline, metric, expected ratio, tolerance)
    let table = [
        (
            "normal rw=randwrite",
            "external rw=randwrite",
            "write_iops",
            0.5,
            0.05,
        ),
        (
            "high rw=randwrite",
            "external rw=randwrite",
            "write_iops",
            1.0 / 3.0,
            0.05,
        ),
        (
            "normal rw=randread",
            "external rw=randread",
            "read_iops",
            1.0,
            0.1,
        ),
        (
            "high rw=randread",
            "external rw=randread",
            "read_iops",
            1.0,
            0.1,
        ),
    ];
    let mut measured = Vec::new();
    for (case, base, key, want, tol) in table {
        let c = entry(&v["cases"], "name", case);
        assert_eq!(c["baseline"], base, "{case}");
        let m = entry(&v["metrics"], "key", key);
        let mc = entry(&m["cases"], "case", case);
        let ratio = f(&mc["ratio"]["ratio"]);
        measured.push(format!("{case} {key} {ratio:.3}"));
        assert!(
            (ratio - want).abs() <= tol,
            "{case}: {key} {ratio:.3} × {base}, want {want:.3} ± {tol}; {mc}"
        );
    }
    // Shown with --nocapture: the figures behind the README's.
    eprintln!("redundancy example, smoke scale: {}", measured.join(", "));
}
