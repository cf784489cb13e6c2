//! Issue #44, H1, L1 and L2: a private MariaDB under the trust rule PostgreSQL's clusters
//! keep. A directory another user owns, and what that user can change in it (`my.cnf`,
//! `run/`, `server.log` swapped for links), is refused at every open, part by part; the
//! server writes files only inside its own directory (`secure_file_priv`); `--mysql-bin` of
//! another user's never runs; a failed or hung installer leaves nothing; a relative
//! `--mysql-bin` works. Debian's MariaDB, the real `nobody`; as root.

use super::*;

/// A small loaded private MariaDB at `dir`.
fn maria_setup(dir: &Path) -> Db {
    let db = Db::at(Engine::Mariadb, dir.to_path_buf());
    db.setup_small();
    db
}

/// A file of root's that must keep its content, and a directory of root's that must keep
/// its mode.
fn roots_things(w: &tempfile::TempDir) -> (PathBuf, PathBuf) {
    let file = w.path().join("roots.conf");
    std::fs::write(&file, "root's\n").unwrap();
    chmod(&file, 0o644);
    (file, roots_dir(&w.path().join("roots-dir")))
}

// H1: a server in a directory nobody owns, where nobody swapped `my.cnf` and `server.log` for
// links to a file of root's and `run/` for a link to a directory of root's: `db run`, `reset`,
// `drop` and `setup` are refused before anything is written, started or removed. Given back
// to root with the links still there, each part is refused on its own; put right, it works.
#[test]
fn h1_a_mariadb_another_user_could_change_is_refused_at_every_open() {
    let (_g, w) = db_test(Engine::Mariadb, busy);
    let tmp = public_tmp(&w);
    let dir = tmp.join("m");
    let db = maria_setup(&dir);
    let (file, roots) = roots_things(&w);
    let parts = ["my.cnf", "server.log", "run"];
    for p in parts {
        std::fs::rename(dir.join(p), dir.join(format!("{p}.old"))).unwrap();
    }
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    as_nobody(&format!(
        "cd '{d}' && ln -s '{f}' my.cnf && ln -s '{f}' server.log && ln -s '{r}' run",
        d = dir.display(),
        f = file.display(),
        r = roots.display()
    ));
    let run = ["--readers", "1", "--time", "1s"];
    for (cmd, args) in [
        ("run", &run[..]),
        ("reset", &[]),
        ("drop", &[]),
        ("setup", &["--scale", "16M"]),
    ] {
        let e = db.fails(cmd, args, 2);
        assert!(
            e.contains(&format!("{}: owned by nobody", dir.display())),
            "{cmd:?}: {e}"
        );
    }
    let untouched = || {
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "root's\n");
        assert_eq!((owner(&roots), mode(&roots)), (0, 0o755));
        assert_eq!(names(&roots), ["keep.txt"]);
        assert!(dir.join("data").is_dir(), "the server's data was removed");
    };
    untouched();
    std::os::unix::fs::chown(&dir, Some(0), Some(0)).unwrap();
    // In the order they are checked: run/, my.cnf, server.log.
    for p in ["run", "my.cnf", "server.log"] {
        let e = db.fails("run", &run, 2);
        assert!(
            e.contains(&format!(
                "{}: a symbolic link where iogauge keeps",
                dir.join(p).display()
            )),
            "{p}: {e}"
        );
        untouched();
        std::fs::remove_file(dir.join(p)).unwrap();
        std::fs::rename(dir.join(format!("{p}.old")), dir.join(p)).unwrap();
    }
    for p in parts {
        assert!(!dir.join(format!("{p}.old")).exists());
    }
    db.runs();
    db.drop_it();
    assert!(!dir.exists());
    untouched_after_drop(&file, &roots);
}

fn untouched_after_drop(file: &Path, roots: &Path) {
    assert_eq!(std::fs::read_to_string(file).unwrap(), "root's\n");
    assert_eq!(names(roots), ["keep.txt"]);
}

// H1: the server iogauge runs (as root when iogauge is root) writes files only inside its own
// directory: `SELECT … INTO OUTFILE` elsewhere is refused, `@@secure_file_priv` is its `run/`.
#[test]
fn h1_the_private_server_writes_no_file_outside_its_directory() {
    let (_g, w) = db_test(Engine::Mariadb, busy);
    let db = maria_setup(&w.path().join("m"));
    let dir = &db.dir;
    let child = db.run_in_background("4s");
    let sock = db.socket();
    let outside = w.path().join("written-by-the-server");
    let (ok, err) = maria_client(
        None,
        "root",
        &sock,
        &format!("SELECT 1 INTO OUTFILE '{}'", outside.display()),
    );
    assert!(!ok && err.contains("secure-file-priv"), "{err}");
    let (ok, priv_dir) = maria_client(None, "root", &sock, "SELECT @@secure_file_priv");
    let out = finish(child, 60);
    assert_success(&out);
    assert!(!outside.exists());
    assert!(
        ok && Path::new(priv_dir.trim()).starts_with(dir.join("run")),
        "secure_file_priv: {priv_dir}"
    );
    db.drop_it();
}

