//! The paths iogauge acts on as root, under attack (issue #25, rows 1, 2, 9, 10, 19 and the
//! tmpfs half of 22): a cluster directory another user owns and what that user can change
//! in it (the marker's `bin=` and `tablespace=`, `run/`), user files in WAL and tablespace
//! directories, one directory given twice, directories chowned or left behind, a `postgres`
//! that hangs or floods, a WAL or tablespace on tmpfs. Real PostgreSQL 15, the real `nobody`
//! through `runuser`, real symlinks and a real tmpfs; as root.

use crate::common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn db_ok(args: &[&str]) -> Output {
    let out = bin().arg("db").args(args).output().expect("spawn iogauge");
    assert!(
        out.status.success(),
        "db {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A small loaded cluster at `dir`, with `extra` flags.
fn setup(dir: &Path, extra: &[&str]) -> Output {
    let mut a = vec![
        "setup",
        "--dir",
        s(dir),
        "--schemas",
        "1",
        "--scale",
        "2000",
    ];
    a.extend_from_slice(extra);
    db_ok(&a)
}

/// Runs `sh -c cmd` as `nobody`; asserts it worked.
fn as_nobody(cmd: &str) {
    let st = Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c", cmd])
        .status()
        .expect("runuser (util-linux)");
    assert!(st.success(), "as nobody: `{cmd}` failed");
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn chmod(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

fn owner(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().uid()
}

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// The work directory opened to other users (0755), with `tmp`, a sticky directory anyone
/// may create in, as /tmp is.
fn public_tmp(w: &tempfile::TempDir) -> PathBuf {
    chmod(w.path(), 0o755);
    let tmp = w.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    chmod(&tmp, 0o1777);
    tmp
}

/// A directory only root may write to, holding `keep.txt`: what must survive an attack.
fn roots_dir(at: &Path) -> PathBuf {
    std::fs::create_dir_all(at).unwrap();
    chmod(at, 0o755);
    std::fs::write(at.join("keep.txt"), "root's").unwrap();
    at.to_path_buf()
}

/// A bin directory whose `postgres` answers `--version` like PostgreSQL 15 and, run by
/// anyone who may, creates `proof` (so a test sees whether it ran, and as whom: only root
/// can create files where `proof` is).
fn evil_bin(at: &Path, proof: &Path) {
    std::fs::create_dir_all(at).unwrap();
    for b in ["initdb", "pg_ctl", "postgres"] {
        let p = at.join(b);
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\ntouch '{}'\necho 'postgres (PostgreSQL) 15.0'\n",
                proof.display()
            ),
        )
        .unwrap();
        chmod(&p, 0o755);
    }
}

// Row 1: as nobody, `mkdir /tmp/x`; root's `db setup --dir /tmp/x` is refused before anything
// is made there, and so are a WAL or tablespace directory of nobody's, a directory under one,
// one every user may write to, and a `--pg-bin` of nobody's (whose programs never run).
#[test]
fn row1_setup_refuses_directories_another_user_could_change() {
    require_root();
    let _g = shared();
    let w = workdir();
    let tmp = public_tmp(&w);
    let x = tmp.join("x");
    as_nobody(&format!("mkdir '{}'", x.display()));
    let e = fails(&["db", "setup", "--dir", s(&x)], 2);
    assert!(
        e.contains(&format!("--dir {}: owned by nobody", x.display())) && e.contains("chown"),
        "{e}"
    );
    let under = x.join("pg");
    let e = fails(&["db", "setup", "--dir", s(&under)], 2);
    assert!(
        e.contains(&format!(
            "the directory above it, {}, is owned by nobody",
            x.display()
        )),
        "{e}"
    );
    let pg = w.path().join("pg");
    for flag in ["--wal-dir", "--target"] {
        let e = fails(&["db", "setup", "--dir", s(&pg), flag, s(&x)], 2);
        assert!(
            e.contains(&format!("{flag} {}: owned by nobody", x.display())),
            "{e}"
        );
    }
    let open = w.path().join("open");
    std::fs::create_dir(&open).unwrap();
    chmod(&open, 0o777);
    let e = fails(&["db", "setup", "--dir", s(&open.join("pg"))], 2);
    assert!(
        e.contains("is writable by its group and every user (mode 0777)"),
        "{e}"
    );
    // A bin directory of nobody's: refused, its postgres never run (not even for --version).
    let secret = w.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    let proof = secret.join("ran");
    let bin_dir = tmp.join("bin");
    as_nobody(&format!("mkdir '{}'", bin_dir.display()));
    as_nobody(&format!(
        "for b in initdb pg_ctl postgres; do printf '#!/bin/sh\\ntouch {}\\n' > '{}'/$b; chmod 755 '{}'/$b; done",
        proof.display(),
        bin_dir.display(),
        bin_dir.display()
    ));
    let e = fails(
        &["db", "setup", "--dir", s(&pg), "--pg-bin", s(&bin_dir)],
        2,
    );
    assert!(
        e.contains("--pg-bin") && e.contains("owned by nobody"),
        "{e}"
    );
    assert!(!proof.exists(), "nobody's postgres ran as root");
    assert!(
        names(&x).is_empty() && owner(&x) == 65534,
        "nothing made in nobody's directory"
    );
    assert!(!pg.exists() && !under.exists() && names(&open).is_empty());
}

// Row 1: a cluster whose directory nobody owns (an older iogauge set it up there): nobody
// rewrites the marker's `bin=` to a script of his and adds `tablespace=` with a directory of
// root's, and replaces `run/` by a symlink to another of root's. Root's `db run`, `db reset`
// and `db drop` refuse the cluster: the script never runs, root's files stay, the symlink's
// target keeps its owner and mode.
#[test]
fn row1_a_cluster_in_another_users_directory_is_refused_at_every_open() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let tmp = public_tmp(&w);
    let x = tmp.join("x");
    setup(&x, &[]);
    std::os::unix::fs::chown(&x, Some(65534), Some(65534)).unwrap();
    let secret = w.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    let proof = secret.join("ran-as-root");
    let evil = tmp.join("evil-bin");
    as_nobody(&format!(
        "mkdir '{e}' && for b in initdb pg_ctl postgres; do printf '#!/bin/sh\\ntouch {p}\\necho \"postgres (PostgreSQL) 15.0\"\\n' > '{e}'/$b; chmod 755 '{e}'/$b; done",
        e = evil.display(),
        p = proof.display()
    ));
    let kept = roots_dir(&w.path().join("roots-data"));
    let linked = roots_dir(&w.path().join("roots-run"));
    let m = x.join(".iogauge-pg");
    as_nobody(&format!(
        "cd '{x}' && mv .iogauge-pg old && sed 's|^bin=.*|bin={e}|' old > .iogauge-pg \
         && printf 'tablespace={k}\\ncreated_tablespace=1\\n' >> .iogauge-pg && rm old \
         && mv run run.old && ln -s '{l}' run",
        x = x.display(),
        e = evil.display(),
        k = kept.display(),
        l = linked.display()
    ));
    assert_eq!(owner(&m), 65534);
    for cmd in [
        vec![
            "db",
            "run",
            "--dir",
            s(&x),
            "--readers",
            "1",
            "--time",
            "1s",
        ],
        vec!["db", "reset", "--dir", s(&x)],
        vec!["db", "drop", "--dir", s(&x)],
    ] {
        let e = fails(&cmd, 2);
        assert!(
            e.contains(&format!("{}: owned by nobody", x.display())),
            "{cmd:?}: {e}"
        );
    }
    assert!(!proof.exists(), "nobody's script ran as root");
    assert_eq!(names(&kept), ["keep.txt"], "root's directory touched");
    assert_eq!(
        (owner(&linked), mode(&linked)),
        (0, 0o755),
        "run/'s target chowned"
    );
    assert_eq!(names(&linked), ["keep.txt"]);
}

// Row 1: each part is checked on its own, in a directory root owns: a marker another user
// owns or may write to, `run/` replaced by a symlink, a `bin=` or `tablespace=` naming a
// directory of nobody's, a `postgres` of nobody's in a bin directory of root's. Put back, the
// cluster works again.
#[test]
fn row1_each_part_of_a_cluster_is_checked_at_open() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let tmp = public_tmp(&w);
    let dir = w.path().join("pg");
    setup(&dir, &[]);
    let m = dir.join(".iogauge-pg");
    let marker = std::fs::read_to_string(&m).unwrap();
    let reset = ["db", "reset", "--dir", s(&dir)];
    std::os::unix::fs::chown(&m, Some(65534), None).unwrap();
    let e = fails(&reset, 2);
    assert!(
        e.contains(&format!("{}: owned by nobody", m.display())),
        "{e}"
    );
    std::os::unix::fs::chown(&m, Some(0), None).unwrap();
    chmod(&m, 0o664);
    let e = fails(&reset, 2);
    assert!(e.contains("writable by its group (mode 0664)"), "{e}");
    chmod(&m, 0o644);
    // run/ swapped for a link to a directory of root's: refused, the target left as it was.
    let linked = roots_dir(&w.path().join("roots-run"));
    let run = dir.join("run");
    std::fs::rename(&run, dir.join("run.old")).unwrap();
    std::os::unix::fs::symlink(&linked, &run).unwrap();
    let e = fails(&["db", "run", "--dir", s(&dir), "--time", "1s"], 2);
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!((owner(&linked), mode(&linked)), (0, 0o755));
    std::fs::remove_file(&run).unwrap();
    std::fs::rename(dir.join("run.old"), &run).unwrap();
    // bin= naming nobody's directory, or root's directory with nobody's postgres in it.
    let secret = w.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    let proof = secret.join("ran");
    let nobodys = tmp.join("bin");
    evil_bin(&nobodys, &proof);
    std::os::unix::fs::chown(&nobodys, Some(65534), None).unwrap();
    let roots = w.path().join("bin");
    evil_bin(&roots, &proof);
    std::os::unix::fs::chown(roots.join("postgres"), Some(65534), None).unwrap();
    for (b, says) in [
        (&nobodys, format!("{}: owned by nobody", nobodys.display())),
        (
            &roots,
            format!("{}/postgres: owned by nobody", roots.display()),
        ),
    ] {
        let text = marker
            .lines()
            .map(|l| match l.starts_with("bin=") {
                true => format!("bin={}\n", b.display()),
                false => format!("{l}\n"),
            })
            .collect::<String>();
        std::fs::write(&m, text).unwrap();
        let e = fails(&["db", "run", "--dir", s(&dir), "--time", "1s"], 2);
        assert!(e.contains(&says), "{e}");
        assert!(!proof.exists(), "a postgres of nobody's ran as root");
    }
    // tablespace= naming a directory of nobody's.
    let theirs = tmp.join("ts");
    as_nobody(&format!("mkdir '{}'", theirs.display()));
    std::fs::write(
        &m,
        format!(
            "{marker}tablespace={}\ncreated_tablespace=1\n",
            theirs.display()
        ),
    )
    .unwrap();
    let e = fails(&["db", "drop", "--dir", s(&dir)], 2);
    assert!(
        e.contains(&format!("{}: owned by nobody", theirs.display())),
        "{e}"
    );
    assert!(theirs.exists());
    std::fs::write(&m, &marker).unwrap();
    db_ok(&["run", "--dir", s(&dir), "--readers", "1", "--time", "1s"]);
    db_ok(&["drop", "--dir", s(&dir)]);
}

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
    require_root();
    let _g = heavy();
    let w = workdir();
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
    require_root();
    let _g = heavy();
    let w = workdir();
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
    require_root();
    let _g = heavy();
    let w = workdir();
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

