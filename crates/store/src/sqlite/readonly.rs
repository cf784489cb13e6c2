//! Reading the store, for `history`, `show`, `report`, `compare` and `export`: through a
//! read-only connection, which takes SQLite's shared lock (a writer's commit waits for it, on
//! the busy timeout) and makes nothing beside the store, on a full filesystem too (issue #44
//! L3). A store kept in a rollback journal (every store this iogauge writes; see
//! `store::rollback_journal`) needs nothing else.
//!
//! A store an older iogauge left in WAL mode is read through its shared-memory file (`-shm`),
//! which SQLite must create or write beside the store even to read. A reader who may write
//! the store has a writer's open move it to a rollback journal first ([`needs_writer`]);
//! where that cannot be done (a read-only mount, another user's file, a full filesystem) it
//! is read as immutable when no write-ahead log holds changes (no locks, nothing created
//! beside it), which is then exact: iogauge's writers fold the log in when they close, so only
//! a writer that is running or was killed leaves one. A log that does hold changes is read
//! through a `-shm` only when one is already there (a writer that is running made it): a new
//! one is never made here, since on a nearly full filesystem its pages are holes that kill
//! the process with SIGBUS when touched (issue #44 M1).

use super::connection::{identity, BUSY_TIMEOUT};
use super::error::StoreError;
use super::locate::{identity_of_header, read_header, wal_header, Identity};
use super::schema::SCHEMA_VERSION;
use super::vet::{beside, why_unwritable};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Opens the existing store at `path` read-only: with SQLite's shared lock in a rollback
/// journal; an older WAL store as immutable when no write-ahead log is pending, else through
/// the `-shm` a running writer made; else an error naming the cause.
pub(super) fn open(path: &Path) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let checked = |conn: Connection| -> rusqlite::Result<Connection> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // A query reads the schema (and a WAL index): an open alone proves nothing.
        identity(&conn)?;
        Ok(conn)
    };
    let wal = read_header(path)
        .ok()
        .flatten()
        .is_some_and(|h| wal_header(&h));
    let conn = if !wal {
        Connection::open_with_flags(path, flags)
    } else if !log_pending(path) {
        Connection::open_with_flags(immutable_uri(path), flags)
    } else if beside(path, "-shm").exists() {
        Connection::open_with_flags(path, flags)
    } else {
        return Err(cannot_read(path, None));
    };
    conn.and_then(checked)
        .map_err(|source| cannot_read(path, Some(source)))
}

/// Whether the store at `path` must be written before a read-only connection reads it as it
/// is: an older iogauge's (WAL mode or an older schema, whose tables this one reads), an
/// SQLite database without tables (the schema is made on claiming it), or one whose journal
/// or log a writer left (a write cut short, rolled back or folded in by the next writer).
pub(super) fn needs_writer(path: &Path) -> bool {
    let Ok(Some(h)) = read_header(path) else {
        return false;
    };
    let old = match identity_of_header(&h) {
        Identity::Ours { version } => version < SCHEMA_VERSION,
        Identity::Empty => true,
        Identity::Foreign(_) => false,
    };
    old || wal_header(&h) || beside(path, "-journal").exists() || log_pending(path)
}

/// The cause the filesystem names, else what SQLite said (or why it was not asked).
fn cannot_read(path: &Path, source: Option<rusqlite::Error>) -> StoreError {
    let journal = beside(path, "-journal");
    let why = match (why_unwritable(path), source) {
        _ if journal.exists() => format!(
            "a write that was cut short left its journal {}, which only a writer can roll back; run any iogauge command on the store once as a user who can write there",
            journal.display()
        ),
        (Some((why, _)), _) => why,
        (None, Some(e)) => format!("SQLite could not open it read-only ({e})"),
        (None, None) => "it is in WAL mode (an older iogauge's)".into(),
    };
    StoreError::CannotRead {
        path: path.into(),
        why,
        wal: log_pending(path).then(|| beside(path, "-wal")),
    }
}

/// Whether a write-ahead log with frames in it is beside the store (its 32-byte header alone
/// holds no change).
fn log_pending(path: &Path) -> bool {
    std::fs::metadata(beside(path, "-wal")).is_ok_and(|m| m.len() > 32)
}

/// `file:PATH?immutable=1`, the path absolute and percent-encoded (SQLite's URI filenames
/// decode `%HH`; `?`, `#` and `%` in a path would otherwise cut it).
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
mod tests {
    #[test]
    fn uris_encode_what_would_cut_them() {
        assert_eq!(
            super::immutable_uri(std::path::Path::new("/a b/x?y#%.sqlite")),
            "file:/a%20b/x%3Fy%23%25.sqlite?immutable=1"
        );
    }
}
