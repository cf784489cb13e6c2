//! Why a path was refused, or the I/O error met while judging it.

use std::io;
use std::path::PathBuf;

/// Why a path was refused, or the I/O error met while judging it.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The path fails the rule or is not what iogauge keeps there; `why` ends the sentence
    /// that starts with the path and says the way out.
    #[error("{}: {why}", path.display())]
    Refused { path: PathBuf, why: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl TrustError {
    pub(crate) fn refused(path: impl Into<PathBuf>, why: impl Into<String>) -> TrustError {
        TrustError::Refused {
            path: path.into(),
            why: why.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> TrustError {
        TrustError::Io {
            path: path.into(),
            source,
        }
    }

    /// Whether the path was simply not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, TrustError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}
