//! Opening for reading and through links (issue #25 rows 14 and 21): readers never create a
//! store, a link is followed only to an iogauge store.

use super::*;
use std::os::unix::fs::symlink;

#[test]
fn a_reader_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    assert!(Store::open_reader(&path).unwrap().is_none());
    let loc = dir.path().join("sub/results.sqlite");
    let e = Store::open_reader_resolved(Some(&loc)).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e:?}");
    assert!(e.is_usage());
    assert!(e.to_string().contains("does not exist"), "{e}");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0, "nothing made");
}

#[test]
fn a_reader_reads_what_a_writer_stored() {
    let (_dir, path, mut store) = temp_store();
    store.insert(&run(&calibration("t"), &[])).unwrap();
    drop(store);
    let r = Store::open_reader(&path).unwrap().unwrap();
    assert_eq!(r.list().unwrap().len(), 1);
}

#[test]
fn a_link_is_followed_to_a_store_only() {
    let (dir, path, mut store) = temp_store();
    store.insert(&run(&calibration("t"), &[])).unwrap();
    drop(store);
    let link = dir.path().join("link.sqlite");
    symlink(&path, &link).unwrap();
    assert_eq!(Store::open(&link).unwrap().list().unwrap().len(), 1);
    assert!(
        !dir.path().join("link.sqlite-wal").exists(),
        "the log is beside the store"
    );

    // A link to a user's empty SQLite database, or to nothing: refused, nothing made.
    let theirs = dir.path().join("theirs.db");
    let c = Connection::open(&theirs).unwrap();
    c.execute_batch("CREATE TABLE t (x); DROP TABLE t;")
        .unwrap();
    drop(c);
    let before = fs::read(&theirs).unwrap();
    let to_db = dir.path().join("to-db.sqlite");
    symlink(&theirs, &to_db).unwrap();
    let e = Store::open(&to_db).unwrap_err();
    assert!(e.to_string().contains("not an iogauge store"), "{e}");
    assert_eq!(fs::read(&theirs).unwrap(), before);
    let dangling = dir.path().join("dangling.sqlite");
    symlink(dir.path().join("none.sqlite"), &dangling).unwrap();
    let e = Store::open(&dangling).unwrap_err();
    assert!(e.to_string().contains("which does not exist"), "{e}");
    assert!(!dir.path().join("none.sqlite").exists());
}
