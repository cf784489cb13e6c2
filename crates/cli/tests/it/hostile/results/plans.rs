//! Plans and comparisons under attack: figures that overflow (row 10) and interrupted runs
//! used as if complete (row 17).

use super::*;

// Row 10: every float of `plan` is range-checked, named by its flag (or file and row).
#[test]
fn plan_refuses_figures_that_would_overflow() {
    let _g = shared();
    let base = ["plan", "--read-pct", "50", "--redundancy", "mirror"];
    for (extra, flag) in [
        (vec!["--iops", "1e308", "--disk-iops", "1e-7"], "--iops"),
        (
            vec!["--iops", "100", "--disk-iops", "1e-300"],
            "--disk-iops",
        ),
        (vec!["--iops", "100", "--disk-iops", "1e-7"], "--disk-iops"),
        (vec!["--iops", "100", "--disk-iops", "inf"], "--disk-iops"),
        (
            vec!["--iops", "100", "--mbps", "1e300", "--disk-iops", "9"],
            "--mbps",
        ),
        (
            vec!["--iops", "9", "--disk-iops", "9", "--disk-mbps", "1e-9"],
            "--disk-mbps",
        ),
        (
            vec![
                "--iops",
                "9",
                "--disk-iops",
                "9",
                "--target-util",
                "1e-300%",
            ],
            "--target-util",
        ),
        (
            vec!["--disks", "99999999999999", "--disk-iops", "9"],
            "--disks",
        ),
    ] {
        let args: Vec<&str> = base.iter().copied().chain(extra).collect();
        let e = fails(&args, 2);
        assert!(e.contains(flag), "{args:?}: {e}");
    }
    let e = fails(
        &[
            "plan",
            "--iops",
            "9",
            "--read-pct",
            "50",
            "--disk-iops",
            "9",
            "--write-penalty",
            "1e308",
        ],
        2,
    );
    assert!(
        e.contains("--write-penalty") && e.contains("from 1 to 100"),
        "{e}"
    );
    a_history_figure_that_overflows_names_its_line();
    // In range, the result is finite: the largest case is still a count of disks.
    let v = json_of(
        &[
            &base[..],
            &[
                "--iops",
                "1e9",
                "--disk-iops",
                "1",
                "--target-util",
                "1%",
                "--json",
            ],
        ]
        .concat(),
    );
    assert!(
        v["disks"].as_u64().is_some_and(|d| d < u64::MAX / 1000),
        "{v}"
    );
    assert!(
        v["utilization"].is_number() && v["hardware_iops"].is_number(),
        "{v}"
    );
}

/// A figure of `--history` that overflows is refused naming the file, line and column.
fn a_history_figure_that_overflows_names_its_line() {
    let w = workdir();
    let csv = w.path().join("h.csv");
    std::fs::write(
        &csv,
        "timestamp,read_iops,write_iops\n09:00,10,5\n09:05,1e308,5\n",
    )
    .unwrap();
    let e = fails(
        &[
            "plan",
            "--history",
            csv.to_str().unwrap(),
            "--disk-iops",
            "180",
            "--redundancy",
            "none",
        ],
        2,
    );
    assert!(
        e.contains("--history") && e.contains("h.csv") && e.contains("line 3, column 2"),
        "{e}"
    );
}

/// Starts `iogauge ARGS` on `store`, interrupts it after `after`, returns its stored id.
fn interrupted_run(store: &Path, args: &[&str], after: Duration) -> i64 {
    let child = command()
        .env("IOGAUGE_STORE", store)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    sigint(&child);
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 130);
    stored_id(&out.stderr)
}

// Row 17: an interrupted calibration is no basis for a plan.
#[test]
fn plan_refuses_an_interrupted_calibration() {
    let _g = busy();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let t = w.path().join("data");
    let args = [
        "calibrate",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "64m",
    ];
    let id = interrupted_run(&store, &args, Duration::from_secs(3));
    let out = iog(&store)
        .args(["plan", "--from-run", &id.to_string(), "--iops", "1000"])
        .args(["--read-pct", "70", "--redundancy", "mirror"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("--from-run {id}")) && err.contains("interrupted"),
        "{err}"
    );
}

// Row 17: comparing with an interrupted run says so.
#[test]
fn compare_warns_about_an_interrupted_run() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let t = w.path().join("data");
    let t = t.to_str().unwrap();
    let args = ["run", "--target", t, "--size", "16m", "--time", "30s"];
    let cut = interrupted_run(&store, &args, Duration::from_secs(2));
    let out = iog(&store)
        .args(["run", "--target", t, "--size", "16m", "--time", "500ms"])
        .output()
        .unwrap();
    let whole = stored_id(&out.stderr);
    for json in [false, true] {
        let mut cmd = iog(&store);
        cmd.args(["compare", &whole.to_string(), &cut.to_string()]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.trim_end(),
            format!("warning: run {cut} was interrupted: its figures cover only the part that ran")
        );
    }
}

