//! What can go wrong reading results back, and which of it is the user's to fix.

use super::gather::GatherError;
use iogauge_campaign::digest::DigestError;
use iogauge_store::StoreError;

/// Why `report`, `export`, `compare` or a campaign's run line could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The command line names something that is not there or asks for what cannot be
    /// done: a result given twice, no such run, case or campaign, runs of two kinds.
    #[error("{0}")]
    Usage(String),
    /// A campaign run the store lists but does not hold.
    #[error("{0}")]
    NotStored(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Gather(#[from] GatherError),
    #[error(transparent)]
    Digest(#[from] DigestError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

impl ReadError {
    /// Whether the command line cannot work as written (exit code 2).
    pub fn is_usage(&self) -> bool {
        match self {
            ReadError::Usage(_) => true,
            ReadError::Store(s) => s.is_usage(),
            ReadError::Gather(g) => g.is_usage(),
            _ => false,
        }
    }
}

/// `Err(ReadError::Usage(msg))`.
pub(super) fn usage<T>(msg: String) -> Result<T, ReadError> {
    Err(ReadError::Usage(msg))
}
