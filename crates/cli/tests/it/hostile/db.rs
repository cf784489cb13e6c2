//! The private servers and secrets under attack (issue #14, rows 6, 7, 8, 9; issue #44 for
//! MariaDB), one test body per behaviour run on each engine: passwords in DSNs are never
//! echoed, other local users cannot get into the private server, the server dies with a
//! killed iogauge, Ctrl-C in setup cleans up. PostgreSQL's own (reset's copy, `--pg-set`,
//! `--wal-dir`) are `hostile/pg.rs`'s, MariaDB's own (its tmpdir) `hostile/maria.rs`'s. Real
//! PostgreSQL 15 and MariaDB 10.11, real `runuser`, real signals; as root.

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

const SECRET: &str = "secretpw";

per_engine! {
    // Row 9: a password in any DSN form is never echoed, by any db subcommand; MariaDB's
    // message names the server with the password masked.
    fn dsn_passwords_are_never_echoed(e) {
        let _g = shared();
        let forms = match e {
            Engine::Postgres => vec![
                format!("garbage://u:{SECRET}@x"),
                format!("postgres:/u:{SECRET}@x/db"),
                format!("u:{SECRET}@host/db"),
                format!("PASSWORD={SECRET} host=localhost"),
                format!("host=127.0.0.1 port=1 password={SECRET}"),
                format!("postgres://u:{SECRET}@127.0.0.1:1/db?password={SECRET}"),
                format!("host=h password='{SECRET}"),
            ],
            Engine::Mariadb => vec![
                format!("mysql://bench:{SECRET}@127.0.0.1:1/db"),
                format!("mariadb://bench:{SECRET}@127.0.0.1:1/db"),
                format!("mysql://bench:{SECRET}@h:notaport/db"),
            ],
        };
        for dsn in &forms {
            for cmd in [
                vec!["db", "run", "--dsn", dsn, "--time", "1s", "--readers", "1"],
                vec!["db", "setup", "--dsn", dsn],
                vec!["db", "reset", "--dsn", dsn],
                vec!["db", "drop", "--dsn", dsn],
            ] {
                let out = bin().args(&cmd).output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
                assert_eq!(err.trim_end().lines().count(), 1, "{cmd:?}: {err}");
                assert!(err.starts_with("error:"), "{err}");
                assert!(!err.contains(SECRET), "{cmd:?} echoed the password: {err}");
                assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
                if e == Engine::Mariadb {
                    assert!(err.contains("***") || err.contains("bench@"), "{cmd:?}: {err}");
                }
            }
        }
    }

    // Row 6: during a db run, no other local user gets into the private server, through any
    // layer; no password exists to leak.
    fn other_local_users_cannot_connect_during_a_db_run(e) {
        let (_g, w) = db_test(e, busy);
        let db = Db::new(&w, e);
        db.setup_small();
        if e == Engine::Postgres {
            assert_eq!(hba_rules(&db.dir), ["local all all peer map=iogauge"]);
        }
        let run = db.run_in_background("10s");
        assert_eq!(mode(&db.dir.join("run")), 0o700, "socket directory");
        match e {
            Engine::Postgres => pg_closed_to_others(&db),
            Engine::Mariadb => maria_closed_to_others(&db),
        }
        let out = finish(run, 60);
        assert_success(&out);
        // Nothing of the kind in the run's output or the stored document.
        let id = stored_id(&out.stderr);
        let shown = bin()
            .args(["show", &id.to_string(), "--json"])
            .output()
            .unwrap();
        let all = [&out.stdout, &out.stderr, &shown.stdout]
            .map(|b| String::from_utf8_lossy(b).to_lowercase())
            .join("\n");
        for word in ["trust", "scram", "md5", "password"] {
            assert!(!all.contains(word), "{word} in the output or the store");
        }
        db.drop_it();
    }

    // Row 7: kill -9 of `db run` takes the server and every session along; the next run
    // works (InnoDB recovers at its next start).
    fn killed_db_run_takes_its_server_along(e) {
        let (_g, w) = db_test(e, busy);
        let db = Db::new(&w, e);
        db.setup_small();
        let mut run = db.run_in_background("60s");
        std::thread::sleep(Duration::from_secs(2));
        if e == Engine::Postgres {
            assert!(db.procs().len() > 1, "postmaster and backends run");
        }
        run.kill().unwrap();
        run.wait().unwrap();
        assert!(
            within(10, || db.gone()),
            "still running after iogauge was killed: {:?}",
            db.procs()
        );
        // PostgreSQL's postmaster removes its pid file as it dies; a killed mariadbd may leave
        // its own, naming a process that is gone, and the next start replaces it.
        let pid = e.pid_file(&db.dir);
        match e {
            Engine::Postgres => assert!(!pid.exists()),
            Engine::Mariadb => {
                // Dead: no such process, or a zombie its reaper has not collected yet.
                let named = std::fs::read_to_string(&pid).unwrap_or_default();
                let stat = std::fs::read_to_string(format!("/proc/{}/stat", named.trim()));
                let state = stat.map(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('Z')));
                let live = !named.trim().is_empty() && state.is_ok_and(|z| z != Some(true));
                assert!(!live, "{} names a live process", pid.display());
            }
        }
        db.runs();
        db.drop_it();
        assert!(!db.dir.exists());
    }

    // Row 8: Ctrl-C in `db setup` while it loads stops it, removes what it created (only the
    // contents of a directory it was given) and exits 130; a setup afterwards works. On
    // PostgreSQL also during initdb, in a directory it made; MariaDB's installer
    // interrupted is `hostile/trust/maria.rs`'s (a hung one).
    fn ctrl_c_in_setup_removes_what_it_created(e) {
        let (_g, w) = db_test(e, busy);
        let keep = w.path().join("keep.txt");
        std::fs::write(&keep, "user data").unwrap();
        let db = Db::new(&w, e);
        if e == Engine::Postgres {
            let marker = db.dir.join(e.marker());
            let err = interrupt_setup(&db, || marker.exists());
            assert!(err.contains("initdb"), "{err}");
            assert!(!db.dir.exists(), "the directory setup made is gone");
        }
        // Given an empty directory: interrupted while loading, the directory stays, empty.
        std::fs::create_dir(&db.dir).unwrap();
        let sock = db.socket();
        interrupt_setup(&db, || sock.exists());
        assert_eq!(
            std::fs::read_dir(&db.dir).unwrap().count(),
            0,
            "left in {:?}",
            db.dir
        );
        assert_eq!(std::fs::read_to_string(&keep).unwrap(), "user data");
        db.setup_small();
        db.drop_it();
        assert!(db.dir.exists(), "drop keeps a directory the user made");
    }
}

