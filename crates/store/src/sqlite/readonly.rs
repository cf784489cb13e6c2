//! Reading a store that cannot be written (a read-only mount, another user's file, a full
//! filesystem), for `history`, `show`, `report`, `compare` and `export`. A WAL database is
//! read through its shared-memory file (`-shm`), which SQLite must create or write beside the
//! store even to read. Where no write-ahead log holds changes the store is read as immutable
//! instead (no locks, nothing created beside it), which is then exact: iogauge's writers
//! fold the log in when they close, so only a writer that is running or was killed leaves
//! one. The cost: a writer that starts while such a read runs is not waited for (its changes
//! go to the log first; only a checkpoint rewrites the file under the reader).

use super::connection::{identity, BUSY_TIMEOUT};
use super::error::StoreError;
use super::vet::{dir_of, why_unwritable};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// Opens the existing store at `path` read-only: as immutable when no write-ahead log is
/// pending (nothing is created beside it), else through its `-shm` (a writer that is
/// running has made it); else an error naming the cause.
pub(super) fn open(path: &Path) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let checked = |conn: Connection| -> rusqlite::Result<Connection> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // A query reads the schema, and with it the WAL index: an open alone proves nothing.
        identity(&conn)?;
        Ok(conn)
    };
    let conn = if log_pending(path) {
        Connection::open_with_flags(path, flags)
    } else {
        Connection::open_with_flags(immutable_uri(path), flags)
    };
    conn.and_then(checked)
        .map_err(|source| cannot_read(path, source))
}

/// The cause the filesystem names, else SQLite's own words.
fn cannot_read(path: &Path, source: rusqlite::Error) -> StoreError {
    let why = why_unwritable(path).map_or_else(
        || format!("SQLite could not open it read-only ({source})"),
        |(why, _)| why,
    );
    StoreError::CannotRead {
        path: path.into(),
        why,
        wal: log_pending(path).then(|| wal_of(path)),
    }
}

/// The write-ahead log of the store at `path` (beside the file a link leads to, as SQLite
/// puts it).
fn wal_of(path: &Path) -> PathBuf {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut name = real.file_name().unwrap_or_default().to_os_string();
    name.push("-wal");
    dir_of(&real).join(name)
}

/// Whether a write-ahead log with frames in it is beside the store (its 32-byte header alone
/// holds no change).
fn log_pending(path: &Path) -> bool {
    std::fs::metadata(wal_of(path)).is_ok_and(|m| m.len() > 32)
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
