//! A session's errors, each one line that names what failed and what is kept.

use iogauge_store::StoreError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The command line cannot work as written over ranks (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error("installing the Ctrl-C handler")]
    Signal(#[source] std::io::Error),
    #[error("${var} is set by `iogauge campaign` only; unset it")]
    Tag {
        var: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The result could not be stored; `printed` says whether it reached stdout instead.
    #[error("{}", if *.printed { "the result is printed on stdout but not stored" } else { "the result could be neither stored nor printed" })]
    NotStored {
        printed: bool,
        #[source]
        source: StoreError,
    },
    /// A rank other than 0 of a job over ranks has no store: its part went to rank 0.
    #[error("only rank 0 stores the job's result")]
    NotLead,
    /// Stored, but stdout failed (a full disk, a reader that went away).
    #[error("writing the result to stdout: {source}; the run is stored as run {id} in {}: `iogauge show {id}`", .path.display())]
    Output {
        id: i64,
        path: PathBuf,
        source: std::io::Error,
    },
}

impl SessionError {
    /// Whether the user can fix this by choosing another path (exit code 2).
    pub fn is_usage(&self) -> bool {
        match self {
            SessionError::Usage(_) => true,
            SessionError::Store(s) => s.is_usage(),
            _ => false,
        }
    }
}
