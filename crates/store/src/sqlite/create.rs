//! A new store, made whole under a temporary name beside the path and then linked into place
//! without replacing anything: the path is either absent or a complete iogauge store, never
//! the empty file SQLite makes before its first write. So an empty file at the path is never
//! iogauge's, and is refused (issue #25 row 21); a creation killed half-way leaves only a
//! temporary file, which the next creation in that directory removes.

use super::error::StoreError;
use super::schema::{APPLICATION_ID, CAMPAIGN_TABLES, RUN_TABLES, SCHEMA_VERSION, TRACE_TABLES};
use crate::names::{fit, NAME_MAX};
use rusqlite::{Connection, OpenFlags};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// `.NAME.iogauge-new-`: the temporaries of the store `NAME` are this and a PID. A long NAME
/// is cut ([`crate::names::fit`]) so that the temporary's name and its journal's stay file
/// names: room is left for the PID and its count (28 bytes) and `-journal` (8).
fn temp_prefix(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let room = NAME_MAX - ".".len() - ".iogauge-new-".len() - 28 - "-journal".len();
    let name = String::from_utf8(fit(name.as_bytes(), room)).ok()?;
    Some(format!(".{name}.iogauge-new-"))
}

/// `.NAME.iogauge-new-PID-N`, beside the store `NAME`: N tells apart two threads of one
/// process creating the same store.
fn temp_name(path: &Path, pid: u32) -> Option<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Some(path.with_file_name(format!("{}{pid}-{n}", temp_prefix(path)?)))
}

/// Creates the store at `path` (absent when called); a store another process put there
/// meanwhile is kept and used. `dir` is the path's directory, which exists.
pub(super) fn create(path: &Path, dir: &Path) -> Result<(), StoreError> {
    let sqlite = |op| {
        move |source| StoreError::Sqlite {
            path: path.into(),
            op,
            source,
        }
    };
    let Some(tmp) = temp_name(path, std::process::id()) else {
        return Err(StoreError::NotAStore {
            path: path.into(),
            what: "not a file name".into(),
        });
    };
    remove_stale(path, dir);
    let _ = std::fs::remove_file(&tmp);
    let made = (|| {
        let conn = Connection::open_with_flags(
            &tmp,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sqlite("creating"))?;
        conn.execute_batch(RUN_TABLES)
            .and_then(|()| conn.execute_batch(CAMPAIGN_TABLES))
            .and_then(|()| conn.execute_batch(TRACE_TABLES))
            .map_err(sqlite("creating the schema"))?;
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .and_then(|()| conn.pragma_update(None, "user_version", SCHEMA_VERSION))
            .map_err(sqlite("marking it as iogauge's"))?;
        // In a rollback journal, SQLite's default (see `store::rollback_journal`): each
        // commit removes its journal, so the file alone is the store.
        conn.close().map_err(|(_, e)| sqlite("closing")(e))?;
        publish(&tmp, path).map_err(|source| StoreError::Publish {
            path: path.into(),
            source,
        })
    })();
    let _ = std::fs::remove_file(&tmp);
    made
}

/// Links `tmp` to `path` unless something is there by now (another iogauge creating the
/// same store won the race: its store is used). Without hard links (vfat, some FUSE
/// filesystems), a rename that does not replace.
fn publish(tmp: &Path, path: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(tmp, path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(_) => {
            use rustix::fs::{renameat_with, RenameFlags, CWD};
            match renameat_with(CWD, tmp, CWD, path, RenameFlags::NOREPLACE) {
                Ok(()) => Ok(()),
                Err(e) if e == rustix::io::Errno::EXIST => Ok(()),
                Err(e) => Err(e.into()),
            }
        }
    }
}

/// Removes temporaries of this store left by a creation that was killed (its process is
/// gone). Only names of the form [`temp_name`] makes; a live creator's file is left alone.
fn remove_stale(path: &Path, dir: &Path) {
    let Some(prefix) = temp_prefix(path) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|p| p.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_store_is_whole_and_a_stale_temporary_goes() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("s.sqlite");
        // A creation killed half-way, by a process that is gone (pid_max is below 2^22).
        let stale = temp_name(&path, 4_999_999).unwrap();
        std::fs::write(&stale, "").unwrap();
        create(&path, d.path()).unwrap();
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["s.sqlite"], "only the store is left");
        let h = std::fs::read(&path).unwrap();
        assert!(
            h.starts_with(b"SQLite format 3\0") && h[18] == 1,
            "a store in a rollback journal"
        );
        // A second creator finds the store there and keeps it.
        let before = std::fs::read(&path).unwrap();
        create(&path, d.path()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    /// Issue #44 L6: the temporary of a store whose name is long was longer than a file name.
    #[test]
    fn a_store_with_the_longest_name_is_made() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(format!("{}.sqlite", "s".repeat(240)));
        create(&path, d.path()).unwrap();
        assert!(path.is_file());
        let t = temp_name(&path, u32::MAX).unwrap();
        let n = t.file_name().unwrap().len();
        assert!(n + "-journal".len() <= NAME_MAX, "{n} bytes");
    }

    /// Creators racing for one path: each gets the store, none an empty or half-made file.
    #[test]
    fn racing_creators_share_one_store() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("s.sqlite");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || crate::Store::open(&path).map(drop))
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("s.sqlite-"))
            .collect();
        assert_eq!(names, ["s.sqlite"], "no temporary left");
    }
}