/// Ctrl-C `db setup` of a data set that takes seconds to load once `ready` says so; asserts
/// exit 130 within 20 s, one line saying what was removed, and no server process left.
fn interrupt_setup(db: &Db, ready: impl Fn() -> bool) -> String {
    // MariaDB loads faster, and its socket appears a moment before its load begins.
    let (scale, settle, says) = match db.engine {
        Engine::Postgres => ("64M", 0, "removed what it had created"),
        Engine::Mariadb => ("256M", 500, "removed again"),
    };
    let child = db.spawn("setup", &["--schemas", "4", "--scale", scale]);
    assert!(
        within(60, &ready),
        "setup never reached the moment to interrupt"
    );
    std::thread::sleep(Duration::from_millis(settle));
    sigint(&child);
    let t = Instant::now();
    let out = finish(child, 60);
    let err = stopped(&out, &[says]);
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t.elapsed()
    );
    assert!(db.gone(), "a server outlived Ctrl-C");
    err
}

/// `psql` as `user` (through runuser) or as root, on the cluster's socket: (success, stderr).
fn psql(user: Option<&str>, host: &str) -> (bool, String) {
    let out = as_os_user(user, "psql")
        .args([
            "-h", host, "-U", "postgres", "-d", "iogauge", "-Atc", "SELECT 1",
        ])
        .output()
        .expect("runuser and psql (apt-get install -y util-linux postgresql-client)");
    (
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "1",
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What another local user gets from a running PostgreSQL, through each layer: the socket's
/// permissions, then (with those opened by hand) peer authentication, then TCP.
pub(super) fn pg_closed_to_others(db: &Db) {
    let run = db.dir.join("run");
    let (ok, err) = psql(Some("nobody"), s(&run));
    assert!(!ok && err.contains("Permission denied"), "{err}");
    chmod(&run, 0o755);
    chmod(&db.socket(), 0o777);
    let (ok, err) = psql(Some("nobody"), s(&run));
    assert!(
        !ok && err.contains("Peer authentication failed"),
        "past the socket's permissions, pg_hba.conf must still refuse: {err}"
    );
    let (ok, err) = psql(Some("nobody"), "127.0.0.1");
    assert!(!ok && err.contains("Connection refused"), "TCP: {err}");
    // The server itself is fine: iogauge's own account (root) gets in.
    let (ok, err) = psql(None, s(&run));
    assert!(ok, "root must still connect: {err}");
    chmod(&run, 0o700);
}

/// What another local user gets from a running MariaDB: the socket's directory refuses;
/// past the directories' permissions, the unix_socket plugin still refuses (the kernel says
/// the peer is `nobody`, not root, and no account has a password); no TCP at all.
fn maria_closed_to_others(db: &Db) {
    let (dir, rund, sock) = (&db.dir, db.dir.join("run"), db.socket());
    let (ok, err) = maria_client(Some("nobody"), "root", &sock, "SELECT 1");
    assert!(
        !ok && err.contains("(13"),
        "the socket's directory must refuse: {err}"
    );
    assert_eq!(mode(dir), 0o700, "the server's directory");
    chmod(dir, 0o755);
    chmod(&rund, 0o755);
    chmod(&sock, 0o777);
    for user in ["root", "nobody", "mysql", "mariadb.sys"] {
        let (ok, err) = maria_client(Some("nobody"), user, &sock, "SELECT 1");
        assert!(!ok && err.contains("Access denied"), "{user}: {err}");
    }
    // iogauge's own account gets in.
    let (ok, out) = maria_client(None, "root", &sock, "SELECT @@skip_networking");
    assert!(ok && out.trim() == "1", "{out}");
    chmod(&rund, 0o700);
    chmod(dir, 0o700);
}

/// The only rule in pg_hba.conf: peer authentication on the socket, through iogauge's map.
pub(super) fn hba_rules(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("data").join("pg_hba.conf"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}
