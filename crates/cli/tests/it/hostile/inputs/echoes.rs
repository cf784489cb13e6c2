//! What a message or a listing echoes back (issue #44, rows 4 and 6): a label with a
//! right-to-left override (U+202E) or a line separator (U+2028) was stored and printed raw,
//! reordering the line it was on; a 100,000-digit CSV field, flag value or campaign value was
//! quoted whole in its error.

use super::*;

/// A one-line refusal that names `what` and quotes a long value by its start.
fn bounded_refusal(store: &Path, args: &[&str], what: &str) {
    let err = refused_on(store, args);
    assert!(err.len() < 600, "{} bytes: {}…", err.len(), &err[..300]);
    assert!(err.contains("characters)"), "no length said: {err}");
    assert!(err.contains(what), "{what:?} not named: {err}");
}

#[test]
fn long_values_are_quoted_by_their_start() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    let digits = "9".repeat(100_000);
    let csv = d.path().join("h.csv");
    std::fs::write(
        &csv,
        format!("timestamp,read_iops,write_iops\nt,{digits},1\n"),
    )
    .unwrap();
    let history = [
        "plan",
        "--history",
        csv.to_str().unwrap(),
        "--disk-iops",
        "180",
    ];
    bounded_refusal(
        &s,
        &[&history[..], &["--redundancy", "normal"]].concat(),
        "read_iops",
    );
    let t = d.path().join("t").display().to_string();
    bounded_refusal(&s, &["run", "--target", &t, "--bs", &digits], "--bs");
    let words = "1 s ".repeat(25_000);
    bounded_refusal(&s, &["run", "--target", &t, "--time", &words], "--time");
    bounded_refusal(
        &s,
        &["run", &format!("--{}", "x".repeat(100_000))],
        "argument",
    );
    // A campaign's values: its own keys (a TOML type error quotes the value) and flags.
    let file = d.path().join("c.toml");
    let f = file.to_str().unwrap();
    for (text, what) in [
        (format!("command = {words:?}\n"), "command"),
        (format!("command = \"run\"\nrepeat = {words:?}\n"), "line 2"),
        (
            format!("command = \"run\"\n[options]\ntarget = \"{t}\"\nqd = \"{digits}\"\n"),
            "--qd",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        bounded_refusal(&s, &["campaign", f, "--dry-run"], what);
    }
}

#[test]
fn labels_refuse_what_reorders_a_line_and_stored_ones_print_escaped() {
    let _g = shared();
    let d = workdir();
    let s = d.path().join("s.sqlite");
    let t = d.path().join("t").display().to_string();
    let run = ["run", "--target", &t, "--size", "4m", "--ios", "200"];
    for (c, name) in [
        ('\u{202e}', "U+202E"),
        ('\u{2028}', "U+2028"),
        ('\u{200b}', "U+200B"),
    ] {
        let label = format!("before{c}after");
        let err = refused_on(&s, &[&run[..], &["--label", &label]].concat());
        assert!(err.contains("--label") && err.contains(name), "{err}");
        assert!(!err.contains(c), "the refusal printed it raw: {err:?}");
    }
    // A store written before the check, or by hand: the label holds the override.
    let (code, _, err) = on(&s, &[&run[..], &["--label", "fooXbar"]].concat());
    assert_eq!(code, Some(0), "{err}");
    let id = stored_id(err.as_bytes()).to_string();
    let st = Command::new("sqlite3")
        .arg(&s)
        .arg(
            "UPDATE runs SET document = replace(document, 'fooXbar', 'foo' || char(8238) || 'bar')",
        )
        .status()
        .expect("sqlite3 is installed");
    assert!(st.success());
    let (_, json, _) = on(&s, &["history", "--json"]);
    assert!(
        json.contains("foo\u{202e}bar"),
        "the store holds it: {json}"
    );
    let page = d.path().join("r.html").display().to_string();
    for args in [
        vec!["history"],
        vec!["show", &id],
        vec!["compare", &id, &id],
        vec!["report", &id, "-o", &page],
    ] {
        let (code, out, err) = on(&s, &args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        let out = if args[0] == "report" {
            std::fs::read_to_string(&page).unwrap()
        } else {
            out
        };
        assert!(!out.contains('\u{202e}'), "{args:?} printed it raw");
        assert!(out.contains("foo\\u{202e}bar"), "{args:?}: {out}");
    }
}
