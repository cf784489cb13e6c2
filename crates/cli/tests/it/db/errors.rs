//! The db commands' mistakes: one usage line naming the flag, nothing created or touched.

use super::*;

#[test]
fn db_errors_are_one_line() {
    let _g = shared();
    let w = workdir();
    let foreign = w.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("keep.txt"), "user data").unwrap();
    let f_ = foreign.to_str().unwrap();
    let e = fails(&["db", "run", "--dir", f_, "--time", "1s"], 2);
    assert!(e.contains("not created by iogauge"), "{e}");
    assert_eq!(
        std::fs::read_to_string(foreign.join("keep.txt")).unwrap(),
        "user data"
    );
    let e = fails(&["db", "drop", "--dir", f_], 2);
    assert!(e.contains("no iogauge cluster"), "{e}");
    assert!(foreign.join("keep.txt").exists());
    let e = fails(
        &[
            "db",
            "run",
            "--dsn",
            "postgres://bench:s3cret@127.0.0.1:1/bench",
            "--time",
            "1s",
        ],
        2,
    );
    assert!(e.contains("cannot connect") && !e.contains("s3cret"), "{e}");
    let e = fails(
        &[
            "db",
            "run",
            "--dsn",
            "postgres://x@h/db",
            "--cache-limit",
            "1G",
        ],
        2,
    );
    assert!(e.contains("--cache-limit"), "{e}");
    let e = fails(&["db", "run", "--readers", "0"], 2);
    assert!(e.contains("--readers"), "{e}");
    let e = fails(&["db", "setup", "--scale", "4"], 2);
    assert!(e.contains("--scale"), "{e}");
    let e = fails(&["db", "run", "--redo-stress", "max"], 2);
    assert!(e.contains("lite or heavy"), "{e}");
    let e = fails(&["db", "run", "--driver", "both"], 2);
    assert!(
        e.contains("--driver") && e.contains("server or client"),
        "{e}"
    );
    let e = fails(&["db", "run", "--pg-set", "nonsense"], 2);
    assert!(e.contains("--pg-set"), "{e}");
}
/// `--target` mistakes are one usage line naming the flag, before anything is created.
#[test]
fn target_mistakes_are_usage_errors() {
    let _g = shared();
    let w = workdir();
    let p = |s: &str| w.path().join(s).to_str().unwrap().to_string();
    let (d, a) = (p("pg"), p("a"));
    for (targets, says) in [
        (format!("{a},{a}"), "given twice"),
        (format!("{d}/ts"), "overlaps --dir"),
        (p("w/x"), "overlaps --wal-dir"),
    ] {
        let e = fails(
            &[
                "db",
                "setup",
                "--dir",
                &d,
                "--wal-dir",
                &p("w"),
                "--target",
                &targets,
            ],
            2,
        );
        assert!(e.contains("--target") && e.contains(says), "{e}");
    }
    assert!(!Path::new(&d).exists() && !Path::new(&a).exists());
}
