//! The store on real SQLite files in temp dirs: schema, upgrades, refusals, campaigns.

use super::locate::Location;
use super::*;
use iogauge_model::history::RunStatus;
use iogauge_model::{Document, Kind};
use rusqlite::Connection;
use std::fs;
use std::path::{Path, PathBuf};

const HISTS: &[(&str, &[u8])] = &[("read", &[0, 1, 0xff, 0x1c]), ("write", &[])];

fn histograms() -> Vec<(String, Vec<u8>)> {
    HISTS
        .iter()
        .map(|(l, d)| (l.to_string(), d.to_vec()))
        .collect()
}

/// A calibration document as an iogauge of schema 1 stored it (captured from a real run).
pub(super) const CALIBRATE_V1: &str =
    include_str!("../../../campaign/tests/fixtures/calibrate.json");

/// A calibration of `target` with known history figures.
pub(super) fn calibration(target: &str) -> Document {
    let Document::Calibration(mut c) = Document::from_json(CALIBRATE_V1).unwrap() else {
        unreachable!("the fixture is a calibration")
    };
    c.meta.started_at = "2025-01-02T03:04:05.678Z".into();
    c.meta.ended_at = Some("2025-01-02T03:14:05.678Z".into());
    c.targets.truncate(1);
    c.targets[0].path = target.into();
    c.max_iops = Some(123_456.5);
    c.max_mbps = Some(2048.25);
    c.max_pmbps = None;
    c.latency = Some(0.125);
    c.num_disks = 4;
    Document::from(*c)
}

fn run<'a>(document: &'a Document, histograms: &'a [(String, Vec<u8>)]) -> NewRun<'a> {
    NewRun {
        document,
        histograms,
        campaign: None,
    }
}

fn temp_store() -> (tempfile::TempDir, PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let store = Store::open(&path).unwrap();
    (dir, path, store)
}

/// Every file in `dir` with its contents, to prove a refused open changed nothing.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let bytes = fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn lists_newest_first() {
    let (_dir, _, mut store) = temp_store();
    let ids: Vec<i64> = ["a", "b", "c"]
        .iter()
        .map(|t| store.insert(&run(&calibration(t), &[])).unwrap())
        .collect();
    let rows = store.list().unwrap();
    let listed: Vec<(i64, &str)> = rows.iter().map(|r| (r.id, r.target.as_str())).collect();
    assert_eq!(listed, [(ids[2], "c"), (ids[1], "b"), (ids[0], "a")]);
    let r = &rows[0];
    assert_eq!((r.kind, r.status), (Kind::Calibrate, RunStatus::Complete));
    assert_eq!(
        (r.max_iops, r.max_pmbps, r.disks),
        (Some(123_456.5), None, Some(4))
    );
    assert_eq!(r.ended_at, "2025-01-02T03:14:05.678Z");
}

