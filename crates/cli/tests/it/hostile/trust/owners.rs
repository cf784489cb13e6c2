//! Row 1: directories and clusters another user owns or may change: refused before
//! anything is made there, and at every open of a cluster, part by part.

use super::*;

// Row 1: as nobody, `mkdir /tmp/x`; root's `db setup --dir /tmp/x` is refused before anything
// is made there, and so are a WAL or tablespace directory of nobody's, a directory under one,
// one every user may write to, and a `--pg-bin` of nobody's (whose programs never run).
#[test]
fn row1_setup_refuses_directories_another_user_could_change() {
    let (_g, w) = db_test(Engine::Postgres, shared);
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
    let (_g, w) = db_test(Engine::Postgres, busy);
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
    let (_g, w) = db_test(Engine::Postgres, busy);
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
    fake_server_bin(Engine::Postgres, &nobodys, "exit 0", Some(&proof));
    std::os::unix::fs::chown(&nobodys, Some(65534), None).unwrap();
    let roots = w.path().join("bin");
    fake_server_bin(Engine::Postgres, &roots, "exit 0", Some(&proof));
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
