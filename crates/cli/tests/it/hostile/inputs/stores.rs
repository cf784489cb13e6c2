//! Results stores under attack (rows 14 and 21): read-only, another user's, on a full
//! filesystem, a link to a user's file, or missing: read where they can be, never written
//! or created by a reader. And (issue #44 L9) store paths on the kernel's filesystems or
//! through a regular file, each named for what it is.

use super::*;

// Row 14: a store on a read-only bind mount is read; a run on it is refused naming the cause.
#[test]
fn a_store_on_a_read_only_mount_is_read_and_not_written() {
    let _g = shared();
    let d = workdir();
    let src = d.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let id = stored_run(d.path(), &src.join("s.sqlite")).to_string();
    // A copy in WAL mode, as an older iogauge kept its store, whose write-ahead log holds a
    // change (kept by SQLite's persist_wal), without the shared-memory file a reader needs to
    // make to read it.
    let logged = src.join("w.sqlite");
    std::fs::copy(src.join("s.sqlite"), &logged).unwrap();
    let st = Command::new("sqlite3")
        .arg(&logged)
        .args([
            ".filectrl persist_wal 1",
            "PRAGMA journal_mode = WAL;",
            "CREATE TABLE x (y);",
        ])
        .stdout(Stdio::null())
        .status()
        .expect("sqlite3 is installed");
    assert!(st.success());
    std::fs::remove_file(src.join("w.sqlite-shm")).unwrap();
    assert!(std::fs::metadata(src.join("w.sqlite-wal")).unwrap().len() > 32);
    let ro = d.path().join("ro");
    let _m = ReadOnlyBind::new(&src, &ro);
    let store = ro.join("s.sqlite");
    let (code, out, err) = on(&store, &["history"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&d.path().join("t").display().to_string()),
        "{out}"
    );
    for args in [vec!["show", &id], vec!["compare", &id, &id]] {
        let (code, _, err) = on(&store, &args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
    let html = d.path().join("r.html").display().to_string();
    let (code, _, err) = on(&store, &["report", &id, "-o", &html]);
    assert_eq!(code, Some(0), "{err}");
    let t = d.path().join("t").display().to_string();
    let err = refused_on(&store, &["run", "--target", &t, "--ios", "10"]);
    assert!(err.contains("is on a read-only filesystem"), "{err}");
    assert!(
        !err.contains("Error code"),
        "SQLite's words add nothing: {err}"
    );
    // Unreadable without writing beside it: the cause and the way out, exit 1.
    let (code, _, err) = on(&ro.join("w.sqlite"), &["history"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("is on a read-only filesystem, and its write-ahead log"),
        "{err}"
    );
    assert!(err.contains("copy the store and its -wal file"), "{err}");
    assert!(!err.contains("Error code"), "{err}");
}

// Row 14: another user's store (root's 0644 file), read as nobody; in a sticky directory
// anyone may write to (as /tmp), where files nobody left beside it would block its owner.
#[test]
fn another_users_store_is_read_as_nobody() {
    let _g = shared();
    let d = workdir();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let store = d.path().join("s.sqlite");
    let id = stored_run(d.path(), &store).to_string();
    let before = std::fs::read_dir(d.path()).unwrap().count();
    let s = store.display().to_string();
    let (code, out, err) = as_nobody(&["history", "--store", &s]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&d.path().join("t").display().to_string()),
        "{out}"
    );
    let (code, _, err) = as_nobody(&["show", &id, "--store", &s]);
    assert_eq!(code, Some(0), "{err}");
    // Refused before measuring (SQLite opened the file read-only without a word, and the
    // run failed only when it was stored).
    let t = d.path().join("t2").display().to_string();
    let (code, _, err) = as_nobody(&[
        "run", "--ios", "1", "--size", "4m", "--target", &t, "--store", &s,
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is not writable by this user"), "{err}");
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        before,
        "nothing made"
    );
}

// Row 14: a store on a full filesystem (a small tmpfs filled up) is read; a run names the
// cause.
#[test]
fn a_store_on_a_full_filesystem_is_read() {
    let _g = shared();
    let d = workdir();
    let id = stored_run(d.path(), &d.path().join("s.sqlite")).to_string();
    let full = d.path().join("full");
    let _m = Mount::new(&full, "tmpfs", "size=1m");
    let store = full.join("s.sqlite");
    std::fs::copy(d.path().join("s.sqlite"), &store).unwrap();
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=4k"])
        .arg(format!("of={}", full.join("fill").display()))
        .stderr(Stdio::null())
        .status();
    let (code, out, err) = on(&store, &["show", &id]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("iogauge run"), "{out}");
    let (code, _, err) = on(&store, &["history"]);
    assert_eq!(code, Some(0), "{err}");
    let t = d.path().join("t").display().to_string();
    let (code, _, err) = on(&store, &["run", "--target", &t, "--ios", "10"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is full; free space there"), "{err}");
    assert!(!err.contains("xShmMap"), "{err}");
}

// Row 21: a store path that is a link to a user's empty file turned the file into a store;
// readers created a store where there was none.
#[test]
fn a_link_to_a_users_file_is_never_made_a_store() {
    let _g = shared();
    let d = workdir();
    let theirs = d.path().join("notes");
    std::fs::write(&theirs, "").unwrap();
    sh(&format!("chown nobody '{}'", theirs.display()));
    let link = d.path().join("s.sqlite");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    let t = d.path().join("t").display().to_string();
    let err = refused_on(
        &link,
        &["run", "--target", &t, "--size", "4m", "--ios", "10"],
    );
    assert!(
        err.contains("a symbolic link to") && err.contains("an empty file"),
        "{err}"
    );
    let err = refused_on(&link, &["history"]);
    assert!(err.contains("not an iogauge results store"), "{err}");
    let m = std::fs::metadata(&theirs).unwrap();
    assert_eq!(
        (m.len(), m.uid()),
        (0, 65534),
        "the user's file is as it was"
    );
    assert!(!Path::new(&t).exists(), "nothing measured");
    // An empty file at the path itself is refused the same way.
    std::fs::remove_file(&link).unwrap();
    std::fs::write(&link, "").unwrap();
    let err = refused_on(
        &link,
        &["run", "--target", &t, "--size", "4m", "--ios", "10"],
    );
    assert!(err.contains("an empty file"), "{err}");
}

// Row 21: readers never create a store (nor its directory).
#[test]
fn readers_never_create_a_store() {
    let _g = shared();
    let d = workdir();
    let store = d.path().join("none/s.sqlite");
    let missing = d.path().join("s.sqlite");
    let (code, out, err) = on(&missing, &["history"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("no stored runs (no results store at"), "{out}");
    let (code, out, _) = on(&missing, &["history", "--json"]);
    assert_eq!((code, out.trim()), (Some(0), "[]"));
    for args in [
        vec!["show", "1"],
        vec!["compare", "1", "2"],
        vec!["report", "1"],
    ] {
        let err = refused_on(&missing, &args);
        assert!(
            err.contains("does not exist, so nothing is stored there yet"),
            "{err}"
        );
    }
    let err = refused_on(&missing, &["export", "--campaign", "c", "--format", "csv"]);
    assert!(err.contains("does not exist"), "{err}");
    // The default location: no directory made under $XDG_DATA_HOME either.
    let out = command()
        .env_remove("IOGAUGE_STORE")
        .env("XDG_DATA_HOME", d.path().join("xdg"))
        .arg("history")
        .output()
        .unwrap();
    assert!(out.status.success());
    let (_, _, _) = on(&store, &["show", "1"]);
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing made"
    );
}

// Issue #44 L9: a store on /proc was "full" (procfs has no free blocks), and a store path
// through a regular file was a directory that "does not exist".
#[test]
fn store_paths_on_the_kernel_or_through_a_file_say_so() {
    let _g = shared();
    let d = workdir();
    let target = d.path().join("t");
    let t = target.display().to_string();
    let run = ["run", "--target", &t, "--size", "4m", "--ios", "10"];
    for (store, fs) in [("/proc/x.sqlite", "proc"), ("/sys/x.sqlite", "sysfs")] {
        let err = refused_on(Path::new(store), &run);
        assert!(
            err.contains(&format!("is on {fs}, the kernel's interface, not storage")),
            "{err}"
        );
        assert!(!err.contains("full"), "{err}");
    }
    let file = d.path().join("file");
    std::fs::write(&file, "mine").unwrap();
    for store in [file.join("x.sqlite"), file.join("sub/x.sqlite")] {
        for args in [&run[..], &["history"], &["show", "1"]] {
            let err = refused_on(&store, args);
            assert!(
                err.contains(&format!("{} is a file, not a directory", file.display())),
                "{args:?}: {err}"
            );
        }
    }
    assert!(!target.exists(), "nothing was measured");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}
