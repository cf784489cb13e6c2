//! A results store on a nearly full filesystem (issue #44 M1 and L3): a small ext4 (1 KiB
//! blocks, what mkfs makes for a small image) filled to within a few KiB, at several levels.
//! SQLite's WAL index (`-shm`) there was a mapped file with holes, and touching one killed
//! iogauge with SIGBUS after measuring, `history` too until space was freed; a reader left a
//! `-shm` and a `-wal` behind. Now a run is stored, or refused before measuring, or prints its
//! result and says in one line that the filesystem is full (exit 1); every reader reads the
//! store and leaves nothing beside it.

use super::*;

/// A fresh ext4 of `kib` KiB with 1 KiB blocks on a loop device, mounted at `dir/mnt`;
/// unmounted (and the loop device freed) when dropped.
fn small_ext4(dir: &Path, kib: u32) -> Mount {
    require_root();
    let img = dir.join("fs.img");
    let mnt = dir.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    sh(&format!(
        "truncate -s {kib}k '{i}' && mkfs.ext4 -q -F -b 1024 '{i}' && mount -o loop '{i}' '{m}'",
        i = img.display(),
        m = mnt.display()
    ));
    Mount(mnt)
}

/// Fills the filesystem at `mnt` (root's reserved blocks too) up to `kib` KiB.
fn fill_but(mnt: &Path, kib: u64) {
    let fill = mnt.join("fill");
    let _ = std::fs::remove_file(&fill);
    // dd ends at ENOSPC.
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=1k"])
        .arg(format!("of={}", fill.display()))
        .stderr(Stdio::null())
        .status();
    let f = std::fs::OpenOptions::new().write(true).open(&fill).unwrap();
    let len = f.metadata().unwrap().len();
    f.set_len(len.saturating_sub(kib << 10)).unwrap();
    f.sync_all().unwrap();
}

/// What SQLite left beside the store in `dir`.
fn left_beside(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("-shm") || n.ends_with("-wal") || n.ends_with("-journal"))
        .collect()
}

#[test]
fn a_nearly_full_filesystem_never_kills_iogauge_nor_keeps_its_readers() {
    let _g = busy();
    let d = workdir();
    let m = small_ext4(d.path(), 8192);
    let store = m.0.join("s.sqlite");
    let t = d.path().join("t").display().to_string();
    let run = ["run", "--target", &t, "--size", "4m", "--ios", "200"];
    let (code, _, err) = on(&store, &run);
    assert_eq!(code, Some(0), "with room to spare: {err}");
    let id = stored_id(err.as_bytes()).to_string();
    let full = format!("the filesystem of {} is full", m.0.display());
    let mut printed = 0;
    // From "no room at all" to "room for the log but not for its index" (where SIGBUS was).
    for kib in [0, 2, 6, 12, 24, 36, 48, 56, 64, 80, 100, 128] {
        fill_but(&m.0, kib);
        let (code, out, err) = on(&store, &run);
        assert!(code.is_some(), "{kib} KiB free: killed by a signal; {err}");
        match code {
            Some(0) => {}
            Some(1) => {
                assert_eq!(err.trim_end().lines().count(), 1, "{kib} KiB: {err}");
                assert!(err.contains(&full), "{kib} KiB: {err}");
                let not_stored = "error: the result is printed on stdout but not stored: ";
                if err.starts_with(not_stored) {
                    assert!(out.starts_with("iogauge run: "), "the result: {out}");
                    printed += 1;
                } else {
                    assert!(err.contains("free space there"), "{kib} KiB: {err}");
                    assert!(out.is_empty(), "refused before measuring: {out}");
                }
            }
            other => panic!("{kib} KiB free: exit {other:?}: {err}"),
        }
        let (code, out, err) = on(&store, &["history"]);
        assert_eq!(code, Some(0), "history with {kib} KiB free: {err}");
        assert!(out.contains(&t), "{out}");
        assert_eq!(left_beside(&m.0), Vec::<String>::new(), "{kib} KiB free");
    }
    assert!(
        printed > 0,
        "no level let the run measure and then fail to store"
    );
    // Every reader, with no room at all.
    fill_but(&m.0, 0);
    let html = d.path().join("r.html").display().to_string();
    for args in [
        vec!["show", &id],
        vec!["compare", &id, &id],
        vec!["report", &id, "-o", &html],
        vec!["history", "--json"],
    ] {
        let (code, _, err) = on(&store, &args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert_eq!(left_beside(&m.0), Vec::<String>::new(), "{args:?}");
    }
}