/// A bin directory whose `postgres` runs `script` (initdb and pg_ctl do nothing).
fn fake_bin(at: &Path, script: &str) {
    std::fs::create_dir_all(at).unwrap();
    for (b, body) in [
        ("initdb", "exit 0"),
        ("pg_ctl", "exit 0"),
        ("postgres", script),
    ] {
        let p = at.join(b);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        chmod(&p, 0o755);
    }
}

/// Runs `iogauge ARGS` to its end (killed after `secs`): its stderr, exit code, time taken and
/// peak memory (KiB): the highest VmHWM read while it ran as iogauge. Not wait4's ru_maxrss:
/// Linux carries that over exec from the forked copy of this test binary, which is hundreds
/// of MB while other tests run beside it.
// The child is reaped by waitpid(2) (WNOHANG while it runs, so it can be read and killed).
#[allow(clippy::zombie_processes)]
fn run_measured(args: &[&str], secs: u64) -> (String, Option<i32>, Duration, i64) {
    let t = Instant::now();
    let child = command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut err = child.stderr.unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let mut status = 0;
    let mut killed = false;
    let mut peak_kib = 0i64;
    let exe = exe();
    loop {
        if std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe) {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            if let Some(kib) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
            {
                peak_kib = peak_kib.max(kib);
            }
        }
        let flags = if killed { 0 } else { libc::WNOHANG };
        // SAFETY: waitpid(2) on our own child with a valid out-pointer; WNOHANG while it runs,
        // so it is read and killed (not yet reaped, its pid still its own) until it ends.
        let got = unsafe { libc::waitpid(pid, &mut status, flags) };
        if got == pid {
            break;
        }
        assert_eq!(got, 0, "wait4: {}", std::io::Error::last_os_error());
        if t.elapsed() > Duration::from_secs(secs) {
            // SAFETY: kill(2) on our own child, not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = t.elapsed();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (reader.join().unwrap(), code, took, peak_kib)
}

// Row 19: a `--pg-bin` whose `postgres --version` never returns, or prints 500 MB: killed
// (with its children) after 10 s or 4 KiB, exit 1 naming the binary, memory bounded.
#[test]
fn row19_a_postgres_that_hangs_or_floods_is_killed() {
    let _g = shared();
    let w = workdir();
    let hangs = w.path().join("hangs");
    fake_bin(&hangs, "sleep 918273");
    let floods = w.path().join("floods");
    fake_bin(
        &floods,
        "yes 'postgres (PostgreSQL) 15.0' | head -c 524288001",
    );
    let dir = w.path().join("pg");
    let (e, code, took, _) = run_measured(
        &["db", "setup", "--dir", s(&dir), "--pg-bin", s(&hangs)],
        60,
    );
    assert_eq!(code, Some(1), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.starts_with(&format!(
            "error: {}/postgres: `postgres --version` gave no answer within 10 s",
            hangs.display()
        )),
        "{e}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    wait_gone("918273");
    let (e, code, took, rss_kib) = run_measured(
        &[
            "db",
            "run",
            "--dir",
            s(&dir),
            "--pg-bin",
            s(&floods),
            "--time",
            "1s",
        ],
        60,
    );
    assert_eq!(code, Some(1), "{e}");
    assert!(
        e.contains(&format!(
            "{}/postgres: `postgres --version` printed more than 4096 bytes",
            floods.display()
        )),
        "{e}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(rss_kib < 100 << 10, "iogauge grew to {rss_kib} KiB");
    wait_gone("524288001");
    assert!(!dir.exists());
}

// Row 22: a WAL or tablespace directory on tmpfs is memory: db setup's preflight says so, and
// so does the stored db run.
#[test]
fn row22_a_wal_or_tablespace_on_tmpfs_is_named_in_a_warning() {
    require_root();
    let _g = heavy();
    let w = workdir();
    let mem = w.path().join("mem");
    let _m = Mount::new(&mem, "tmpfs", "size=512m");
    let dir = w.path().join("pg");
    let (wal, ts) = (mem.join("wal"), mem.join("ts"));
    let out = setup(&dir, &["--wal-dir", s(&wal), "--target", s(&ts)]);
    let text = String::from_utf8_lossy(&out.stdout);
    for (role, p) in [("wal", &wal), ("tablespace", &ts)] {
        assert!(
            text.contains(&format!(
                "WARNING: {role} {} is on tmpfs, which is memory: the database's I/O there measures RAM, not storage",
                p.display()
            )),
            "{text}"
        );
    }
    assert!(
        !text.contains(&format!("data {}/data is on tmpfs", dir.display())),
        "{text}"
    );
    let out = db_ok(&[
        "run",
        "--dir",
        s(&dir),
        "--readers",
        "1",
        "--time",
        "1s",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with(&format!("wal {} is on tmpfs", wal.display()))),
        "{warnings:?}"
    );
    db_ok(&["drop", "--dir", s(&dir)]);
}
