//! Rows 2, 9 and 10: the user's own target and WAL directories keep their owner, mode and
//! files through setup, reset and drop (an older iogauge's cluster too); a failed setup
//! removes only what it made; a directory given twice or nested is refused up front.

use super::*;

/// A directory the user made: mode 0751, so a changed mode shows.
fn users_dir(at: &Path) -> PathBuf {
    std::fs::create_dir_all(at).unwrap();
    chmod(at, 0o751);
    at.to_path_buf()
}

fn assert_users(dir: &Path, files: &[&str]) {
    assert_eq!(
        (owner(dir), mode(dir)),
        (0, 0o751),
        "{} is no longer as the user made it",
        dir.display()
    );
    for f in files {
        assert_eq!(
            std::fs::read_to_string(dir.join(f)).unwrap(),
            "user's",
            "{f} in {}",
            dir.display()
        );
    }
}

// Rows 2 and 10: `db setup --target A --wal-dir W` with directories the user made: iogauge
// works in its own directory inside each; the user's directories keep owner and mode, and
// files the user puts there later survive `db reset` and `db drop`.
#[test]
fn row2_files_the_user_puts_in_target_and_wal_directories_survive() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let (a, wal) = (
        users_dir(&w.path().join("a")),
        users_dir(&w.path().join("w")),
    );
    let dir = w.path().join("pg");
    let out = setup(&dir, &["--target", s(&a), "--wal-dir", s(&wal)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("on {}/iogauge-ts", a.display())),
        "{text}"
    );
    assert_eq!(names(&a), ["iogauge-ts"]);
    assert_eq!(names(&wal), ["iogauge-wal"]);
    assert_users(&a, &[]);
    assert_users(&wal, &[]);
    for d in [&a, &wal] {
        std::fs::write(d.join("notes.txt"), "user's").unwrap();
    }
    db_ok(&["run", "--dir", s(&dir), "--writers", "1", "--time", "1s"]);
    db_ok(&["reset", "--dir", s(&dir)]);
    assert_users(&a, &["notes.txt"]);
    assert_users(&wal, &["notes.txt"]);
    db_ok(&["run", "--dir", s(&dir), "--readers", "1", "--time", "1s"]);
    db_ok(&["drop", "--dir", s(&dir)]);
    assert_eq!(names(&a), ["notes.txt"]);
    assert_eq!(names(&wal), ["notes.txt"]);
    assert_users(&a, &["notes.txt"]);
    assert_users(&wal, &["notes.txt"]);
    assert!(!dir.exists());
}

/// Moves what iogauge made in `sub` of the user's directory `user` into `user` itself, as an
/// older iogauge had it, and points `links` (symlinks in data/ and its pristine copy) there.
fn make_older(user: &Path, sub: &str, links: &[PathBuf]) {
    let s = user.join(sub);
    for n in names(&s) {
        std::fs::rename(s.join(&n), user.join(&n)).unwrap();
    }
    std::fs::remove_dir(&s).unwrap();
    for l in links {
        assert_eq!(std::fs::read_link(l).unwrap(), s, "{}", l.display());
        std::fs::remove_file(l).unwrap();
        std::os::unix::fs::symlink(user, l).unwrap();
    }
    sh(&format!(
        "chown -R postgres: '{}' && chmod 700 '{}'",
        user.display(),
        user.display()
    ));
}

// Row 2, a cluster an older iogauge made (it used the user's WAL and tablespace directories
// themselves, given to postgres): it still opens, runs and resets, and reset and drop remove
// there only what PostgreSQL made; the user's files stay.
#[test]
fn row2_an_older_cluster_in_user_made_directories_keeps_user_files() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let (a, wal) = (
        users_dir(&w.path().join("a")),
        users_dir(&w.path().join("w")),
    );
    let dir = w.path().join("pg");
    setup(&dir, &["--target", s(&a), "--wal-dir", s(&wal)]);
    let tblspc = |root: &Path| {
        let d = root.join("pg_tblspc");
        d.join(&names(&d)[0])
    };
    let pristine = dir.join("pristine/data");
    make_older(
        &a,
        "iogauge-ts",
        &[tblspc(&dir.join("data")), tblspc(&pristine)],
    );
    make_older(
        &wal,
        "iogauge-wal",
        &[dir.join("data/pg_wal"), pristine.join("pg_wal")],
    );
    let m = dir.join(".iogauge-pg");
    let older: String = std::fs::read_to_string(&m)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("_from="))
        .map(|l| {
            let l = l.replace("/iogauge-ts", "").replace("/iogauge-wal", "");
            let l = l.replace("created_tablespace=1", "created_tablespace=0");
            l.replace("created_wal_dir=1", "created_wal_dir=0") + "\n"
        })
        .collect();
    std::fs::write(&m, older).unwrap();
    for d in [&a, &wal] {
        std::fs::write(d.join("notes.txt"), "user's").unwrap();
    }
    db_ok(&["run", "--dir", s(&dir), "--writers", "1", "--time", "1s"]);
    db_ok(&["reset", "--dir", s(&dir)]);
    db_ok(&["run", "--dir", s(&dir), "--readers", "1", "--time", "1s"]);
    for d in [&a, &wal] {
        assert_eq!(
            std::fs::read_to_string(d.join("notes.txt")).unwrap(),
            "user's"
        );
    }
    assert!(
        names(&a).iter().any(|n| n.starts_with("PG_")),
        "{:?}",
        names(&a)
    );
    db_ok(&["drop", "--dir", s(&dir)]);
    assert_eq!(names(&a), ["notes.txt"]);
    assert_eq!(names(&wal), ["notes.txt"]);
}

