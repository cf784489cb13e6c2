//! The store's errors: each names the store's path and the way out; the SQLite or I/O error,
//! if any, is the source (printed by `{:#}`).

use super::schema::SCHEMA_VERSION;
use std::path::PathBuf;

/// Errors of the results store. Each names the store's path; the SQLite error, if any, is the
/// source (printed by `{:#}`).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("results store {path}: directory {dir} does not exist; create it or choose another --store", path = .path.display(), dir = .dir.display())]
    MissingDir { path: PathBuf, dir: PathBuf },
    #[error("results store {path}: {file} is a file, not a directory; choose another --store", path = .path.display(), file = .file.display())]
    NotADirectory { path: PathBuf, file: PathBuf },
    #[error("results store {path}: {why}; choose a --store on a disk", path = .path.display())]
    NotStorage { path: PathBuf, why: String },
    #[error("results store {path}: its file name is {len} bytes, and SQLite's journal beside it adds 8 (\"-journal\") to what may be 255; choose a shorter --store", path = .path.display())]
    LongName { path: PathBuf, len: usize },
    #[error("results store {path}: creating directory {dir}", path = .path.display(), dir = .dir.display())]
    CreateDir {
        path: PathBuf,
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("results store {path}: putting the new store in place", path = .path.display())]
    Publish {
        path: PathBuf,
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
    #[error("results store {path}: SQLite kept journal mode {mode:?} instead of its rollback journal (another program holds it open in WAL mode?); close that program and try again", path = .path.display())]
    NoRollback { path: PathBuf, mode: String },
    #[error("no place for the results store: none of $IOGAUGE_STORE, $XDG_DATA_HOME and $HOME is set; pass --store PATH")]
    NoPath,
    #[error("campaign {campaign}: another `iogauge campaign` ({holder}) is running it on the results store {path}; wait for it to end or stop it (two runners would measure at the same time and spoil each other's runs)", path = .path.display())]
    CampaignBusy {
        path: PathBuf,
        campaign: String,
        holder: String,
    },
    #[error("campaign {campaign}: case {case:?} repetition {rep} is already stored complete in {path} (did another runner make it?)", path = .path.display())]
    RepetitionStored {
        path: PathBuf,
        campaign: String,
        case: String,
        rep: u32,
    },
    #[error("campaign lock {path}", path = .path.display())]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The lock file fails the trust rule (a link, another user's file), or could not be
    /// opened: its path and the way out.
    #[error("campaign {campaign}: its lock file {source}")]
    LockFile {
        campaign: String,
        source: iogauge_trust::TrustError,
    },
    #[error("results store {path}: run {id} cannot be read, its stored document is damaged ({source}); it was changed outside iogauge or the file is corrupt. The other runs are unaffected: pick another id from `iogauge history`", path = .path.display())]
    Document {
        path: PathBuf,
        id: i64,
        source: iogauge_model::DocError,
    },
    #[error("results store {path} does not exist, so nothing is stored there yet (`iogauge run`, `calibrate`, `db run` and `campaign` create it); check --store or $IOGAUGE_STORE", path = .path.display())]
    Missing { path: PathBuf },
    #[error("results store {path}: cannot write to it: {why}; {}", if *.full { "free space there, or choose another --store" } else { "choose another --store, or run as a user who may write there" }, path = .path.display())]
    CannotWrite {
        path: PathBuf,
        why: String,
        /// The filesystem is full: freeing space is the way out, not another path.
        full: bool,
    },
    #[error("results store {path}: cannot be read: {why}{}", .wal.as_ref().map_or(String::new(), |w| format!(", and its write-ahead log {} holds changes SQLite reads only through a shared-memory file beside it, which is not there and which a reader does not make; run any iogauge command on the store once as a user who can write there (it folds the log in), or copy the store and its -wal file to a writable directory", w.display())), path = .path.display())]
    CannotRead {
        path: PathBuf,
        why: String,
        wal: Option<PathBuf>,
    },
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
                | StoreError::NotADirectory { .. }
                | StoreError::NotStorage { .. }
                | StoreError::LongName { .. }
                | StoreError::NotAStore { .. }
                | StoreError::NewerSchema { .. }
                | StoreError::NoPath
                | StoreError::Missing { .. }
                | StoreError::CannotWrite { full: false, .. }
                | StoreError::LockFile {
                    source: iogauge_trust::TrustError::Refused { .. },
                    ..
                }
                // Nothing iogauge can do about a damaged run but another id can be shown.
                | StoreError::Document { .. }
        )
    }
}
