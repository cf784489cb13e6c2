//! `iogauge clean`'s flags.

use crate::usage::UsageError;
use clap::Args;
use std::path::PathBuf;

pub use crate::target::options::SCRATCH_DIR;

#[derive(Args, Debug)]
pub struct CleanArgs {
    /// Files or directories to clean: iogauge's files there are removed, every other file is
    /// left. Default: ./iogauge-scratch (where `run` and `calibrate` put their scratch file)
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// List what would be removed, and remove nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// The paths to clean, every one checked before anything is removed, and whether they are
/// the default (./iogauge-scratch, which may not exist: then there is nothing to clean).
pub fn paths(given: Vec<PathBuf>) -> Result<(Vec<PathBuf>, bool), UsageError> {
    if given.is_empty() {
        let dir = PathBuf::from(SCRATCH_DIR);
        let exists = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
        return Ok((if exists { vec![dir] } else { vec![] }, true));
    }
    for p in &given {
        if let Err(e) = std::fs::symlink_metadata(p) {
            return Err(UsageError(format!(
                "clean {}: {e}; give files or directories that exist",
                p.display()
            )));
        }
    }
    Ok((given, false))
}
