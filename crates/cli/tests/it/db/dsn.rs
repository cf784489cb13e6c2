//! A server of the user's, named by `--dsn` (a server the test started: MariaDB with an
//! account that logs in by password over TCP, PostgreSQL trusting its socket's peers):
//! setup, a run, a reset and a drop work on it, iogauge starts no server of its own, and a
//! password is in no output and nowhere in the results store.

use super::*;

per_engine! {
    fn a_users_server_by_dsn(e) {
        let (_g, w) = db_test(e, heavy);
        let server = UserServer::start(e, &w.path().join("theirs"));
        let dsn = server.dsn();
        let store = w.path().join("s.sqlite");
        let said = |args: &[&str]| -> (std::process::Output, String) {
            let out = bin()
                .env("IOGAUGE_STORE", &store)
                .args(args)
                .output()
                .unwrap();
            let all = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{args:?}: {all}");
            if let Some(secret) = server.secret() {
                assert!(!all.contains(secret), "{args:?} echoed the password: {all}");
            }
            (out, all)
        };
        let on = |sub: &'static str, extra: &[&'static str]| {
            [&["db", sub, "--dsn", &dsn][..], extra].concat()
        };
        let (_, text) = said(&on("setup", &["--schemas", "2", "--scale", "8M"]));
        // 8 MiB a schema: 1,024 blocks of 8 KiB, 512 pages of 16 KiB.
        let rows = match e {
            Engine::Postgres => "1024",
            Engine::Mariadb => "512",
        };
        assert!(text.contains(&format!("loaded 2 schemas x {rows} rows")), "{text}");
        assert!(text.contains(&server.named()), "the server named: {text}");
        let run = ["--readers", "1", "--writers", "1", "--time", "2s", "--json"];
        let (out, _) = said(&on("run", &run));
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        let warned = |w: &str| {
            v["warnings"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().starts_with(w))
        };
        // The user's MariaDB reads ahead (its default): the result says so. PostgreSQL has
        // no read-ahead of its own to warn of (the device's is weighed by a private
        // cluster's preflight, `db/versions.rs`).
        let read_ahead = warned("innodb_read_ahead_threshold=56:");
        assert_eq!(read_ahead, e == Engine::Mariadb, "{}", v["warnings"]);
        assert_eq!(v["server"]["engine"], e.name());
        let s = &v["summary"]["sessions"];
        assert!(f(&s["reads_s"]) > 0.0 && f(&s["updates_s"]) > 0.0, "{s}");
        assert!(
            f(&v["summary"]["db"]["rows_updated_s"]) > 0.0,
            "{}",
            v["summary"]["db"]
        );
        let id = stored_id(&out.stderr).to_string();
        let (_, text) = said(&["show", &id]);
        assert!(text.contains(e.shown_as()), "{text}");
        said(&on("reset", &[]));
        let (_, text) = said(&on("drop", &[]));
        assert!(text.contains("iogauge schemas dropped"), "{text}");
        let left = server.iogauge_schemas();
        assert!(left.is_empty(), "schemas left: {left}");
        if let Some(secret) = server.secret() {
            nowhere_in_the_store(w.path(), secret);
        }
    }
}

/// `secret` is nowhere in the store's files in `dir` (the database and any journal beside
/// it).
fn nowhere_in_the_store(dir: &Path, secret: &str) {
    for f in std::fs::read_dir(dir).unwrap().flatten() {
        if !f.file_name().to_string_lossy().starts_with("s.sqlite") {
            continue;
        }
        let bytes = std::fs::read(f.path()).unwrap();
        assert!(
            !bytes.windows(secret.len()).any(|b| b == secret.as_bytes()),
            "the password is in {}",
            f.path().display()
        );
    }
}
