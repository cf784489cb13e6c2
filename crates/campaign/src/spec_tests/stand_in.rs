//! `[stand_in]`: raw-device cases of a `db run` campaign that replay another case's run.

use super::{err, parse};
use crate::spec::{Campaign, Command, Order, Warmup};

const FS: &str = r#"
command = "db run"
repeat = 2
baseline = { fs = "raw" }

[vars]
fs = ["raw", "ext4", "xfs"]

[[case]]
name = "read-only"
update_pct = 0

[[case]]
name = "redo"
update_pct = 100

[options]
dir = "./fs/${fs}/pg"
update_pct = "${update_pct}"
time = "30s"

[stand_in]
cases = { fs = "raw" }
like = { fs = "ext4" }

[stand_in.options]
target = "./fs/raw/data"
allow_overwrite = true
time = "20s"
"#;

fn with(order: &str) -> Campaign {
    parse(&FS.replace("repeat = 2", &format!("repeat = 2\norder = {order:?}"))).unwrap()
}

#[test]
fn raw_cases_replay_their_ext4_case_with_run_flags() {
    let c = parse(FS).unwrap();
    let raw = c.case("read-only fs=raw").unwrap();
    assert_eq!(raw.like.as_deref(), Some("read-only fs=ext4"));
    assert_eq!(raw.command(c.command), Command::Run);
    assert_eq!(
        raw.args,
        [
            "--target",
            "./fs/raw/data",
            "--allow-overwrite",
            "--time",
            "20s"
        ]
    );
    let ext4 = c.case("redo fs=ext4").unwrap();
    assert_eq!(ext4.like, None);
    assert_eq!(ext4.command(c.command), Command::DbRun);
    assert_eq!(ext4.option("update-pct"), Some("100"));
    assert_eq!(
        c.case("redo fs=raw").unwrap().like.as_deref(),
        Some("redo fs=ext4")
    );
    // The raw cases are still each workload's baseline.
    let b = c.baselines().unwrap();
    let xfs = c
        .cases
        .iter()
        .position(|x| x.name == "redo fs=xfs")
        .unwrap();
    assert_eq!(c.cases[b[xfs].unwrap()].name, "redo fs=raw");
}

#[test]
fn a_stand_in_runs_after_the_run_it_replays() {
    for order in ["interleaved", "as-written", "random"] {
        let c = with(order);
        let sources = c.sources();
        let plan = c.measured_order();
        assert_eq!(
            plan.len(),
            c.cases.len() * 2,
            "{order}: every run planned once"
        );
        for (i, &(case, rep)) in plan.iter().enumerate() {
            if let Some(s) = sources[case] {
                let at = plan.iter().position(|&x| x == (s, rep)).unwrap();
                assert!(
                    at < i,
                    "{order}: {:?} rep {rep} before its source",
                    c.cases[case].name
                );
            }
        }
    }
    // Interleaved: raw comes first in the file but waits for ext4, right after it.
    let c = with("interleaved");
    let names: Vec<&str> = c.measured_order()[..3]
        .iter()
        .map(|&(i, _)| c.cases[i].name.as_str())
        .collect();
    assert_eq!(
        names,
        ["read-only fs=ext4", "read-only fs=raw", "read-only fs=xfs"]
    );
    // A warm-up per case still comes before the case's first run.
    let mut c = with("interleaved");
    c.warmup = Warmup::Case;
    assert_eq!(c.order, Order::Interleaved);
    let plan = c.plan(&Default::default());
    assert!(plan[0].warmup && c.cases[plan[0].case].name == "read-only fs=ext4");
    assert!(plan[2].warmup && c.cases[plan[2].case].name == "read-only fs=raw");
}

#[test]
fn the_stand_in_changes_the_plan_hash() {
    let a = parse(FS).unwrap();
    let b = parse(&FS.replace("like = { fs = \"ext4\" }", "like = { fs = \"xfs\" }")).unwrap();
    assert_ne!(a.plan_hash(), b.plan_hash());
}

#[test]
fn smoke_scale_shortens_the_stand_in_too() {
    let c = Campaign::parse(FS, "fs", true).unwrap();
    let raw = c.case("redo fs=raw").unwrap();
    assert_eq!(raw.option("time"), Some("1s"));
    assert_eq!(raw.option("ramp"), Some("0s"));
}

#[test]
fn stand_in_mistakes_are_one_line_naming_the_key() {
    let cases: [(&str, &str, &str); 8] = [
        (
            "command = \"db run\"",
            "command = \"run\"",
            "stand_in: only a \"db run\" campaign",
        ),
        (
            "cases = { fs = \"raw\" }",
            "cases = { fs = \"zfs\" }",
            "stand_in.cases = { fs = \"zfs\" } matches no case",
        ),
        (
            "like = { fs = \"ext4\" }",
            "like = { fs = \"zfs\" }",
            "stand_in.like = { fs = \"zfs\" }",
        ),
        (
            "like = { fs = \"ext4\" }",
            "like = { disk = \"a\" }",
            "stand_in: disk is not a variable",
        ),
        ("like = { fs = \"ext4\" }\n", "", "stand_in.like is missing"),
        (
            "allow_overwrite = true",
            "like = \"3\"",
            "stand_in.options.like: the campaign sets --like itself",
        ),
        (
            "time = \"20s\"",
            "time = \"${nope}\"",
            "stand_in.options.time",
        ),
        (
            "[stand_in.options]",
            "bogus = 1\n[stand_in.options]",
            "stand_in: unknown field",
        ),
    ];
    for (from, to, says) in cases {
        let e = err(&FS.replacen(from, to, 1));
        assert!(e.contains(says), "{to:?}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}