#[test]
fn get_returns_the_document_and_histograms_as_stored() {
    let (_dir, path, mut store) = temp_store();
    let mut doc = calibration("/dev/sdb");
    // Escapes and non-ASCII survive the round trip.
    doc.warnings_mut().push("\"quoted\" \u{e9} é 🦀\n".into());
    let hists = histograms();
    let id = store.insert(&run(&doc, &hists)).unwrap();
    let got = store.get(id).unwrap().unwrap();
    assert_eq!(got.document, doc);
    assert_eq!(got.histograms, hists);
    assert_eq!(got.row, store.list().unwrap()[0]);
    assert_eq!(got.row.target, "/dev/sdb");
    // Kept as compact JSON: no indentation, fewer bytes than the printed document.
    let kept: String = Connection::open(&path)
        .unwrap()
        .query_row("SELECT document FROM runs WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(kept, doc.to_compact_json());
    assert!(!kept.contains("\n  ") && kept.len() < doc.to_json().len());
}

#[test]
fn a_document_stored_by_an_older_iogauge_reads_upgraded() {
    let (_dir, _, store) = temp_store();
    store
        .conn
        .execute(
            "INSERT INTO runs (kind, started_at, ended_at, target, status, document) \
             VALUES ('calibrate', 'a', 'b', 't', 'complete', ?1)",
            [CALIBRATE_V1],
        )
        .unwrap();
    let got = store.get(1).unwrap().unwrap();
    assert_eq!(got.document.meta().schema, iogauge_model::SCHEMA);
    assert_eq!(
        got.document.meta().ended_at.as_deref(),
        Some("2026-11-23T04:00:39.618Z")
    );
}

#[test]
fn a_document_that_does_not_read_is_an_error_naming_the_run() {
    let (_dir, path, store) = temp_store();
    for (kind, doc) in [("db run", "{\"kind\": \"db\"}"), ("run", "not json")] {
        store
            .conn
            .execute(
                "INSERT INTO runs (kind, started_at, ended_at, target, status, document) \
                 VALUES (?1, 'a', 'b', 't', 'complete', ?2)",
                [kind, doc],
            )
            .unwrap();
    }
    assert_eq!(
        store.list().unwrap()[1].kind,
        Kind::DbRun,
        "an early store's kind"
    );
    for id in [1, 2] {
        let e = store.get(id).unwrap_err();
        assert!(
            matches!(e, StoreError::Document { id: i, .. } if i == id),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(msg.contains(&format!("run {id} cannot be read")), "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(e.is_usage(), "another id is the way out: exit 2");
    }
    // Issue #25 row 11: damaged by hand into a blob or a number, still the run's document.
    for (id, value) in [(1, "x'00ff'"), (2, "42")] {
        store
            .conn
            .execute(
                &format!("UPDATE runs SET document = {value} WHERE id = {id}"),
                [],
            )
            .unwrap();
        let e = store.get(id).unwrap_err();
        assert!(matches!(e, StoreError::Document { .. }), "{e:?}");
    }
}

#[test]
fn get_of_a_missing_id_is_none() {
    let (_dir, _, mut store) = temp_store();
    assert_eq!(store.get(1).unwrap(), None);
    let id = store.insert(&run(&calibration("t"), &[])).unwrap();
    assert_eq!(store.get(id + 1).unwrap(), None);
    assert_eq!(store.get(-1).unwrap(), None);
}

#[test]
fn reopening_sees_earlier_runs() {
    let (_dir, path, mut store) = temp_store();
    let hists = histograms();
    let doc = calibration("t");
    let id = store.insert(&run(&doc, &hists)).unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    let got = store.get(id).unwrap().unwrap();
    assert_eq!((got.document, got.histograms), (doc, hists));
    assert_eq!(store.list().unwrap().len(), 1);
}

#[test]
fn interrupted_status_round_trips() {
    let (_dir, _, mut store) = temp_store();
    let mut doc = calibration("t");
    doc.meta_mut().interrupted = true;
    let id = store.insert(&run(&doc, &[])).unwrap();
    assert_eq!(
        store.get(id).unwrap().unwrap().row.status,
        RunStatus::Interrupted
    );
    let json = serde_json::to_string(&store.list().unwrap()[0]).unwrap();
    assert!(json.contains("\"status\":\"interrupted\""), "{json}");
}

#[test]
fn a_failed_insert_leaves_nothing() {
    let (_dir, _, mut store) = temp_store();
    let dup = vec![("read".to_string(), vec![1]), ("read".to_string(), vec![2])];
    let e = store.insert(&run(&calibration("t"), &dup)).unwrap_err();
    assert!(matches!(e, StoreError::Sqlite { .. }), "{e:?}");
    assert_eq!(store.list().unwrap(), []);
    let n: i64 = store
        .conn
        .query_row("SELECT count(*) FROM histograms", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
}

#[test]
fn concurrent_writers_queue() {
    let (_dir, path, _store) = temp_store();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut s = Store::open(&path).unwrap();
                let doc = calibration("t");
                for _ in 0..10 {
                    s.insert(&run(&doc, &histograms())).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(Store::open(&path).unwrap().list().unwrap().len(), 40);
}

#[test]
fn a_rollback_journal_and_the_file_is_marked() {
    let (_dir, _, store) = temp_store();
    let q = |sql: &str| -> String {
        store
            .conn
            .query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0))
            .map(|v| format!("{v:?}"))
            .unwrap()
    };
    assert_eq!(q("PRAGMA journal_mode"), "Text(\"delete\")");
    assert_eq!(q("PRAGMA locking_mode"), "Text(\"normal\")");
    assert_eq!(q("PRAGMA application_id"), "Integer(1768908641)");
    assert_eq!(q("PRAGMA user_version"), "Integer(3)");
    assert_eq!(q("PRAGMA foreign_keys"), "Integer(1)");
}

#[test]
fn refuses_another_programs_database_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    let c = Connection::open(&path).unwrap();
    c.execute_batch("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');")
        .unwrap();
    drop(c);
    let before = snapshot(dir.path());
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(e, StoreError::NotAStore { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("choose another --store"), "{msg}");
    assert_eq!(snapshot(dir.path()), before);

    // In WAL mode, where a read-write connection would checkpoint on close.
    let c = Connection::open(&path).unwrap();
    c.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
        .unwrap();
    drop(c);
    let before = snapshot(dir.path());
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(e, StoreError::NotAStore { .. }), "{e:?}");
    assert_eq!(snapshot(dir.path()), before);

    // Marked as someone else's, even without tables.
    fs::remove_file(&path).unwrap();
    let c = Connection::open(&path).unwrap();
    c.pragma_update(None, "application_id", 0x1234).unwrap();
    drop(c);
    let before = snapshot(dir.path());
    let e = Store::open(&path).unwrap_err();
    assert!(e.to_string().contains("application_id 0x00001234"), "{e}");
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn refuses_devices_and_fifos_without_writing_beside_them() {
    let e = Store::open(Path::new("/dev/null")).unwrap_err();
    assert!(e.to_string().contains("a character device"), "{e}");
    assert!(!Path::new("/dev/null-journal").exists() && !Path::new("/dev/null-wal").exists());
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let e = Store::open(&fifo).unwrap_err();
    assert!(e.to_string().contains("a FIFO"), "{e}");
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["pipe"], "nothing created beside the FIFO");
}

#[test]
fn refuses_a_text_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    fs::write(&path, "these are my notes, not a database\n".repeat(40)).unwrap();
    let before = snapshot(dir.path());
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(e, StoreError::NotAStore { .. }), "{e:?}");
    assert!(e.to_string().contains("not an SQLite database"), "{e}");
    assert_eq!(snapshot(dir.path()), before);
}

