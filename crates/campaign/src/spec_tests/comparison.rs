//! What a campaign compares: per-workload baselines (a `[vars]` or a `[[case]]` variable),
//! the statistic its ratios are of, and the shipped examples' choices of both.

use super::{parse, QD};
use crate::spec::Campaign;
use iogauge_stats::compare::Statistic;

#[test]
fn per_workload_baselines() {
    let text = r#"
command = "run"
baseline = { fs = "raw" }
[vars]
fs = ["raw", "ext4", "xfs"]
rw = ["randread", "randwrite"]
[options]
rw = "${rw}"
"#;
    let c = parse(text).unwrap();
    assert_eq!(c.baseline, "fs=raw");
    let name = |i: Option<usize>| i.map(|i| c.cases[i].name.as_str());
    let b: Vec<Option<&str>> = c.baselines().unwrap().into_iter().map(name).collect();
    assert_eq!(
        b,
        [
            None,
            None,
            Some("fs=raw rw=randread"),
            Some("fs=raw rw=randwrite"),
            Some("fs=raw rw=randread"),
            Some("fs=raw rw=randwrite")
        ]
    );
    // One baseline case: every other case against it.
    let mut one = c.clone();
    one.baseline_vars.clear();
    one.baseline = "fs=xfs rw=randread".into();
    let b = one.baselines().unwrap();
    assert_eq!(b[4], None);
    assert!(b.iter().enumerate().all(|(i, x)| i == 4 || *x == Some(4)));

    let e = parse(&text.replace("{ fs = \"raw\" }", "{ fs = \"zfs\" }"))
        .unwrap_err()
        .0;
    assert!(
        e.contains("case \"fs=raw rw=randread\" has no counterpart"),
        "{e}"
    );
    let e = parse(&text.replace("{ fs = \"raw\" }", "{ disk = \"a\" }"))
        .unwrap_err()
        .0;
    assert!(e.contains("baseline.disk: not a variable"), "{e}");
    let e = parse(&text.replace("{ fs = \"raw\" }", "3")).unwrap_err().0;
    assert!(e.contains("give a case name, or a table"), "{e}");
}

#[test]
fn statistic_mean_by_default_trimmed_when_asked() {
    assert_eq!(parse(QD).unwrap().statistic, Statistic::Mean);
    for (word, want) in [("mean", Statistic::Mean), ("trimmed", Statistic::Trimmed)] {
        let c = parse(&format!("statistic = \"{word}\"\n{QD}")).unwrap();
        assert_eq!(c.statistic, want);
        // Smoke scale keeps it; what the runs measure does not depend on it.
        let smoke = Campaign::parse(&format!("statistic = \"{word}\"\n{QD}"), "qd", true);
        assert_eq!(smoke.unwrap().statistic, want);
        assert_eq!(c.plan_hash(), parse(QD).unwrap().plan_hash());
    }
    // Stored definitions from before `statistic` read as means.
    let c = parse(QD).unwrap();
    let mut json = serde_json::to_value(&c).unwrap();
    json.as_object_mut().unwrap().remove("statistic");
    let old: Campaign = serde_json::from_value(json).unwrap();
    assert_eq!(old, c);
}

/// A field of `[[case]]` is a variable like those of `[vars]`: `baseline = { layout = … }`
/// pairs every case with the case of its own `rw` on that layout.
#[test]
fn a_case_field_names_per_workload_baselines() {
    let text = r#"
command = "run"
baseline = { layout = "stripe:1m" }
[vars]
rw = ["randread", "randwrite"]
[[case]]
name = "external"
layout = "stripe:1m"
[[case]]
name = "normal"
layout = "mirror:2,stripe:1m"
[options]
layout = "${layout}"
rw = "${rw}"
"#;
    let c = parse(text).unwrap();
    assert_eq!(c.baseline, "layout=stripe:1m");
    let b: Vec<Option<&str>> = c
        .baselines()
        .unwrap()
        .into_iter()
        .map(|i| i.map(|i| c.cases[i].name.as_str()))
        .collect();
    assert_eq!(
        b,
        [
            None,
            None,
            Some("external rw=randread"),
            Some("external rw=randwrite")
        ]
    );
}

/// The shipped examples parse, and compare what their comments say they compare.
#[test]
fn shipped_examples() {
    let example = |name: &str| {
        let path = format!("{}/../../examples/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        Campaign::parse(&text, name, false).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    for name in ["filesystems", "filesystems-io"] {
        assert_eq!(example(name).statistic, Statistic::Trimmed, "{name}");
    }
    // Redundancy: writes against external writes, reads against external reads, with the
    // members throttled so that the members are the bottleneck.
    let c = example("redundancy");
    let pairs: Vec<(&str, Option<&str>)> = c
        .cases
        .iter()
        .zip(c.baselines().unwrap())
        .map(|(case, b)| (case.name.as_str(), b.map(|b| c.cases[b].name.as_str())))
        .collect();
    assert_eq!(
        pairs,
        [
            ("external rw=randread", None),
            ("external rw=randwrite", None),
            ("normal rw=randread", Some("external rw=randread")),
            ("normal rw=randwrite", Some("external rw=randwrite")),
            ("high rw=randread", Some("external rw=randread")),
            ("high rw=randwrite", Some("external rw=randwrite")),
        ]
    );
    assert!(c
        .cases
        .iter()
        .all(|case| case.option("member-iops").is_some()));
}
