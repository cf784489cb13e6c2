//! The SQLite results store: one row per finished run (the `iogauge history` view, like
//! Oracle's DBA_RSRC_IO_CALIBRATE) with the run's JSON document and its HDR histograms as
//! blobs. Documents go in and come out typed (`iogauge_model::Document`): the store writes
//! their JSON and reads it back through the model's reader, which upgrades older schemas.
//!
//! Each run goes in with one transaction, so a crash or Ctrl-C mid-campaign leaves only whole
//! runs behind. WAL mode lets `iogauge history` read while a run is being written, and a busy
//! timeout lets concurrent writers queue instead of failing.
//!
//! A store is marked with `PRAGMA application_id` and versioned with `PRAGMA user_version`.
//! Any other file (another program's database, a text file) is refused before SQLite opens it:
//! its header is read as plain bytes first, because SQLite can change files even when asked only
//! to read (a read-only connection leaves `-wal` and `-shm` files beside a WAL database; a
//! read-write one rolls back a hot journal or checkpoints a WAL on close).

use iogauge_model::history::{RunRow, RunStatus};
use iogauge_model::{Document, Kind};
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ValueRef};
use rusqlite::{params, Connection, ErrorCode, OptionalExtension};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod campaign;
mod error;
mod locate;
pub use campaign::{CampaignRow, CampaignRunRow, CampaignTag};
pub use error::StoreError;
use locate::{identity_of_header, read_header, Identity, Location};

/// `PRAGMA application_id` of an iogauge store: "ioga" in ASCII.
const APPLICATION_ID: i32 = 0x696f_6761;
/// `PRAGMA user_version`: the schema version; bump (and migrate) on any schema change.
const SCHEMA_VERSION: i32 = 2;
/// How long a writer waits for another one before giving up with "database is locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

// AUTOINCREMENT: run ids are shown to users and named on the command line, so an id must never
// come back after the newest run is deleted.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT NOT NULL,
    target     TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('complete', 'interrupted')),
    max_iops   REAL,
    max_mbps   REAL,
    max_pmbps  REAL,
    latency_ms REAL,
    disks      INTEGER,
    document   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS histograms (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    label  TEXT NOT NULL,
    data   BLOB NOT NULL,
    PRIMARY KEY (run_id, label)
);
";

const ROW_COLUMNS: &str = "id, kind, started_at, ended_at, target, status, \
                           max_iops, max_mbps, max_pmbps, latency_ms, disks";

/// One run to store, everything in one transaction. The history row (kind, times, target,
/// status, figures) comes from the document.
#[derive(Clone, Copy, Debug)]
pub struct NewRun<'a> {
    pub document: &'a Document,
    /// Label → serialised HDR histogram.
    pub histograms: &'a [(String, Vec<u8>)],
    /// The campaign run this is, stored with it in the same transaction.
    pub campaign: Option<&'a CampaignTag>,
}

impl NewRun<'_> {
    pub fn status(&self) -> RunStatus {
        if self.document.meta().interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        }
    }
}

/// The `status` column: the status by name.
pub(crate) struct StatusColumn(RunStatus);

impl FromSql for StatusColumn {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value.as_str()? {
            "complete" => Ok(StatusColumn(RunStatus::Complete)),
            "interrupted" => Ok(StatusColumn(RunStatus::Interrupted)),
            other => Err(FromSqlError::Other(
                format!("unknown run status {other:?}").into(),
            )),
        }
    }
}

/// A history row from a `SELECT {ROW_COLUMNS}`.
fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        id: r.get(0)?,
        kind: r.get::<_, KindColumn>(1)?.0,
        started_at: r.get(2)?,
        ended_at: r.get(3)?,
        target: r.get(4)?,
        status: r.get::<_, StatusColumn>(5)?.0,
        max_iops: r.get(6)?,
        max_mbps: r.get(7)?,
        max_pmbps: r.get(8)?,
        latency_ms: r.get(9)?,
        disks: r.get(10)?,
    })
}

/// The `kind` column: the document's kind by name (`db run` as stores of an early iogauge
/// wrote it for database runs).
struct KindColumn(Kind);

impl FromSql for KindColumn {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value.as_str()? {
            "db run" => Ok(KindColumn(Kind::DbRun)),
            name => Kind::from_name(name)
                .map(KindColumn)
                .ok_or_else(|| FromSqlError::Other(format!("unknown run kind {name:?}").into())),
        }
    }
}

