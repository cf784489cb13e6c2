//! Values under attack (rows 12, 13, 15, 17 and 18): empty values, the largest plan, a
//! campaign name too long for a file name, malformed numbers and ranges with three dots.

use super::*;

// Row 12: empty values (an empty argument, a stray comma, a flag taken for a value) ended in
// "accepted values are " and nothing.
#[test]
fn empty_values_name_the_flag() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    for (args, want) in [
        (vec!["run", "--target", ""], "error: --target: empty path"),
        (vec!["run", "--target", ","], "error: --target: empty path"),
        (vec!["run", "--target", "a,"], "error: --target: empty path"),
        (
            vec!["calibrate", "--target", "a,,b"],
            "error: --target: empty path",
        ),
        (
            vec!["db", "setup", "--target", "a,"],
            "error: --target: empty path",
        ),
        (
            vec!["calibrate", "--csv", ""],
            "error: --csv: no value; give DIR",
        ),
        (
            vec!["run", "--label", "--allow-overwrite"],
            "error: --label: no value",
        ),
    ] {
        let err = refused_on(&s, &args);
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert!(!err.contains("accepted values are"), "{err}");
    }
    let c = d.path().join("c.toml");
    std::fs::write(
        &c,
        "command = \"run\"\n[options]\nlabel = \"--allow-overwrite\"\n",
    )
    .unwrap();
    let err = refused_on(&s, &["campaign", &c.display().to_string(), "--dry-run"]);
    assert!(
        err.contains("options.label = \"--allow-overwrite\": a value may not start with '-'"),
        "{err}"
    );
}

// Row 13: the ceiling of the exact figure, not 600 disks fewer.
#[test]
fn the_largest_plan_is_exact() {
    let _g = shared();
    let d = workdir();
    let (code, out, err) = on(
        &d.path().join("s"),
        &[
            "plan",
            "--iops",
            "1e9",
            "--read-pct",
            "0",
            "--redundancy",
            "raid6",
            "--disk-iops",
            "1",
            "--target-util",
            "1%",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("disks        600000000000 (600000000000.0)"),
        "{out}"
    );
    assert!(out.contains("needs 600000000000 disks"), "{out}");
}

// Row 15: a 300-character campaign name reached a file name (exit 1, "File name too long").
#[test]
fn a_campaign_name_has_a_length_limit() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    let c = d.path().join("c.toml");
    let long = "n".repeat(300);
    std::fs::write(&c, format!("command = \"run\"\nname = \"{long}\"\n")).unwrap();
    let file = c.display().to_string();
    let err = refused_on(&s, &["campaign", &file]);
    assert!(err.contains("a name has at most 100 characters"), "{err}");
    std::fs::write(&c, "command = \"run\"\n").unwrap();
    let err = refused_on(&s, &["campaign", &file, "--name", &long, "--dry-run"]);
    assert!(
        err.contains("--name") && err.contains("at most 100 characters"),
        "{err}"
    );
}

// Row 17: what is wrong and the accepted form, for every integer flag and number part.
#[test]
fn numbers_say_what_is_wrong_and_the_accepted_form() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    for (args, want) in [
        (
            vec!["run", "--bs", "4k:99.5,8k:0.5"],
            "'4k:99.5': a share is a whole percentage from 0 to 100, as in 8k:90,1m:10",
        ),
        (
            vec!["run", "--qd", "1e1"],
            "not written in decimal digits (no sign, point, exponent or 0x); give a whole number from 1 to 4096",
        ),
        (vec!["run", "--seed", "0x10"], "give a whole number from 0 to 18446744073709551615"),
        (
            vec!["run", "--seed", "18446744073709551616"],
            "above 18446744073709551615; give a whole number from 0 to 18446744073709551615",
        ),
        (
            vec!["run", "--dist", "hotspot:64m@0:18446744073709551616"],
            "hotspot frequency '18446744073709551616': above 4294967295",
        ),
        (
            vec!["db", "run", "--hotspot", "64M@0:18446744073709551616"],
            "EVERY is above 4294967295",
        ),
        (vec!["calibrate", "--disks", "2.0"], "give a whole number from 1 to 1024"),
        (vec!["show", "1e1"], "give a whole number from 1 to 9223372036854775807"),
    ] {
        let err = refused_on(&s, &args);
        assert!(err.contains(want), "{args:?}: {err}");
        for rust in ["invalid digit", "too large to fit", "is not a percentage from"] {
            assert!(!err.contains(rust), "{err}");
        }
    }
}

// Row 18: three dots were read as 0%..0.5% and 1ms..0.5ms.
#[test]
fn ranges_with_three_dots_are_refused() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    for args in [
        vec!["run", "--region", "0%...50%"],
        vec!["calibrate", "--region", "0%...50%"],
        vec!["db", "run", "--think-time", "1ms...5ms"],
    ] {
        let err = refused_on(&s, &args);
        assert!(
            err.contains("more than two dots between its ends"),
            "{args:?}: {err}"
        );
    }
}