/// Replaces stored result `id`'s document in `store` with `doc`, as an older iogauge or a
/// hand with sqlite3 could have written it.
fn store_document(store: &Path, id: i64, doc: &serde_json::Value) {
    let file = store.with_extension("doc.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let sql = format!(
        "UPDATE runs SET document = readfile('{}') WHERE id = {id}",
        file.display()
    );
    let st = std::process::Command::new("sqlite3")
        .arg(store)
        .arg(&sql)
        .status()
        .expect("sqlite3 is installed");
    assert!(st.success(), "{sql}");
}

// Issue #44, L4: `run --like` replayed a stored db run's figures as they were (-5 reads/s).
#[test]
fn run_like_refuses_a_db_run_whose_figures_are_out_of_range() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let t = w.path().join("data").display().to_string();
    // A db run as stored (the campaign tests' fixture), in the row of a run made here.
    let out = iog(&store)
        .args(["run", "--target", &t, "--size", "4m", "--ios", "200"])
        .output()
        .unwrap();
    let id = stored_id(&out.stderr);
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../campaign/tests/fixtures/db_run.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    for iv in doc["intervals"].as_array_mut().unwrap() {
        iv["disks"]["vda"]["r_s"] = serde_json::json!(-5.0);
    }
    store_document(&store, id, &doc);
    let st = store.to_str().unwrap();
    let e = fails(
        &[
            "run",
            "--like",
            &id.to_string(),
            "--target",
            &t,
            "--store",
            st,
        ],
        2,
    );
    assert!(
        e.contains(&format!("--like {id}: db run {id}")) && e.contains("reads_s is -5"),
        "{e}"
    );
}

// Issue #44, L5: `compare` printed a device figure that was not measured as -0.0000 (f64's
// sum over no disk, as stored); it says "not measured", and never prints a negative zero.
#[test]
fn compare_says_not_measured_and_never_minus_zero() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let t = w.path().join("data").display().to_string();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let out = iog(&store)
            .args(["run", "--target", &t, "--size", "16m", "--time", "500ms"])
            .output()
            .unwrap();
        ids.push(stored_id(&out.stderr).to_string());
    }
    let shown = iog(&store)
        .args(["show", &ids[1], "--json"])
        .output()
        .unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert!(
        doc["hardware"].is_object(),
        "no device figures measured: {doc}"
    );
    for dir in ["read", "write"] {
        for k in ["device_iops", "device_mbps"] {
            doc["hardware"][dir][k] = serde_json::json!(-0.0);
        }
    }
    store_document(&store, ids[1].parse().unwrap(), &doc);
    let out = iog(&store)
        .args(["compare", &ids[0], &ids[1]])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("-0.0") && !text.contains(" -0 "), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("device_iops"))
        .unwrap_or_else(|| panic!("no device_iops row: {text}"));
    assert!(line.contains("not measured"), "{line}");
    let out = iog(&store)
        .args(["compare", &ids[0], &ids[1], "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "device_iops")
        .unwrap();
    assert!(row["a"].as_f64().is_some() && row["b"].is_null(), "{row}");
}

/// `show ID --rediagnose` applies this iogauge's rules to a stored result: a run stored with
/// a finding older rules made (the short-stroking caveat every VM run carried before #45)
/// gets today's findings back, and the stored document is left as it was.
#[test]
fn show_rediagnose_applies_today_s_rules_to_a_stored_result() {
    let _g = shared();
    let w = workdir();
    let store = w.path().join("s.sqlite");
    let t = w.path().join("data").display().to_string();
    let out = iog(&store)
        .args([
            "run",
            "--target",
            &t,
            "--size",
            "16m",
            "--rate-iops",
            "200",
            "--time",
            "1s",
            "--json",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let made: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = stored_id(&out.stderr);
    let mut old = made.clone();
    let mut stale = made["findings"][0].clone();
    stale["rule"] = "short-stroked".into();
    stale["layer"] = "span".into();
    stale["title"] = "only 0.1% of vda was tested: short-stroking flatters HDDs".into();
    stale["impact"] = 0.1.into();
    old["findings"] = serde_json::json!([stale]);
    store_document(&store, id, &old);
    let st = store.to_str().unwrap();
    let id = id.to_string();
    let shown = json_of(&["show", &id, "--json", "--store", st]);
    assert_eq!(
        shown["findings"], old["findings"],
        "show prints what is stored"
    );
    let again = json_of(&["show", &id, "--json", "--rediagnose", "--store", st]);
    assert_eq!(
        again["findings"], made["findings"],
        "today's rules on the same figures give today's findings"
    );
    let text = text_of(&["show", &id, "--rediagnose", "--store", st]);
    assert!(!text.contains("short-stroking"), "{text}");
    let after = json_of(&["show", &id, "--json", "--store", st]);
    assert_eq!(
        after["findings"], old["findings"],
        "the stored result is unchanged"
    );
}
