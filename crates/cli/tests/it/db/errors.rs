//! The db commands' mistakes, on each engine: one usage line naming the flag, nothing
//! created or touched.

use super::*;

per_engine! {
    fn db_mistakes_are_one_line(e) {
        let _g = shared();
        let w = workdir();
        let foreign = Db::at(e, w.path().join("foreign"));
        std::fs::create_dir(&foreign.dir).unwrap();
        let keep = foreign.dir.join("keep.txt");
        std::fs::write(&keep, "user data").unwrap();
        let err = foreign.fails("run", &["--time", "1s"], 2);
        assert!(err.contains("not created by iogauge"), "{err}");
        assert_eq!(std::fs::read_to_string(&keep).unwrap(), "user data");
        let err = foreign.fails("drop", &[], 2);
        assert!(err.contains(e.none_here()), "{err}");
        assert!(keep.exists());
        let name = e.name();
        // A server that is not there, by a DSN with a password; a cache limit, which only a
        // private server's cgroup can apply.
        let (dsn, bare, other) = match e {
            Engine::Postgres => (
                "postgres://bench:s3cret@127.0.0.1:1/bench",
                "postgres://x@h/db",
                "mariadb",
            ),
            Engine::Mariadb => (
                "mysql://bench:s3cret@127.0.0.1:1/bench",
                "mysql://x@h/db",
                "postgres",
            ),
        };
        for (args, says) in [
            (&["run", "--dsn", dsn, "--time", "1s"][..], "cannot connect"),
            (&["run", "--dsn", bare, "--cache-limit", "1G"], "--cache-limit"),
            (&["run", "--readers", "0"], "--readers"),
            (&["setup", "--scale", "4"], "--scale"),
            (&["run", "--redo-stress", "max"], "lite or heavy"),
            (&["run", "--driver", "both"], "server or client"),
        ] {
            let err = fails(&[&["db"], args, &["--engine", name]].concat(), 2);
            assert!(err.contains(says) && !err.contains("s3cret"), "{args:?}: {err}");
        }
        // An engine that contradicts the DSN's scheme, named without its password.
        let err = fails(&["db", "run", "--engine", other, "--dsn", dsn], 2);
        assert!(
            err.contains(&format!("--engine {other}")) && !err.contains("s3cret"),
            "{err}"
        );
        engine_only_flags(e, &w);
    }
}

/// The flags of one engine's: PostgreSQL's are refused with --engine mariadb, naming the
/// flag; MariaDB's server cannot run in a cache limit below its own memory, refused before
/// anything starts rather than thrashed. With PostgreSQL, `--pg-set` is checked.
fn engine_only_flags(e: Engine, w: &tempfile::TempDir) {
    let db = Db::new(w, e);
    let refused: &[(&str, &[&str], &str)] = match e {
        Engine::Postgres => &[("run", &["--pg-set", "nonsense"], "--pg-set")],
        Engine::Mariadb => &[
            (
                "setup",
                &["--pg-set", "a=b"],
                "--pg-set configures a PostgreSQL cluster",
            ),
            (
                "setup",
                &["--wal-dir", "/w"],
                "--wal-dir configures a PostgreSQL cluster",
            ),
            (
                "setup",
                &["--target", "/t"],
                "--target configures a PostgreSQL cluster",
            ),
            (
                "run",
                &["--driver", "server", "--readers", "1"],
                "--driver server",
            ),
            (
                "run",
                &["--cache-limit", "96M", "--readers", "1"],
                "--cache-limit 96 MiB is too small for MariaDB",
            ),
        ],
    };
    for (sub, args, says) in refused {
        let err = db.fails(sub, args, 2);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(!db.dir.exists(), "a refused command made nothing");
}

/// An engine no one has: one line naming the two there are.
#[test]
fn an_unknown_engine_is_one_line() {
    let _g = shared();
    let e = fails(&["db", "run", "--engine", "oracle"], 2);
    assert!(e.contains("postgres or mariadb"), "{e}");
}

/// `--target` mistakes are one usage line naming the flag, before anything is created
/// (PostgreSQL's tablespaces; with --engine mariadb, `--target` is refused above).
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
        let wal = p("w");
        let args = ["--dir", &d, "--wal-dir", &wal, "--target", &targets];
        let e = fails(&[&["db", "setup"][..], &args].concat(), 2);
        assert!(e.contains("--target") && e.contains(says), "{e}");
    }
    assert!(!Path::new(&d).exists() && !Path::new(&a).exists());
}
