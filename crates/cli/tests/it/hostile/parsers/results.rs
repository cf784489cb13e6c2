//! `iogauge show / compare / report / export` under fire, against a store that holds one run
//! and one tiny campaign (two cases, one repetition each): hostile ids, case and campaign
//! names, intervals, formats and output names. Every output stays in the work directory.

use super::*;

/// A store in `wd` with one run (10 intervals of 100 ms, for `show --interval`) and the
/// campaign `tiny`; returns the store's path and the run's id.
fn stocked(wd: &Path) -> (String, String) {
    let _g = heavy();
    data_file(&wd.join("t"), 4);
    let store = wd.join("s.sqlite").display().to_string();
    let target = wd.join("t").display().to_string();
    let out = bin()
        .args([
            "run",
            "--target",
            &target,
            "--time",
            "1s",
            "--interval",
            "100ms",
        ])
        .args(["--store", &store])
        .output()
        .expect("spawn iogauge");
    assert_success(&out);
    let id = stored_id(&out.stderr).to_string();
    let tiny = wd.join("tiny.toml");
    std::fs::write(
        &tiny,
        format!(
            "command = \"run\"\nrepeat = 1\nwarmup = \"none\"\n[vars]\nqd = [1, 2]\n\
             [options]\ntarget = \"{target}\"\nqd = \"${{qd}}\"\nios = 64\ntime = \"1s\"\n"
        ),
    )
    .expect("write the campaign");
    let out = bin()
        .current_dir(wd)
        .args(["campaign", &tiny.display().to_string(), "--store", &store])
        .output()
        .expect("spawn iogauge");
    assert_success(&out);
    (store, id)
}

fn judge(
    wd: &Path,
    args: Vec<String>,
    names: &'static [&'static str],
) -> Result<Call, TestCaseError> {
    let c = call(wd, &args);
    Clean {
        names,
        went_on: None,
        also: &[0],
        secret: None,
    }
    .check(&c)?;
    Ok(c)
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Run ids, intervals and case names: shown, compared, or refused naming what is wrong
/// (issue #14 row 17, property tests).
#[test]
fn show_and_compare_arguments_are_answered_or_refused_on_one_line() {
    let _g = shared();
    let wd = workdir();
    let (store, id) = stocked(wd.path());
    let st = ["--store".to_string(), store];
    let ids: &'static [&'static str] = &["1", "2", "3", "-1", "9223372036854775807", "0"];
    let mut failures = Vec::new();
    let show = runner(CASES).run(&hostile(ids, &[]), |v| {
        let mut a = strings(&["show"]);
        a.extend(st.iter().cloned());
        a.extend(["--".into(), v]);
        judge(wd.path(), a, &["<ID>", "no run"]).map(drop)
    });
    failures.extend(show.err().map(|e| format!("show ID: {e}")));
    let every = hostile(&["100ms", "200ms", "1s", "150ms", "0.1"], &["ms", "s", "0"]);
    let regrid = runner(CASES).run(&every, |v| {
        let mut a = strings(&["show", &id, "--interval"]);
        a[2] = format!("--interval={v}");
        a.extend(st.iter().cloned());
        judge(wd.path(), a, &["--interval"]).map(drop)
    });
    failures.extend(regrid.err().map(|e| format!("show --interval: {e}")));
    let pair = (hostile(ids, &[]), hostile(ids, &[]));
    let runs = runner(CASES).run(&pair, |(x, y)| {
        let mut a = strings(&["compare"]);
        a.extend(st.iter().cloned());
        a.extend(["--".into(), x, y]);
        judge(wd.path(), a, &["run id", "no run", "one kind"]).map(drop)
    });
    failures.extend(runs.err().map(|e| format!("compare A B: {e}")));
    let cases: &'static [&'static str] = &["qd=1", "qd=2", "qd=3"];
    let three = (
        hostile(&["tiny"], &[]),
        hostile(cases, &["qd", "="]),
        hostile(cases, &[]),
    );
    let by_case = runner(CASES).run(&three, |(name, x, y)| {
        let mut a = strings(&["compare"]);
        a.extend(st.iter().cloned());
        a.extend([format!("--campaign={name}"), "--".into(), x, y]);
        judge(wd.path(), a, &["campaign", "no case"]).map(drop)
    });
    failures.extend(by_case.err().map(|e| format!("compare --campaign: {e}")));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Campaign names, formats and output names: written where asked (inside the work
/// directory), or refused naming the flag (issue #14 row 20, property tests).
#[test]
fn report_and_export_arguments_are_answered_or_refused_on_one_line() {
    let _g = shared();
    let wd = workdir();
    let (store, _) = stocked(wd.path());
    let out_dir = wd.path().join("out");
    std::fs::create_dir(&out_dir).expect("create out/");
    let st = ["--store".to_string(), store];
    // Output names never hold '/': every -o stays in out/ (or is out/ itself, or out/..).
    let name = hostile(&["r.html", "-", ".", "..", "a b.html", ".x"], &[".html"])
        .prop_filter("one path component", |n| !n.contains('/'));
    let report = (
        hostile(&["tiny"], &[]),
        prop::option::of(name),
        any::<bool>(),
    );
    let mut failures = Vec::new();
    let reports = runner(CASES).run(&report, |(campaign, out, force)| {
        let mut a = strings(&["report"]);
        a.extend(st.iter().cloned());
        a.push(format!("--campaign={campaign}"));
        let path = out.as_ref().map(|n| out_dir.join(n));
        if let Some(p) = &path {
            a.push(format!("--output={}", p.display()));
        }
        if force {
            a.push("--force".into());
        }
        let c = judge(wd.path(), a, &["--output", "-o ", "--campaign", "campaign"])?;
        if let (Some(0), Some(p), Some(n)) = (c.code, &path, &out) {
            if n != "-" {
                prop_assert!(p.is_file(), "exit 0 but no report at {}", p.display());
            }
        }
        Ok(())
    });
    failures.extend(reports.err().map(|e| format!("report: {e}")));
    let export = (
        hostile(&["csv", "md", "json"], &[]),
        hostile(&["tiny"], &[]),
    );
    let exports = runner(CASES).run(&export, |(format, campaign)| {
        let mut a = strings(&["export"]);
        a.extend(st.iter().cloned());
        a.extend([
            format!("--format={format}"),
            format!("--campaign={campaign}"),
        ]);
        judge(wd.path(), a, &["--format", "campaign"]).map(drop)
    });
    failures.extend(exports.err().map(|e| format!("export: {e}")));
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let mut left = listing(wd.path());
    left.retain(|n| !["t", "s.sqlite", "tiny.toml", "out", "live"].contains(&n.as_str()));
    left.retain(|n| !n.starts_with("s.sqlite-"));
    assert!(left.is_empty(), "written outside out/: {left:?}");
}