// Row 10: a failed setup leaves the user's directories as they were and removes every
// directory it created, parents too; so does `db drop`, except a parent the user has put a
// file in since.
#[test]
fn row10_user_directories_unchanged_and_created_parents_removed() {
    let (_g, w) = db_test(Engine::Postgres, busy);
    let a = users_dir(&w.path().join("a"));
    let p = |s: &str| w.path().join(s);
    let e = fails(
        &[
            "db",
            "setup",
            "--dir",
            s(&p("d1/d2/pg")),
            "--target",
            s(&a),
            "--wal-dir",
            s(&p("n1/n2/wal")),
            "--pg-set",
            "shared_preload_libraries=no_such_lib",
        ],
        1,
    );
    assert!(e.contains("no_such_lib"), "{e}");
    assert_users(&a, &[]);
    assert!(names(&a).is_empty());
    assert_eq!(names(w.path()), ["a"], "created parents left behind");
    setup(
        &p("d1/d2/pg"),
        &[
            "--target",
            &format!("{},{}", s(&a), s(&p("t1/t2/ts"))),
            "--wal-dir",
            s(&p("n1/n2/wal")),
        ],
    );
    assert_users(&a, &[]);
    std::fs::write(p("t1/notes.txt"), "user's").unwrap();
    db_ok(&["drop", "--dir", s(&p("d1/d2/pg"))]);
    assert_users(&a, &[]);
    assert!(names(&a).is_empty());
    assert_eq!(names(w.path()), ["a", "t1"]);
    assert_eq!(names(&p("t1")), ["notes.txt"]);
}

// Row 9: one directory given twice through a symlink, nested targets, a WAL directory inside
// the cluster's: exit 2 at once, naming both, before anything is made.
#[test]
fn row9_a_directory_given_twice_or_nested_is_refused_up_front() {
    let _g = shared();
    let w = workdir();
    let p = |s: &str| w.path().join(s).to_str().unwrap().to_string();
    std::fs::create_dir(p("real")).unwrap();
    std::os::unix::fs::symlink(p("real"), p("link")).unwrap();
    let d = p("pg");
    for (extra, says) in [
        (
            vec![
                "--target".to_string(),
                format!("{},{}", p("link"), p("real")),
            ],
            format!(
                "--target {}: given twice ({} is the same directory)",
                p("real"),
                p("link")
            ),
        ),
        (
            vec!["--target".into(), format!("{},{}", p("t"), p("t/sub"))],
            format!("--target {}: overlaps --target {}", p("t/sub"), p("t")),
        ),
        (
            vec!["--wal-dir".into(), format!("{d}/data/pg_wal")],
            format!("--wal-dir {d}/data/pg_wal: overlaps --dir {d}"),
        ),
        (
            vec![
                "--wal-dir".into(),
                p("link/w"),
                "--target".into(),
                p("real/w/ts"),
            ],
            format!(
                "--target {}: overlaps --wal-dir {}",
                p("real/w/ts"),
                p("link/w")
            ),
        ),
    ] {
        let mut args = vec!["db", "setup", "--dir", &d];
        args.extend(extra.iter().map(String::as_str));
        let t = Instant::now();
        let e = fails(&args, 2);
        assert!(e.contains(&says), "{says:?} in {e}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
    assert_eq!(names(w.path()), ["link", "real"]);
    assert!(names(Path::new(&p("real"))).is_empty());
}
