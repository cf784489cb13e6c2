//! Opening the store: finding it (`--store`, the environment, the default location), refusing
//! any file that is not an iogauge store before SQLite touches it, creating or upgrading the
//! schema, and WAL mode. Runs and campaigns are read and written in `runs` and `campaign`.

use super::error::StoreError;
use super::locate::{identity_of_header, read_header, Identity, Location};
use super::schema::{APPLICATION_ID, CAMPAIGN_TABLES, RUN_TABLES, SCHEMA_VERSION};
use rusqlite::{Connection, ErrorCode};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another one before giving up with "database is locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// [`identity_of_header`]'s judgement from SQLite's view, which includes a WAL's newer pages.
fn identity(conn: &Connection) -> rusqlite::Result<Identity> {
    let app: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    let version: i32 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let objects: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    Ok(match app {
        APPLICATION_ID => Identity::Ours { version },
        0 if objects == 0 => Identity::Empty,
        other => Identity::foreign_app(other),
    })
}

/// The results store: one SQLite connection.
#[derive(Debug)]
pub struct Store {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
}

impl Store {
    /// Opens (creating if missing) the store at `path` in WAL mode, creating the schema. A file
    /// that is not an iogauge store is refused and never altered. The directory must exist.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(StoreError::MissingDir {
                path: path.into(),
                dir: dir.into(),
            });
        }
        let sqlite = |op| {
            move |source| StoreError::Sqlite {
                path: path.into(),
                op,
                source,
            }
        };
        let refuse = |what: String| StoreError::NotAStore {
            path: path.into(),
            what,
        };
        let check = |id: rusqlite::Result<Identity>| match id {
            Ok(Identity::Foreign(what)) => Err(refuse(what)),
            Ok(Identity::Ours { version }) if version > SCHEMA_VERSION => {
                Err(StoreError::NewerSchema {
                    path: path.into(),
                    found: version,
                })
            }
            Ok(id) => Ok(id),
            // Only if the file was replaced after its header was read.
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::NotADatabase) => {
                Err(refuse("not an SQLite database".into()))
            }
            Err(e) => Err(sqlite("checking that it is iogauge's")(e)),
        };
        // Only a regular file (or none yet) can be a store: SQLite would open a device or a
        // FIFO too, and create its journal beside it (in /dev for /dev/null).
        if let Some(kind) = not_a_file(path) {
            return Err(refuse(kind.into()));
        }
        let header = read_header(path).map_err(|source| StoreError::Read {
            path: path.into(),
            source,
        })?;
        if let Some(h) = header {
            check(Ok(identity_of_header(&h)))?;
        }

        let mut conn = Connection::open(path).map_err(sqlite("opening"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sqlite("setting the busy timeout"))?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(sqlite("enabling foreign keys"))?;
        // Checked again under the write lock, so two processes creating the store at once
        // cannot both write the schema, and a file replaced meanwhile is still not written.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sqlite("locking"))?;
        match check(identity(&tx))? {
            Identity::Empty | Identity::Ours { version: 0 } => {
                tx.execute_batch(RUN_TABLES)
                    .and_then(|()| tx.execute_batch(CAMPAIGN_TABLES))
                    .map_err(sqlite("creating the schema"))?;
                tx.pragma_update(None, "application_id", APPLICATION_ID)
                    .and_then(|()| tx.pragma_update(None, "user_version", SCHEMA_VERSION))
                    .map_err(sqlite("marking it as iogauge's"))?;
            }
            // Version 1 had no campaigns: add their tables, keep every run.
            Identity::Ours { version: 1 } => {
                tx.execute_batch(CAMPAIGN_TABLES)
                    .and_then(|()| tx.pragma_update(None, "user_version", SCHEMA_VERSION))
                    .map_err(sqlite("upgrading the schema to version 2"))?;
            }
            _ => {}
        }
        tx.commit().map_err(sqlite("creating the schema"))?;

        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(sqlite("switching to WAL mode"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::NoWal {
                path: path.into(),
                mode,
            });
        }
        Ok(Store {
            conn,
            path: path.into(),
        })
    }

    /// `--store PATH` if given, else `$IOGAUGE_STORE`, else
    /// `$XDG_DATA_HOME/iogauge/results.sqlite`, else `$HOME/.local/share/iogauge/results.sqlite`.
    /// Empty variables count as unset. A pure function of its inputs; see [`Store::default_path`].
    pub fn resolve_path(
        flag: Option<&Path>,
        iogauge_store: Option<OsString>,
        xdg_data_home: Option<OsString>,
        home: Option<OsString>,
    ) -> Option<PathBuf> {
        Location::find(flag, iogauge_store, xdg_data_home, home).map(|l| l.path)
    }

    /// Where `--store` (`flag`) or the environment puts the store, without opening it.
    pub fn locate(flag: Option<&Path>) -> Option<PathBuf> {
        Location::from_env(flag).map(|l| l.path)
    }

    /// [`Store::resolve_path`] without `--store`, from the process environment.
    pub fn default_path() -> Option<PathBuf> {
        Location::from_env(None).map(|l| l.path)
    }

    /// Opens the store `--store` (`flag`) or the environment points at. The directory of the
    /// default location (under `$XDG_DATA_HOME` or `$HOME`) is created; a directory the user
    /// named must exist.
    pub fn open_resolved(flag: Option<&Path>) -> Result<Store, StoreError> {
        Self::open_location(Location::from_env(flag).ok_or(StoreError::NoPath)?)
    }

    pub(super) fn open_location(loc: Location) -> Result<Store, StoreError> {
        if loc.create_dir {
            if let Some(dir) = loc.path.parent() {
                std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                    path: loc.path.clone(),
                    dir: dir.into(),
                    source,
                })?;
            }
        }
        Self::open(&loc.path)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// What `path` is when it exists and is not a regular file (links followed).
fn not_a_file(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::metadata(path).ok()?.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}
