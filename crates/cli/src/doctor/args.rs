//! `iogauge doctor`'s flags.

use crate::usage::UsageError;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// The directory whose filesystem is checked for O_DIRECT (where the targets will be).
    /// Default: the current directory
    #[arg(long, value_name = "DIR")]
    pub target: Option<PathBuf>,
    /// The checks as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `--target`: an existing directory (a file or device names its directory).
pub fn target_dir(target: Option<&Path>) -> Result<PathBuf, UsageError> {
    let Some(t) = target else {
        return Ok(PathBuf::from("."));
    };
    match std::fs::metadata(t) {
        Ok(m) if m.is_dir() => Ok(t.to_path_buf()),
        Ok(_) => Ok(t
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)),
        Err(e) => Err(UsageError(format!(
            "--target {}: {e}; give the directory the targets will be in",
            t.display()
        ))),
    }
}