/// A `--mysql-bin` directory at `at` whose installer runs `install` (a shell line); each
/// program touches `proof` when it runs.
fn fake_maria_bin(at: &Path, install: &str, proof: &Path) {
    fake_server_bin(Engine::Mariadb, at, install, Some(proof));
}

// H1: `--mysql-bin` naming a directory of nobody's, or root's directory with nobody's
// mariadbd in it: refused, naming the flag; nobody's programs never run (not even for
// `--version`). First on PATH, nobody's are passed over for Debian's.
#[test]
fn h1_mariadb_binaries_another_user_could_change_never_run() {
    let (_g, w) = db_test(Engine::Mariadb, busy);
    let tmp = public_tmp(&w);
    let secret = w.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    let proof = secret.join("ran");
    let nobodys = tmp.join("bin");
    fake_maria_bin(&nobodys, "exit 0", &proof);
    std::os::unix::fs::chown(&nobodys, Some(65534), None).unwrap();
    let roots = w.path().join("bin");
    fake_maria_bin(&roots, "exit 0", &proof);
    std::os::unix::fs::chown(roots.join("mariadbd"), Some(65534), None).unwrap();
    let db = Db::at(Engine::Mariadb, w.path().join("m"));
    let dir = &db.dir;
    for (b, says) in [
        (
            &nobodys,
            format!(
                "the directory above it, {}, is owned by nobody",
                nobodys.display()
            ),
        ),
        (
            &roots,
            format!("{}/mariadbd: owned by nobody", roots.display()),
        ),
    ] {
        let e = db.fails("setup", &["--mysql-bin", s(b)], 2);
        assert!(
            e.starts_with(&format!("error: --mysql-bin {}", b.display())) && e.contains(&says),
            "{e}"
        );
        assert!(!proof.exists(), "a program of nobody's ran as root");
        assert!(!dir.exists(), "made before refusing");
    }
    let path = format!("{}:{}", nobodys.display(), std::env::var("PATH").unwrap());
    let out = bin()
        .env("PATH", &path)
        .args(db.args("setup", &["--scale", "16M"]))
        .output()
        .unwrap();
    assert_success(&out);
    assert!(!proof.exists(), "nobody's mariadbd on PATH ran as root");
    db.drop_it();
}

// L1 and L2: an installer that fails, or hangs until Ctrl-C, leaves nothing behind: a new
// directory is removed, one the user made is left empty. The `--mysql-bin` is given
// relative to the working directory (it used to be looked up from the server's directory).
#[test]
fn l1_a_failed_or_stopped_installer_leaves_nothing_and_l2_relative_bins_work() {
    let (_g, w) = db_test(Engine::Mariadb, busy);
    let proof = w.path().join("ran");
    let fail = w.path().join("fail-bin");
    fake_maria_bin(
        &fail,
        "echo 'ERROR: the disk is on fire' >&2; exit 1",
        &proof,
    );
    let hang = w.path().join("hang-bin");
    fake_maria_bin(&hang, "sleep 600", &proof);
    let new = Db::at(Engine::Mariadb, w.path().join("new/m"));
    let out = bin()
        .current_dir(w.path())
        .args(new.args("setup", &["--mysql-bin", "fail-bin"]))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("mariadb-install-db failed") && err.contains("the disk is on fire"),
        "{err}"
    );
    assert!(
        proof.exists(),
        "the relative --mysql-bin was not the one run"
    );
    assert!(
        !w.path().join("new").exists(),
        "left after a failed install"
    );
    let mine = Db::at(Engine::Mariadb, w.path().join("mine"));
    std::fs::create_dir(&mine.dir).unwrap();
    let child = command()
        .current_dir(w.path())
        .args(mine.args("setup", &["--mysql-bin", "hang-bin"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        within(30, || mine.dir.join("server.log").exists()),
        "the installer never started"
    );
    std::thread::sleep(Duration::from_millis(500));
    sigint(&child);
    let out = finish(child, 60);
    stopped(&out, &["removed again"]);
    assert!(names(&mine.dir).is_empty(), "left in the user's directory");
    let sleeping = Command::new("pgrep")
        .args(["-f", "sleep 600"])
        .output()
        .unwrap();
    assert!(
        sleeping.stdout.is_empty(),
        "the installer's child outlived it: {}",
        String::from_utf8_lossy(&sleeping.stdout)
    );
}