/// Issue #25 row 21: iogauge makes its store whole under another name, so an empty file at
/// the path is someone else's (a link to a user's empty file turned it into a store).
#[test]
fn refuses_an_empty_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    fs::write(&path, "").unwrap();
    let before = snapshot(dir.path());
    for e in [
        Store::open(&path).unwrap_err(),
        Store::open_reader(&path).unwrap_err(),
    ] {
        assert!(matches!(e, StoreError::NotAStore { .. }), "{e:?}");
        assert!(e.to_string().contains("an empty file"), "{e}");
    }
    assert_eq!(snapshot(dir.path()), before);
}

/// An SQLite database without tables (made by `sqlite3`, say) is still claimed where it is
/// named.
#[test]
fn claims_an_empty_sqlite_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let c = Connection::open(&path).unwrap();
    c.execute_batch("CREATE TABLE t (x); DROP TABLE t;")
        .unwrap();
    drop(c);
    assert!(fs::metadata(&path).unwrap().len() > 0);
    let mut store = Store::open(&path).unwrap();
    store.insert(&run(&calibration("t"), &[])).unwrap();
}

#[test]
fn refuses_a_newer_schema() {
    let (_dir, path, store) = temp_store();
    store.conn.pragma_update(None, "user_version", 4).unwrap();
    drop(store);
    let e = Store::open(&path).unwrap_err();
    assert!(
        matches!(e, StoreError::NewerSchema { found: 4, .. }),
        "{e:?}"
    );
}

#[test]
fn a_named_store_in_a_missing_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let path = missing.join("results.sqlite");
    let loc = Location::find(Some(&path), None, None, None).unwrap();
    let e = Store::open_location(loc).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("directory {} does not exist", missing.display())),
        "{msg}"
    );
    assert!(!missing.exists());
}

/// Issue #44 L6: the longest name a store may have leaves room for its journal's.
#[test]
fn a_store_name_leaves_room_for_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let longest = dir.path().join(format!("{}.sqlite", "s".repeat(240)));
    Store::open(&longest)
        .unwrap()
        .insert(&run(&calibration("t"), &[]))
        .unwrap();
    let over = dir.path().join(format!("{}.sqlite", "s".repeat(241)));
    let e = Store::open(&over).unwrap_err();
    assert!(e.is_usage(), "{e:?}");
    assert!(e.to_string().contains("its file name is 248 bytes"), "{e}");
}

#[test]
fn the_default_location_gets_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let loc = Location::find(None, None, Some(dir.path().into()), None).unwrap();
    let store = Store::open_location(loc).unwrap();
    assert_eq!(store.path(), dir.path().join("iogauge/results.sqlite"));
    assert!(store.path().is_file());
}

#[path = "journal_tests.rs"]
mod journal_tests;
#[path = "open_tests.rs"]
mod open_tests;
