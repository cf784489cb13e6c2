//! The SQLite results store: one row per finished run (the `iogauge history` view, like
//! Oracle's DBA_RSRC_IO_CALIBRATE) with the run's JSON document stored verbatim and its HDR
//! histograms as blobs.
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

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, ToSql};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod campaign;
mod locate;
pub use campaign::{CampaignRow, CampaignRunRow, CampaignTag};
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

/// Errors of the results store. Each names the store's path; the SQLite error, if any, is the
/// source (printed by `{:#}`).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("results store {path}: directory {dir} does not exist; create it or choose another --store", path = .path.display(), dir = .dir.display())]
    MissingDir { path: PathBuf, dir: PathBuf },
    #[error("results store {path}: creating directory {dir}", path = .path.display(), dir = .dir.display())]
    CreateDir {
        path: PathBuf,
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("results store {path}: reading its header", path = .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("results store {path}: {what}, not an iogauge results store (left untouched); choose another --store", path = .path.display())]
    NotAStore { path: PathBuf, what: String },
    #[error("results store {path}: schema version {found} is newer than this iogauge understands ({SCHEMA_VERSION}); upgrade iogauge or choose another --store", path = .path.display())]
    NewerSchema { path: PathBuf, found: i32 },
    #[error("results store {path}: SQLite kept journal mode {mode:?} instead of WAL (a network filesystem?); choose a --store on a local filesystem", path = .path.display())]
    NoWal { path: PathBuf, mode: String },
    #[error("no place for the results store: none of $IOGAUGE_STORE, $XDG_DATA_HOME and $HOME is set; pass --store PATH")]
    NoPath,
    #[error("results store {path}: {op}", path = .path.display())]
    Sqlite {
        path: PathBuf,
        op: &'static str,
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// Whether the user can fix this by choosing another path (exit code 2), rather than the
    /// system failing (exit code 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            StoreError::MissingDir { .. }
                | StoreError::NotAStore { .. }
                | StoreError::NewerSchema { .. }
                | StoreError::NoPath
        )
    }
}

/// Whether a run ran to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Complete,
    /// Stopped early (Ctrl-C); the figures cover what ran.
    Interrupted,
}

impl RunStatus {
    /// The name in the `status` column, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

impl ToSql for RunStatus {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for RunStatus {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value.as_str()? {
            "complete" => Ok(RunStatus::Complete),
            "interrupted" => Ok(RunStatus::Interrupted),
            other => Err(FromSqlError::Other(
                format!("unknown run status {other:?}").into(),
            )),
        }
    }
}

/// One run to store, everything in one transaction.
#[derive(Clone, Copy, Debug)]
pub struct NewRun<'a> {
    /// `run` or `calibrate`.
    pub kind: &'a str,
    /// RFC 3339.
    pub started_at: &'a str,
    /// RFC 3339.
    pub ended_at: &'a str,
    /// Display string of the target(s).
    pub target: &'a str,
    pub status: RunStatus,
    pub max_iops: Option<f64>,
    /// MiB/s.
    pub max_mbps: Option<f64>,
    /// MiB/s of a single process (CALIBRATE_IO's MAX_PMBPS).
    pub max_pmbps: Option<f64>,
    pub latency_ms: Option<f64>,
    pub disks: Option<u32>,
    /// The full JSON document of the run, stored verbatim.
    pub document: &'a str,
    /// Label → serialised HDR histogram.
    pub histograms: &'a [(String, Vec<u8>)],
    /// The campaign run this is, stored with it in the same transaction.
    pub campaign: Option<&'a CampaignTag>,
}

/// A row of `iogauge history` (like DBA_RSRC_IO_CALIBRATE).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub kind: String,
    pub started_at: String,
    pub ended_at: String,
    pub target: String,
    pub status: RunStatus,
    pub max_iops: Option<f64>,
    pub max_mbps: Option<f64>,
    pub max_pmbps: Option<f64>,
    pub latency_ms: Option<f64>,
    pub disks: Option<u32>,
}

impl RunRow {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(RunRow {
            id: r.get(0)?,
            kind: r.get(1)?,
            started_at: r.get(2)?,
            ended_at: r.get(3)?,
            target: r.get(4)?,
            status: r.get(5)?,
            max_iops: r.get(6)?,
            max_mbps: r.get(7)?,
            max_pmbps: r.get(8)?,
            latency_ms: r.get(9)?,
            disks: r.get(10)?,
        })
    }
}

/// A run read back: its row, its document byte for byte, its histograms in insertion order.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub row: RunRow,
    pub document: String,
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
        tx.execute(
            "INSERT INTO runs (kind, started_at, ended_at, target, status, max_iops, max_mbps, \
             max_pmbps, latency_ms, disks, document) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                run.kind,
                run.started_at,
                run.ended_at,
                run.target,
                run.status,
                run.max_iops,
                run.max_mbps,
                run.max_pmbps,
                run.latency_ms,
                run.disks,
                run.document,
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
            campaign::link(&tx, id, tag, run.status).map_err(err)?;
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
        let rows = stmt.query_map([], RunRow::from_row).map_err(err)?;
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
                |r| Ok((RunRow::from_row(r)?, r.get::<_, String>(11)?)),
            )
            .optional()
            .map_err(err)?;
        let Some((row, document)) = found else {
            return Ok(None);
        };
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
mod tests {
    use super::*;
    use std::fs;

