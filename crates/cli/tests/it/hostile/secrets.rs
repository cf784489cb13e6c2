//! Passwords of any characters (issue #44, M3 and row 3): a URL parser drops TAB, CR and LF
//! from a URL and encodes a blank, so a `mysql://` password holding them connects, and its
//! pieces between them were printed and stored (`server.location`); a DSN that does not
//! parse says what is wrong with it, and still never its password. Servers here are ones
//! nobody listens on, but for the one test that stores a run.

use crate::common::*;

/// The two halves of every password here: no message or stored result may hold either.
const HALVES: [&str; 2] = ["xq7Hk", "Zp3Wv"];

/// What goes between the halves: each character a mask working on words could stop at.
const BETWEEN: &[&str] = &["\t", "\r", "\n", " ", "@", ":", "/", "%", "é✓", " \t@:/%\n"];

/// (exit code, stdout and stderr) of `iogauge ARGS` with `env`.
fn said(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = bin().args(args).envs(env.iter().copied()).output().unwrap();
    let all =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), all)
}

fn holds_a_half(text: &str) -> bool {
    HALVES.iter().any(|h| text.contains(h))
}

#[test]
fn dsn_passwords_of_any_characters_are_never_echoed() {
    let _g = shared();
    let port = free_port();
    for between in BETWEEN {
        let pw = format!("{}{between}{}", HALVES[0], HALVES[1]);
        for scheme in ["postgres", "mysql"] {
            let dsn = format!("{scheme}://bench:{pw}@127.0.0.1:{port}/bench");
            for cmd in [
                &["db", "run", "--readers", "1"][..],
                &["db", "setup"],
                &["db", "drop"],
            ] {
                let by_flag = [cmd, &["--dsn", &dsn]].concat();
                // From the environment too, off the command line.
                for (args, env) in [
                    (&by_flag[..], &[][..]),
                    (cmd, &[("IOGAUGE_DSN", &*dsn)][..]),
                ] {
                    let (code, all) = said(args, env);
                    assert!(matches!(code, Some(1 | 2)), "{args:?} {env:?}: {all}");
                    assert!(!all.contains("panicked"), "{all}");
                    assert!(
                        !holds_a_half(&all),
                        "{args:?} {env:?} echoed the password: {all}"
                    );
                    assert!(all.contains("127.0.0.1"), "the server named: {all}");
                }
            }
        }
    }
    // A DSN from the environment with --dir: refused, saying where the DSN came from.
    let env = [("IOGAUGE_DSN", "postgres://u:xq7Hk@127.0.0.1:1/db")];
    let (code, all) = said(&["db", "setup", "--dir", "d"], &env);
    assert_eq!(code, Some(2), "{all}");
    assert!(all.contains("IOGAUGE_DSN in the environment"), "{all}");
    assert!(!holds_a_half(&all), "{all}");
}

#[test]
fn a_dsn_that_does_not_parse_says_why_without_its_password() {
    let _g = shared();
    // What the parsers read as part of a password: a `/` would end the URL's authority
    // (`mysql://u:a/b@h` is host `u`, port `a`), an `@` rust-postgres's userinfo (`u:a@b@h`
    // is host `b@h`); those are in the test above.
    for between in BETWEEN.iter().filter(|b| !b.contains(['/', '@'])) {
        let pw = format!("{}{between}{}", HALVES[0], HALVES[1]);
        for (dsn, why) in [
            (
                format!("postgres://u:{pw}@h:notaport/db"),
                "invalid value for option `port`",
            ),
            (
                format!("postgres://u:{pw}@h/db?foo=bar"),
                "unknown option `foo`",
            ),
            (
                format!("mysql://u:{pw}@h:notaport/db"),
                "invalid port number",
            ),
            (
                format!("mysql://u:{pw}@h/db?foo=bar"),
                "Unknown URL parameter `foo'",
            ),
        ] {
            let (code, all) = said(&["db", "run", "--dsn", &dsn], &[]);
            assert_eq!(code, Some(2), "{dsn:?}: {all}");
            assert_eq!(all.trim_end().lines().count(), 1, "one line: {all:?}");
            assert!(all.contains(why), "{dsn:?}: the reason is lost: {all}");
            assert!(!holds_a_half(&all), "{dsn:?} echoed the password: {all}");
            assert!(!all.contains("user:***"), "the way out is masked: {all}");
        }
    }
}

/// The case the hostile round saw: a tab in a `mysql://` password; the parser drops it, the
/// server takes the rest, and the run is stored. Neither half may be printed or stored.
#[test]
fn a_password_a_url_parser_rewrote_is_never_printed_or_stored() {
    let _g = busy();
    let w = workdir();
    let server = UserMaria::start(&w.path().join("theirs"));
    let (ok, out) = server.root_sql(&format!(
        "CREATE USER tabs@'127.0.0.1' IDENTIFIED BY '{}{}'; GRANT ALL ON *.* TO tabs@'127.0.0.1'",
        HALVES[0], HALVES[1]
    ));
    assert!(ok, "{out}");
    let port = server.port();
    let dsn = format!(
        "mysql://tabs:{}\t{}@127.0.0.1:{port}/mysql",
        HALVES[0], HALVES[1]
    );
    let store = w.path().join("s.sqlite");
    let st = store.to_str().unwrap();
    let setup = [
        "db",
        "setup",
        "--dsn",
        &dsn,
        "--schemas",
        "1",
        "--scale",
        "2M",
    ];
    let run = ["db", "run", "--dsn", &dsn, "--readers", "1", "--time", "1s"];
    let run = [&run[..], &["--interval", "500ms", "--store", st]].concat();
    let mut printed = String::new();
    for args in [&setup[..], &run, &["db", "drop", "--dsn", &dsn]] {
        let (code, all) = said(args, &[]);
        assert_eq!(code, Some(0), "{args:?}: {all}");
        printed += &all;
    }
    assert!(!holds_a_half(&printed), "printed: {printed}");
    let (code, shown) = said(&["show", "1", "--json", "--store", st], &[]);
    assert_eq!(code, Some(0), "{shown}");
    assert!(!holds_a_half(&shown), "stored: {shown}");
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(
        v["server"]["location"].as_str(),
        Some(&*format!("mysql://tabs@127.0.0.1:{port}/mysql"))
    );
}
