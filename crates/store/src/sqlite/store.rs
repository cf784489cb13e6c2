//! Opening the store: finding it (`--store`, the environment, the default location), refusing
//! any file that is not an iogauge store before SQLite touches it, creating or upgrading the
//! schema, and its rollback journal. Runs and campaigns are read and written in `runs` and
//! `campaign`.

use super::connection::{identity, BUSY_TIMEOUT};
use super::create;
use super::error::StoreError;
use super::locate::{read_header, wal_header, Identity, Location};
use super::readonly;
use super::schema::{APPLICATION_ID, CAMPAIGN_TABLES, RUN_TABLES, SCHEMA_VERSION, TRACE_TABLES};
use super::vet::{beside, file_in_the_way, store_dir, vet, why_unwritable, Found};
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The results store: one SQLite connection.
#[derive(Debug)]
pub struct Store {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
}

impl Store {
    /// Opens (creating if missing) the store at `path` to write it, creating the schema. A
    /// file that is not an iogauge store is refused and never altered (`vet`); a new store is
    /// made whole under another name first (`create`). The directory must exist. A store on
    /// a filesystem with no room left is refused here, before anything is measured.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let dir = store_dir(path)?;
        let made = match vet(path)? {
            Found::Missing => create::create(path, &dir),
            // SQLite opens a file it may not write read-only without a word, and fails only
            // when the result is stored, after the whole measurement.
            Found::Present if !writable(path) => Err(StoreError::CannotWrite {
                path: path.into(),
                why: why_unwritable(path).map_or_else(
                    || format!("{} is not writable by this user", path.display()),
                    |(why, _)| why,
                ),
                full: false,
            }),
            Found::Present => match why_unwritable(path) {
                Some((why, true)) => Err(StoreError::CannotWrite {
                    path: path.into(),
                    why,
                    full: true,
                }),
                _ => Ok(()),
            },
        };
        made.and_then(|()| Self::open_existing(path))
            .map_err(|e| unwritable(path, e))
    }

    /// Opens the existing store at `path` to read it, never creating one: `None` when there
    /// is none. It is read through a read-only connection, which makes nothing beside it
    /// (`readonly`). A store that must be written before it can be read as it is (an older
    /// iogauge's, a write cut short: `readonly::needs_writer`) is opened by a writer first
    /// where this user may write it; where that fails (a full filesystem) it is read as it is.
    pub fn open_reader(path: &Path) -> Result<Option<Store>, StoreError> {
        if vet(path)? == Found::Missing {
            return Ok(None);
        }
        // Only where this user may write: in another user's store a writer would leave files
        // of ours beside it, which its owner could then neither write nor (in a sticky
        // directory such as /tmp) remove.
        if writable(path) && readonly::needs_writer(path) {
            let opened = Self::open_existing(path);
            if let Err(e @ (StoreError::NotAStore { .. } | StoreError::NewerSchema { .. })) = opened
            {
                return Err(e);
            }
        }
        Self::open_read_only(path).map(Some)
    }

    /// The store at `path` read through a read-only connection ([`readonly::open`]).
    fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        Ok(Store {
            conn: readonly::open(path)?,
            path: path.into(),
        })
    }

    /// The store `--store` (`flag`) or the environment points at, to read: an error naming
    /// the path when there is none yet (nothing is created, not even its directory).
    pub fn open_reader_resolved(flag: Option<&Path>) -> Result<Store, StoreError> {
        let loc = Location::from_env(flag).ok_or(StoreError::NoPath)?;
        Self::open_reader(&loc.path)?.ok_or(StoreError::Missing { path: loc.path })
    }

    /// Opens the store at `path`, which [`vet`] found, for writing: checks its identity
    /// again under the write lock, creates or upgrades the schema, and keeps it in a rollback
    /// journal ([`rollback_journal`]).
    fn open_existing(path: &Path) -> Result<Store, StoreError> {
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
        // Without SQLITE_OPEN_CREATE: a store removed since it was vetted is not made here
        // as an empty file.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags).map_err(sqlite("opening"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sqlite("setting the busy timeout"))?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(sqlite("enabling foreign keys"))?;
        // A store an older iogauge left in WAL mode: exclusive until it is set up, before its
        // first read, so that its WAL index is kept in this process's memory, never in a
        // `-shm` file mapped into it (see `rollback_journal`).
        let wal = read_header(path).is_ok_and(|h| h.is_some_and(|h| wal_header(&h)));
        if wal {
            let _: String = conn
                .query_row("PRAGMA locking_mode = EXCLUSIVE", [], |r| r.get(0))
                .map_err(sqlite("locking"))?;
        }
        // Checked again under the write lock, so two processes claiming an empty database
        // at once cannot both write the schema, and a file replaced meanwhile is not written.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sqlite("locking"))?;
        match check(identity(&tx))? {
            Identity::Empty | Identity::Ours { version: 0 } => {
                tx.execute_batch(RUN_TABLES)
                    .and_then(|()| tx.execute_batch(CAMPAIGN_TABLES))
                    .and_then(|()| tx.execute_batch(TRACE_TABLES))
                    .map_err(sqlite("creating the schema"))?;
                tx.pragma_update(None, "application_id", APPLICATION_ID)
                    .and_then(|()| tx.pragma_update(None, "user_version", SCHEMA_VERSION))
                    .map_err(sqlite("marking it as iogauge's"))?;
            }
            // Version 1 had no campaigns, 2 no traces: add their tables, keep every run.
            Identity::Ours { version } if version < SCHEMA_VERSION => {
                tx.execute_batch(CAMPAIGN_TABLES)
                    .and_then(|()| tx.execute_batch(TRACE_TABLES))
                    .and_then(|()| tx.pragma_update(None, "user_version", SCHEMA_VERSION))
                    .map_err(sqlite("upgrading the schema to version 3"))?;
            }
            _ => {}
        }
        tx.commit().map_err(sqlite("creating the schema"))?;
        if wal {
            rollback_journal(&conn, path)?;
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
        if let Some(file) = file_in_the_way(&loc.path) {
            return Err(StoreError::NotADirectory {
                path: loc.path,
                file,
            });
        }
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

/// Leaves WAL mode for a rollback journal (`DELETE`, SQLite's default: the journal exists
/// only while a transaction commits), then lets go of the exclusive lock `conn` took to
/// read the WAL without a `-shm`. A new store is made in a rollback journal (`create`).
///
/// Why not WAL (issue #44 M1): a WAL database's index lives in a `-shm` file that SQLite maps
/// into memory and writes through the mapping. It makes the file's pages by writing one byte
/// at the end of each 4 KiB page, which on a filesystem of 1 KiB blocks (mkfs's choice for a
/// small ext4) allocates one block of four: the others stay holes, and when the filesystem is
/// nearly full, touching one kills the process with SIGBUS, after the measurement and on
/// every later open, `history` too. A rollback journal is written with write(2), so a full
/// filesystem is an error SQLite returns (SQLITE_FULL), and nothing is left beside the store
/// between transactions. What it costs: a writer's commit waits for readers (and they for
/// it) on the busy timeout, for the milliseconds a read or a commit takes; an idle connection
/// (a run measuring with its store open) holds no lock, so `history` still reads during a
/// run. The other ways out were weaker: an exclusive lock for good (no `-shm` either) would
/// shut `history` out for a whole run, and checking free space first leaves a window.
fn rollback_journal(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let sqlite = |op| {
        move |source| StoreError::Sqlite {
            path: path.into(),
            op,
            source,
        }
    };
    // Folds a WAL's log into the file and removes it; a rollback store stays as it is.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
        .map_err(sqlite("leaving WAL mode"))?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(StoreError::NoRollback {
            path: path.into(),
            mode,
        });
    }
    // An older iogauge killed while writing left its `-shm`, which nothing reads now.
    let _ = std::fs::remove_file(beside(path, "-shm"));
    // The locks go at the next read after the mode changes back.
    let _: String = conn
        .query_row("PRAGMA locking_mode = NORMAL", [], |r| r.get(0))
        .map_err(sqlite("unlocking"))?;
    identity(conn).map_err(sqlite("unlocking"))?;
    Ok(())
}

/// An SQLite failure to open or create the store, with its cause when the filesystem names
/// one (SQLite says "unable to open database file" for all of them).
fn unwritable(path: &Path, e: StoreError) -> StoreError {
    let StoreError::Sqlite {
        path: p,
        op,
        source,
    } = e
    else {
        return e;
    };
    // The cause alone: SQLite's "unable to open database file" adds nothing to it.
    match why_unwritable(path) {
        Some((why, full)) => StoreError::CannotWrite { path: p, why, full },
        None => StoreError::Sqlite {
            path: p,
            op,
            source,
        },
    }
}

/// Whether this process may write the file at `path` (access(2): its mode, its owner, a
/// read-only mount).
fn writable(path: &Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_ok()
}