/// A run read back: its row, its document (upgraded to this iogauge's schema), its
/// histograms in insertion order.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub row: RunRow,
    pub document: Document,
    pub histograms: Vec<(String, Vec<u8>)>,
}

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
    conn: Connection,
    path: PathBuf,
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
        if path.is_dir() {
            return Err(refuse("a directory".into()));
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
                tx.execute_batch(SCHEMA)
                    .and_then(|()| tx.execute_batch(campaign::SCHEMA))
                    .map_err(sqlite("creating the schema"))?;
                tx.pragma_update(None, "application_id", APPLICATION_ID)
                    .and_then(|()| tx.pragma_update(None, "user_version", SCHEMA_VERSION))
                    .map_err(sqlite("marking it as iogauge's"))?;
            }
            // Version 1 had no campaigns: add their tables, keep every run.
            Identity::Ours { version: 1 } => {
                tx.execute_batch(campaign::SCHEMA)
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

    fn open_location(loc: Location) -> Result<Store, StoreError> {
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

    /// Stores a run and its histograms in one transaction; returns the run's id.
    pub fn insert(&mut self, run: &NewRun) -> Result<i64, StoreError> {
        let err = |source| StoreError::Sqlite {
            path: self.path.clone(),
            op: "storing the run",
            source,
        };
        // IMMEDIATE takes the write lock up front, so a concurrent writer waits on the busy
        // timeout instead of failing when a read transaction cannot be upgraded.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        let doc = run.document;
        let (meta, f) = (doc.meta(), doc.history());
        let ended_at = meta.ended_at.as_deref().unwrap_or(&meta.started_at);
        tx.execute(
            "INSERT INTO runs (kind, started_at, ended_at, target, status, max_iops, max_mbps, \
             max_pmbps, latency_ms, disks, document) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                meta.kind.name(),
                meta.started_at,
                ended_at,
                f.target,
                run.status().as_str(),
                f.max_iops,
                f.max_mbps,
                f.max_pmbps,
                f.latency_ms,
                f.disks,
                doc.to_json(),
            ],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        {
            let mut stmt = tx
                .prepare("INSERT INTO histograms (run_id, label, data) VALUES (?1, ?2, ?3)")
                .map_err(err)?;
            for (label, data) in run.histograms {
                stmt.execute(params![id, label, data]).map_err(err)?;
            }
        }
        if let Some(tag) = run.campaign {
            campaign::link(&tx, id, tag, run.status()).map_err(|e| {
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) {
                    StoreError::RepetitionStored {
                        path: self.path.clone(),
                        campaign: tag.campaign.clone(),
                        case: tag.case.clone(),
                        rep: tag.rep,
                    }
                } else {
                    err(e)
                }
            })?;
        }
        tx.commit().map_err(err)?;
        Ok(id)
    }

    /// Every run, newest first.
    pub fn list(&self) -> Result<Vec<RunRow>, StoreError> {
        let err = |source| StoreError::Sqlite {
            path: self.path.clone(),
            op: "listing runs",
            source,
        };
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {ROW_COLUMNS} FROM runs ORDER BY id DESC"))
            .map_err(err)?;
        let rows = stmt.query_map([], run_row).map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    /// The run `id` with its document and histograms, or `None` if there is no such run.
    pub fn get(&self, id: i64) -> Result<Option<StoredRun>, StoreError> {
        let err = |source| StoreError::Sqlite {
            path: self.path.clone(),
            op: "reading a run",
            source,
        };
        // One read transaction, so the row and its histograms come from the same snapshot.
        let tx = self.conn.unchecked_transaction().map_err(err)?;
        let found = tx
            .query_row(
                &format!("SELECT {ROW_COLUMNS}, document FROM runs WHERE id = ?1"),
                [id],
                |r| Ok((run_row(r)?, r.get::<_, String>(11)?)),
            )
            .optional()
            .map_err(err)?;
        let Some((row, text)) = found else {
            return Ok(None);
        };
        let document = Document::from_json(&text).map_err(|source| StoreError::Document {
            path: self.path.clone(),
            id,
            source,
        })?;
        let mut stmt = tx
            .prepare("SELECT label, data FROM histograms WHERE run_id = ?1 ORDER BY rowid")
            .map_err(err)?;
        let histograms = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(err)?
            .collect::<Result<_, _>>()
            .map_err(err)?;
        Ok(Some(StoredRun {
            row,
            document,
            histograms,
        }))
    }
}

#[cfg(test)]
mod tests;
