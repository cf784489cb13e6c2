//! Where results go (rows 8 and 11): an output directory iogauge cannot write is refused
//! before measuring; a stdout closed after storing, or a stored document damaged by hand,
//! ends in one error naming its cause and the way out.

use super::*;

// Row 8: an output directory on /proc or a read-only mount was found after the whole
// calibration (exit 1); now exit 2 before the target is even created.
#[test]
fn output_paths_that_cannot_be_written_are_refused_before_measuring() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let target = d.path().join("t");
    let t = target.display().to_string();
    let calibrate = |csv: &str| {
        refused_on(
            &store,
            &[
                "calibrate",
                "--target",
                &t,
                "--size",
                "4m",
                "--matrix",
                "point",
                "--num-small",
                "1",
                "--num-large",
                "1",
                "--csv",
                csv,
            ],
        )
    };
    let err = calibrate("/proc/x");
    assert!(
        err.contains("--csv /proc/x") && err.contains("proc"),
        "{err}"
    );
    let ro = d.path().join("ro");
    let _m = Mount::new(&ro, "tmpfs", "ro,size=1m");
    for csv in [ro.clone(), ro.join("new")] {
        let err = calibrate(&csv.display().to_string());
        assert!(err.contains("read-only filesystem"), "{err}");
    }
    // The one check serves every output path: `report -o` and `export -o` on the mount.
    let out = ro.join("r.html").display().to_string();
    let err = refused_on(&store, &["report", "1", "-o", &out]);
    assert!(
        err.contains("-o ") && err.contains("read-only filesystem"),
        "{err}"
    );
    let err = refused_on(
        &store,
        &["export", "--campaign", "c", "--format", "csv", "-o", &out],
    );
    assert!(err.contains("read-only filesystem"), "{err}");
    assert!(
        !target.exists(),
        "nothing was measured: the target was never made"
    );
    assert!(!store.exists(), "nor the store");
}

// Row 11: stdout closed after the result was stored: the OS error once, not twice.
#[test]
fn a_closed_stdout_after_storing_says_its_cause_once() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let t = d.path().join("t").display().to_string();
    let mut child = command()
        .env("IOGAUGE_STORE", &store)
        .args([
            "run", "--target", &t, "--size", "4m", "--ios", "200", "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iogauge");
    drop(child.stdout.take()); // the reader goes away before the result is written
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("os error 32").count(), 1, "{err}");
    assert_eq!(err.matches("Broken pipe").count(), 1, "{err}");
    assert!(err.contains("the run is stored as run 1"), "{err}");
}

// Row 11: a stored document damaged by hand: exit 2 naming the run and the way out; the
// other runs still show.
#[test]
fn a_damaged_document_is_named_with_the_way_out() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("s.sqlite");
    let good = stored_run(d.path(), &store);
    let bad = stored_run(d.path(), &store);
    let st = Command::new("sqlite3")
        .arg(&store)
        .arg(format!(
            "UPDATE runs SET document = '{{\"kind\": \"run\", broken' WHERE id = {bad}"
        ))
        .status()
        .expect("sqlite3 is installed");
    assert!(st.success());
    let id = bad.to_string();
    for args in [vec!["show", &id], vec!["report", &id]] {
        let err = refused_on(&store, &args);
        assert!(err.contains(&format!("run {bad} cannot be read")), "{err}");
        assert!(err.contains("`iogauge history`"), "{err}");
    }
    let (code, out, err) = on(&store, &["show", &good.to_string()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("iogauge run"), "{out}");
}
