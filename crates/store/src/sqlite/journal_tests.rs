//! The rollback journal (issue #44 M1, L3): a store an older iogauge left in WAL mode is moved
//! to it with every run, its log's too; readers leave nothing beside the store; a store held
//! open by a run shuts neither readers nor other writers out.

use super::*;
use std::time::{Duration, Instant};

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

/// `s.sqlite` in `dir` as an older iogauge killed while writing left it: in WAL mode, one run
/// in the file and a second only in its write-ahead log (a copy taken while the writer held
/// it open, as a crash leaves it).
fn killed_wal_store(dir: &Path) -> PathBuf {
    let live = dir.join("live.sqlite");
    let mut store = Store::open(&live).unwrap();
    store
        .insert(&run(&calibration("in the file"), &[]))
        .unwrap();
    drop(store);
    let c = Connection::open(&live).unwrap();
    c.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
        .unwrap();
    c.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    c.execute(
        "INSERT INTO runs SELECT NULL, kind, started_at, ended_at, 'in the log', status, \
         max_iops, max_mbps, max_pmbps, latency_ms, disks, document FROM runs",
        [],
    )
    .unwrap();
    let path = dir.join("s.sqlite");
    fs::copy(&live, &path).unwrap();
    fs::copy(dir.join("live.sqlite-wal"), dir.join("s.sqlite-wal")).unwrap();
    fs::copy(dir.join("live.sqlite-shm"), dir.join("s.sqlite-shm")).unwrap();
    drop(c);
    fs::remove_file(&live).unwrap();
    assert_eq!(fs::read(&path).unwrap()[18], 2, "a WAL store");
    path
}

fn targets(store: &Store) -> Vec<String> {
    store
        .list()
        .unwrap()
        .into_iter()
        .map(|r| r.target)
        .collect()
}

#[test]
fn an_older_wal_store_moves_to_a_rollback_journal_with_every_run() {
    for reader in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = killed_wal_store(dir.path());
        let store = match reader {
            false => Store::open(&path).unwrap(),
            true => Store::open_reader(&path).unwrap().unwrap(),
        };
        assert_eq!(targets(&store), ["in the log", "in the file"], "{reader}");
        drop(store);
        assert_eq!(fs::read(&path).unwrap()[18], 1, "a rollback journal now");
        assert_eq!(names(dir.path()), ["s.sqlite"], "log and index folded in");
    }
}

#[test]
fn a_reader_makes_nothing_beside_the_store() {
    let (dir, path, mut store) = temp_store();
    let id = store
        .insert(&run(&calibration("t"), &histograms()))
        .unwrap();
    drop(store);
    let r = Store::open_reader(&path).unwrap().unwrap();
    assert_eq!(r.list().unwrap().len(), 1);
    assert!(r.get(id).unwrap().is_some());
    assert_eq!(names(dir.path()), ["results.sqlite"], "while it is open");
    drop(r);
    assert_eq!(names(dir.path()), ["results.sqlite"]);
}

/// A run keeps its store open while it measures: readers and other writers go on meanwhile,
/// without waiting out the busy timeout.
#[test]
fn a_store_held_open_shuts_nobody_out() {
    let (_dir, path, mut held) = temp_store();
    held.insert(&run(&calibration("first"), &[])).unwrap();
    let quick = Duration::from_secs(2);
    assert!(quick < connection::BUSY_TIMEOUT);
    let t = Instant::now();
    let reader = Store::open_reader(&path).unwrap().unwrap();
    assert_eq!(reader.list().unwrap().len(), 1);
    let mut other = Store::open(&path).unwrap();
    other.insert(&run(&calibration("second"), &[])).unwrap();
    held.insert(&run(&calibration("third"), &[])).unwrap();
    assert_eq!(reader.list().unwrap().len(), 3);
    assert!(t.elapsed() < quick, "waited {:?}", t.elapsed());
}