    const HISTS: &[(&str, &[u8])] = &[("read", &[0, 1, 0xff, 0x1c]), ("write", &[])];

    fn histograms() -> Vec<(String, Vec<u8>)> {
        HISTS
            .iter()
            .map(|(l, d)| (l.to_string(), d.to_vec()))
            .collect()
    }

    fn run<'a>(
        target: &'a str,
        document: &'a str,
        histograms: &'a [(String, Vec<u8>)],
    ) -> NewRun<'a> {
        NewRun {
            kind: "calibrate",
            started_at: "2025-01-02T03:04:05.678Z",
            ended_at: "2025-01-02T03:14:05.678Z",
            target,
            status: RunStatus::Complete,
            max_iops: Some(123_456.5),
            max_mbps: Some(2048.25),
            max_pmbps: None,
            latency_ms: Some(0.125),
            disks: Some(4),
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
            .map(|t| store.insert(&run(t, "{}", &[])).unwrap())
            .collect();
        let rows = store.list().unwrap();
        let listed: Vec<(i64, &str)> = rows.iter().map(|r| (r.id, r.target.as_str())).collect();
        assert_eq!(listed, [(ids[2], "c"), (ids[1], "b"), (ids[0], "a")]);
        let r = &rows[0];
        assert_eq!(
            (r.kind.as_str(), r.status),
            ("calibrate", RunStatus::Complete)
        );
        assert_eq!(
            (r.max_iops, r.max_pmbps, r.disks),
            (Some(123_456.5), None, Some(4))
        );
        assert_eq!(r.ended_at, "2025-01-02T03:14:05.678Z");
    }

    #[test]
    fn get_returns_document_and_histograms_verbatim() {
        let (_dir, _, mut store) = temp_store();
        // Odd spacing, key order, escapes and non-ASCII: stored as given, never re-serialised.
        let doc = "{ \"schema\":1,\n  \"b\": [1.50, 2e3], \"a\": \"\\u00e9 é 🦀\" }\n";
        let hists = histograms();
        let id = store.insert(&run("/dev/sdb", doc, &hists)).unwrap();
        let got = store.get(id).unwrap().unwrap();
        assert_eq!(got.document.as_bytes(), doc.as_bytes());
        assert_eq!(got.histograms, hists);
        assert_eq!(got.row, store.list().unwrap()[0]);
        assert_eq!(got.row.target, "/dev/sdb");
    }

    #[test]
    fn get_of_a_missing_id_is_none() {
        let (_dir, _, mut store) = temp_store();
        assert_eq!(store.get(1).unwrap(), None);
        let id = store.insert(&run("t", "{}", &[])).unwrap();
        assert_eq!(store.get(id + 1).unwrap(), None);
        assert_eq!(store.get(-1).unwrap(), None);
    }

    #[test]
    fn reopening_sees_earlier_runs() {
        let (_dir, path, mut store) = temp_store();
        let hists = histograms();
        let id = store.insert(&run("t", "{\"x\":1}", &hists)).unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        let got = store.get(id).unwrap().unwrap();
        assert_eq!(
            (got.document.as_str(), got.histograms),
            ("{\"x\":1}", hists)
        );
        assert_eq!(store.list().unwrap().len(), 1);
    }

    #[test]
    fn interrupted_status_round_trips() {
        let (_dir, _, mut store) = temp_store();
        let mut r = run("t", "{}", &[]);
        r.status = RunStatus::Interrupted;
        let id = store.insert(&r).unwrap();
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
        let e = store.insert(&run("t", "{}", &dup)).unwrap_err();
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
                    for _ in 0..10 {
                        s.insert(&run("t", "{}", &histograms())).unwrap();
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
    fn wal_mode_is_on_and_the_file_is_marked() {
        let (_dir, _, store) = temp_store();
        let q = |sql: &str| -> String {
            store
                .conn
                .query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0))
                .map(|v| format!("{v:?}"))
                .unwrap()
        };
        assert_eq!(q("PRAGMA journal_mode"), "Text(\"wal\")");
        assert_eq!(q("PRAGMA application_id"), "Integer(1768908641)");
        assert_eq!(q("PRAGMA user_version"), "Integer(2)");
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

    #[test]
    fn claims_an_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.sqlite");
        fs::write(&path, "").unwrap();
        let mut store = Store::open(&path).unwrap();
        store.insert(&run("t", "{}", &[])).unwrap();
    }

    #[test]
    fn refuses_a_newer_schema() {
        let (_dir, path, store) = temp_store();
        store.conn.pragma_update(None, "user_version", 3).unwrap();
        drop(store);
        let e = Store::open(&path).unwrap_err();
        assert!(
            matches!(e, StoreError::NewerSchema { found: 3, .. }),
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

    #[test]
    fn the_default_location_gets_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let loc = Location::find(None, None, Some(dir.path().into()), None).unwrap();
        let store = Store::open_location(loc).unwrap();
        assert_eq!(store.path(), dir.path().join("iogauge/results.sqlite"));
        assert!(store.path().is_file());
    }
}
