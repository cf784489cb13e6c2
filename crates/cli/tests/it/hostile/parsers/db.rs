//! Connection strings and server settings under fire: `db setup|run|reset|drop --dsn`, and
//! `--pg-set` / `--scale`. Every DSN points where no server can answer (a socket directory
//! in the work directory that holds no socket, or port 1 on loopback, or no host at all), so
//! nothing is ever connected to, let alone changed; the answer is exit 2 with one line, and
//! the password never appears.

use super::*;

/// The password in every generated DSN; it must never be printed.
const SECRET: &str = "s3cr3tPW";

/// Hosts nothing answers on. `{wd}/nosock` is a directory with no server socket (in a URL,
/// `{wdenc}%2Fnosock`, percent-encoded); TCP hosts always carry port 1. No token below can
/// spell another host or port.
const URL_HOSTS: &[&str] = &["{wdenc}%2Fnosock", "127.0.0.1:1", "[::1]:1", ""];
const KV_HOSTS: &[&str] = &[
    "host={wd}/nosock",
    "host=127.0.0.1 port=1",
    "hostaddr=127.0.0.1 port=1",
    "",
];

/// Pieces of user names, database names and options (no host or port words).
const DSN_WORDS: &[&str] = &[
    "u",
    "bench",
    "db",
    "?",
    "&",
    "sslmode=disable",
    "options=",
    "-c",
    "application_name=x",
    "%",
    "%2",
    "%zz",
    "@",
    ":",
    "/",
    "//",
    "=",
    "'",
    "\\'",
    "\"",
    " ",
    "é",
    "🦀",
];

fn slot() -> BoxedStrategy<String> {
    prop::collection::vec(select([DSN_WORDS, NUMS].concat()), 0..4)
        .prop_map(|p| p.concat())
        .boxed()
}

/// DSNs with the password in a password's place, the rest hostile: URLs with wrong schemes
/// and slashes (`garbage://`, `postgres:/`, none), key/value strings with the key in other
/// cases and quoted values, and bare `user:password@host` (issue #14 row 9).
fn dsn() -> BoxedStrategy<String> {
    let url = (
        select(&["postgres", "postgresql", "garbage", "POSTGRES", "pg", ""][..]),
        select(&["://", ":/", ":", "//", ""][..]),
        slot(),
        select(URL_HOSTS),
        slot(),
        prop::option::of(select(&["password", "PASSWORD"][..])),
    )
        .prop_map(|(scheme, sep, user, host, db, query)| {
            let q = query.map_or(String::new(), |k| format!("?{k}={SECRET}"));
            format!("{scheme}{sep}{user}:{SECRET}@{host}/{db}{q}")
        });
    let kv = (
        select(KV_HOSTS),
        select(&["password", "PASSWORD", "Password", "password ", " password"][..]),
        select(&["=", " = ", "= "][..]),
        select(&["{s}", "'{s}'", "'a b {s}'", "'{s}\\' x'", "'{s}"][..]),
        slot(),
        slot(),
        any::<bool>(),
    )
        .prop_map(|(host, key, eq, value, user, rest, first)| {
            let pw = format!("{key}{eq}{}", value.replace("{s}", SECRET));
            // A user name is never empty: `user= password=x` makes libpq read `password=x` as the
            // user's name, which is then no password.
            let others = format!("{host} user=u{user} {rest}");
            if first {
                format!("{pw} {others}")
            } else {
                format!("{others} {pw}")
            }
        });
    prop_oneof![3 => url, 3 => kv].boxed()
}

/// Each `db` subcommand that takes a DSN refuses a hostile one on one line without the
/// password (issue #14 rows 9 and 15, property tests).
#[test]
fn dsns_are_refused_on_one_line_without_the_password() {
    let _g = shared();
    let wd = workdir();
    let dir = wd.path().display().to_string();
    let store = wd.path().join("s.sqlite").display().to_string();
    let subcommands: [&[&str]; 4] = [
        &["db", "run", "--store", &store],
        &["db", "setup", "--scale", "16"],
        &["db", "reset"],
        &["db", "drop"],
    ];
    let clean = Clean {
        names: &["--dsn", "connection string", "PostgreSQL"],
        went_on: None,
        also: &[],
        secret: Some(SECRET),
    };
    let mut failures = Vec::new();
    for sub in subcommands {
        let result = runner(CASES).run(&dsn(), |d| {
            let mut args: Vec<String> = sub.iter().map(|s| s.to_string()).collect();
            let d = d.replace("{wdenc}", &dir.replace('/', "%2F"));
            args.push(format!("--dsn={}", d.replace("{wd}", &dir)));
            clean.check(&call(wd.path(), &args))
        });
        if let Err(e) = result {
            failures.push(format!("{}: {e}", sub[..2].join(" ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        !wd.path().join("nosock").exists(),
        "a DSN made iogauge create its socket directory"
    );
}

/// `--pg-set NAME=VALUE` and `db setup --scale`: refused naming the flag, or accepted and
/// stopped before any server is started (a --dsn server takes no --pg-set; the DSN's socket
/// directory holds no server) (issue #14 row 15, property tests).
#[test]
fn server_settings_and_scales_are_refused_naming_the_flag() {
    let _g = shared();
    let wd = workdir();
    let store = wd.path().join("s.sqlite").display().to_string();
    let dsn = format!("--dsn=host={}/nosock user=u", wd.path().display());
    let settings: &'static [&'static str] = &[
        "shared_buffers=64MB",
        "work_mem=4MB",
        "fsync=off",
        "a.b=1",
        "max_connections=100",
    ];
    let words: &'static [&'static str] = &["=", "shared_buffers", "'", ";", "--", "\\", "MB"];
    let setup = [Flag {
        cmd: &["db", "setup"],
        context: &[],
        flag: "--pg-set",
        valid: settings,
        words,
    }];
    let extra = [dsn.clone()];
    fire(
        &setup,
        CASES,
        wd.path(),
        &extra,
        Some("private cluster"),
        &[],
    );
    let run = [Flag {
        cmd: &["db", "run"],
        context: &[],
        flag: "--pg-set",
        valid: settings,
        words,
    }];
    let extra = [dsn.clone(), "--store".into(), store];
    fire(&run, CASES, wd.path(), &extra, Some("private cluster"), &[]);
    let scale = [
        Flag {
            cmd: &["db", "setup"],
            context: &[],
            flag: "--scale",
            valid: &["64M", "1G", "16", "1000", "128k"],
            words: SIZE_WORDS_DB,
        },
        Flag {
            cmd: &["db", "setup"],
            context: &[],
            flag: "--schemas",
            valid: &["1", "4", "1024"],
            words: &[],
        },
        Flag {
            cmd: &["db", "setup"],
            context: &[],
            flag: "--load-parallel",
            valid: &["1", "2", "256"],
            words: &[],
        },
    ];
    fire(
        &scale,
        CASES,
        wd.path(),
        &[dsn],
        Some("cannot connect"),
        &[],
    );
}

const SIZE_WORDS_DB: &[&str] = &["k", "M", "G", "t", "blocks"];
