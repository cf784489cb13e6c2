//! Every bad flag a one-line usage error naming it; the help states each profile figure.

use super::*;

#[test]
fn bad_flags_are_usage_errors_naming_the_flag() {
    let _g = shared();
    let w = ["--iops", "1000", "--read-pct", "50"];
    let d = ["--disk-iops", "180"];
    let r = ["--redundancy", "normal"];
    let cat = |parts: &[&[&'static str]]| -> Vec<&'static str> {
        let mut v = vec!["plan"];
        for p in parts {
            v.extend_from_slice(p);
        }
        v
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            cat(&[&w, &r, &["--disk-profile", "5.4k"]]),
            "--disk-profile",
        ),
        (cat(&[&w, &d, &["--redundancy", "raid7"]]), "raid7"),
        (
            cat(&[&w, &d, &r, &["--history", "x.csv"]]),
            "--iops and --history",
        ),
        (cat(&[&w, &d, &r, &["--disk-profile", "15k"]]), "use one"),
        (
            cat(&[&w, &d, &r, &["--write-penalty", "3"]]),
            "--redundancy and --write-penalty",
        ),
        (
            cat(&[&w, &d, &["--write-penalty", "0.5"]]),
            "'0.5' for '--write-penalty <N>'",
        ),
        (cat(&[&w, &d]), "--redundancy"),
        (cat(&[&w, &r]), "--disk-iops"),
        (cat(&[&d, &r]), "say what to plan"),
        (cat(&[&["--iops", "1000"], &d, &r]), "--read-pct"),
        (cat(&[&["--disks", "10"], &d, &r]), "--read-pct"),
        (
            cat(&[&w, &d, &r, &["--percentile", "95"]]),
            "--percentile applies to --history",
        ),
        (
            cat(&[&w, &d, &r, &["--columns", "read_iops=r/s"]]),
            "--columns applies to --history",
        ),
        (cat(&[&w, &d, &r, &["--mbps", "100"]]), "--disk-mbps"),
        (
            cat(&[&w, &r, &["--disk-profile", "15k", "--disk-mbps", "100"]]),
            "--disk-mbps goes with --disk-iops",
        ),
        (cat(&[&w, &d, &r, &["--read-pct", "101"]]), "--read-pct"),
        (
            cat(&[&w, &d, &r, &["--target-util", "0%"]]),
            "--target-util",
        ),
        (
            cat(&[&w, &d, &r, &["--read-cache-hit", "100%"]]),
            "--read-cache-hit",
        ),
        (cat(&[&w, &r, &["--disk-iops", "0"]]), "--disk-iops"),
        (
            cat(&[&w, &d, &r, &["--per-enclosure", "0"]]),
            "--per-enclosure",
        ),
        (
            cat(&[&d, &r, &["--history", "h.csv", "--read-pct", "50"]]),
            "--read-pct does not apply to --history",
        ),
        (
            cat(&[&d, &r, &["--history", "h.csv", "--columns", "reads=r/s"]]),
            "--columns reads=r/s: unknown role",
        ),
    ];
    for (args, want) in cases {
        let err = fails(&args, 2);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn help_states_each_profile_figure() {
    let _g = shared();
    let out = bin().args(["plan", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for p in iogauge_plan::DiskProfile::ALL {
        let figures = format!("{p} {}, {}", p.iops(), p.mbps());
        assert!(help.contains(&figures), "help lacks {figures:?}:\n{help}");
    }
}
