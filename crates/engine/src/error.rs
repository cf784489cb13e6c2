//! The engine's errors: each names what failed and what the user can do.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("io_uring is not available here ({0}); use --engine psync")]
    UringUnavailable(io::Error),
    #[error("io_uring on this kernel lacks {0}; use --engine psync")]
    UringOpcode(&'static str),
    #[error("io_uring setup failed: {0}")]
    UringSetup(io::Error),
    #[error("{dir} of {len} bytes at offset {offset} on {path} failed: {source}")]
    Io {
        path: PathBuf,
        dir: &'static str,
        offset: u64,
        len: u32,
        #[source]
        source: io::Error,
    },
    #[error(
        "{dir} at offset {offset} on {path} moved {got} of {len} bytes (did the target shrink?)"
    )]
    Short {
        path: PathBuf,
        dir: &'static str,
        offset: u64,
        len: u32,
        got: u32,
    },
    #[error("target {path}: {why}")]
    Region { path: PathBuf, why: String },
    #[error("cannot start worker thread: {0}")]
    Thread(io::Error),
    #[error("--layout: {0}")]
    Layout(String),
    /// A flag this machine cannot honour as written (the text names the flag and the way out).
    #[error("{0}")]
    Unsupported(String),
    #[error("cannot map {bytes} bytes of I/O buffers: {source}; lower --qd, --workers or --bs")]
    Memory {
        bytes: u64,
        #[source]
        source: io::Error,
    },
}

impl EngineError {
    /// True when the command line asked for something impossible as written (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            EngineError::Region { .. } | EngineError::Layout(_) | EngineError::Unsupported(_)
        )
    }
}
