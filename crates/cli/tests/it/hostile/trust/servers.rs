//! Issue #44, H1 and M4, for both engines: a marker swapped for a link to `/dev/zero` or for
//! a FIFO, or a directory, marker or parent another user may write to, is refused at once,
//! before anything is removed; a server in use by one iogauge is refused to a second `db run`,
//! `reset`, `drop` and `setup`, and the first run completes and is stored whole.

use super::*;

/// `iogauge db ARGS --dir DIR --engine ENGINE`, which must fail with `code`: its one line.
fn refused(engine: &str, args: &[&str], dir: &Path, code: i32) -> String {
    let mut a = vec!["db"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--dir", s(dir), "--engine", engine]);
    fails(&a, code)
}

/// A directory that looks like a server of `engine`'s as far as its marker goes, with data
/// that must survive: the marker made by `marker` (a link, a FIFO), `data/keep` root's.
fn lookalike(w: &tempfile::TempDir, engine: &str, name: &str) -> PathBuf {
    let dir = w.path().join(format!("{engine}-{name}"));
    std::fs::create_dir_all(dir.join("data")).unwrap();
    chmod(&dir, 0o700);
    std::fs::write(dir.join("data/keep"), "the server's data").unwrap();
    dir
}

fn data_kept(dir: &Path) {
    assert_eq!(
        std::fs::read_to_string(dir.join("data/keep")).unwrap(),
        "the server's data",
        "{} lost its data",
        dir.display()
    );
}

// H1: the marker a link to /dev/zero (root read it to the memory limit and deleted the data),
// or a FIFO (`db run` hung and ignored SIGTERM): each command is refused at once, naming it.
#[test]
fn h1_a_marker_that_is_a_link_or_a_fifo_is_refused_before_anything_is_removed() {
    let (_g, w) = root_test(shared);
    for e in Engine::ALL {
        let (engine, marker) = (e.name(), e.marker());
        let zero = lookalike(&w, engine, "zero");
        std::os::unix::fs::symlink("/dev/zero", zero.join(marker)).unwrap();
        let fifo = lookalike(&w, engine, "fifo");
        let c = std::ffi::CString::new(fifo.join(marker).into_os_string().into_encoded_bytes())
            .unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        for (dir, says) in [
            (&zero, "a symbolic link where iogauge keeps a file"),
            (&fifo, "not a file but a FIFO"),
        ] {
            for args in [
                &["run", "--readers", "1", "--time", "1s"][..],
                &["reset"],
                &["drop"],
                &["setup", "--scale", "16M"],
            ] {
                let t = Instant::now();
                let e = refused(engine, args, dir, 2);
                assert!(
                    e.contains(&format!("{}: {says}", dir.join(marker).display())),
                    "{engine} {args:?}: {e}"
                );
                assert!(
                    t.elapsed() < Duration::from_secs(20),
                    "{engine} {args:?}: slow"
                );
                data_kept(dir);
            }
        }
    }
}

// H1: a server's directory, its marker or the directory above it writable by others (mode
// 0777, 0666): refused, naming the path and the mode.
#[test]
fn h1_open_modes_are_refused_for_both_engines() {
    let (_g, w) = root_test(shared);
    for e in Engine::ALL {
        let (engine, marker) = (e.name(), e.marker());
        let dir = lookalike(&w, engine, "modes");
        let m = dir.join(marker);
        std::fs::write(&m, "a marker\n").unwrap();
        chmod(&m, 0o644);
        let above = dir.parent().unwrap().to_path_buf();
        // What is opened to others, to which mode, and how the refusal names it.
        for (open, to, says) in [
            (
                &dir,
                0o777,
                format!(
                    "{}: writable by its group and every user (mode 0777)",
                    dir.display()
                ),
            ),
            (
                &m,
                0o666,
                format!(
                    "{}: writable by its group and every user (mode 0666)",
                    m.display()
                ),
            ),
            (
                &above,
                0o777,
                format!("the directory above it, {}, is writable", above.display()),
            ),
        ] {
            let was = mode(open);
            chmod(open, to);
            let err = refused(engine, &["drop"], &dir, 2);
            chmod(open, was);
            assert!(err.contains(&says), "{engine}: {err}");
        }
        data_kept(&dir);
    }
}

per_engine! {
    // M4: while one `db run` uses a private server, a second `db run`, a `reset`, a `drop`
    // and a `setup` on the same directory are refused; the first run completes and is
    // stored, and the server works afterwards. (A second MariaDB used to start on the same
    // datadir, `reset` reloaded the tables under the run and `drop` deleted them.)
    fn m4_a_server_in_use_is_refused_to_a_second_iogauge(e) {
        let (_g, w) = db_test(e, busy);
        let db = Db::new(&w, e);
        db.setup_small();
        let first = db.spawn("run", &["--readers", "1", "--time", "8s"]);
        let log = db.dir.join("server.log");
        let size = |l: &Path| std::fs::metadata(l).map_or(0, |m| m.len());
        let before = size(&log);
        assert!(
            within(60, || size(&log) > before && !db.gone()),
            "the first run's server never came up"
        );
        for (sub, args) in [
            ("run", &["--readers", "1", "--time", "1s"][..]),
            ("reset", &[]),
            ("drop", &[]),
            ("setup", &["--scale", e.small_scale()]),
        ] {
            let err = db.fails(sub, args, 2);
            // PostgreSQL's setup refuses a finished cluster before it looks for its lock.
            let says = match (e, sub) {
                (Engine::Postgres, "setup") => "already holds an iogauge cluster",
                _ => "in use by another iogauge process",
            };
            assert!(
                err.contains(&format!("{}: {says}", db.dir.display())),
                "{sub} {args:?}: {err}"
            );
        }
        let out = finish(first, 120);
        assert_success(&out);
        stored_id(&out.stderr);
        db.runs();
        db.drop_it();
        assert!(!db.dir.exists());
    }
}
