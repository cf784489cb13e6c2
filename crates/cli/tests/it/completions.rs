//! `iogauge completions SHELL` and `iogauge man`: made from the clap definition, written to
//! stdout with exit 0; a shell iogauge does not know is a one-line usage error (exit 2).

use crate::common::*;

/// The subcommands every generated text must name.
const SUBCOMMANDS: [&str; 4] = ["run", "calibrate", "db", "campaign"];

fn stdout_of(args: &[&str]) -> String {
    let out = bin().args(args).output().expect("spawn iogauge");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    assert!(out.stderr.is_empty(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

#[test]
fn completions_name_the_subcommands() {
    let _g = shared();
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout_of(&["completions", shell]);
        assert!(!script.trim().is_empty(), "{shell}: empty script");
        for sub in SUBCOMMANDS {
            // As a whole word: "run" inside "rung" or "--run" alone would not do.
            let named = script
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .any(|w| w == sub);
            assert!(named, "{shell} completions do not name {sub}");
        }
        // Flags of a subcommand are completed too.
        assert!(script.contains("--read-pct"), "{shell}: no run flags");
    }
    for shell in ["elvish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains("calibrate"), "{shell}: {script}");
    }
}

#[test]
fn man_is_a_roff_page_naming_the_subcommands() {
    let _g = shared();
    let page = stdout_of(&["man"]);
    // clap_mangen's page: a preamble of roff requests, then the title.
    let title = page
        .lines()
        .find(|l| !l.starts_with(".ie ") && !l.starts_with(".el "))
        .unwrap_or_default();
    assert!(title.starts_with(".TH iogauge 1"), "{title}");
    assert!(page.lines().any(|l| l == ".SH SUBCOMMANDS"), "{page}");
    for sub in SUBCOMMANDS {
        // Listed, and a section of their own with their flags.
        assert!(page.contains(&format!("\\fBiogauge {sub}\\fR\n")), "{sub}");
        let heading = format!(".SH \"IOGAUGE {}\"", sub.to_uppercase());
        assert!(page.lines().any(|l| l == heading), "{heading}");
    }
    assert!(
        page.contains("\\-\\-read\\-pct"),
        "run's flags are in the page"
    );
    assert!(
        page.contains(".SH \"IOGAUGE DB RUN\""),
        "db's subcommands too"
    );
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let _g = shared();
    let out = bin()
        .args(["completions", "nosuchshell"])
        .output()
        .expect("spawn iogauge");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("nosuchshell"),
        "{err}"
    );
    assert!(
        err.contains("bash") && err.contains("zsh"),
        "names the shells: {err}"
    );
}

#[test]
fn a_stdout_that_cannot_take_it_is_an_error_line() {
    let _g = shared();
    for args in [&["completions", "bash"][..], &["man"]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = command()
            .args(args)
            .stdout(full)
            .stderr(std::process::Stdio::piped())
            .output()
            .expect("spawn iogauge");
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: writing to stdout"), "{err}");
    }
}
