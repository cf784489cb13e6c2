//! Whether a directory holds a private cluster of iogauge's, whether its setup finished, and
//! the error that names `--dir` when there is none.

use crate::common::place::a_dir;
use crate::error::DbError;
use crate::postgres::server::marker::MARKER;
use std::path::Path;

/// A private cluster is one iogauge created: its marker file is there (whatever it is: a link
/// or a FIFO there is refused by the open that follows, never followed).
pub fn has_cluster(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(MARKER)).is_ok()
}

/// Whether the setup of the cluster in `dir` finished: its pristine copy, taken last, is
/// whole. One killed before (SIGKILL, a power cut) left a cluster `db setup` replaces.
pub fn setup_finished(dir: &Path) -> bool {
    crate::postgres::server::files::has_pristine(dir)
}

/// The error for a `--dir` without an iogauge cluster.
pub fn no_cluster(dir: &Path) -> DbError {
    if a_dir("--dir", dir).is_err() || dir.is_file() {
        return DbError::Usage(format!(
            "--dir {}: not a directory, so no iogauge cluster there; give the directory `iogauge db setup --dir` made",
            dir.display()
        ));
    }
    DbError::Usage(format!(
        "--dir {}: no iogauge cluster there; create one with `iogauge db setup --dir {}`",
        dir.display(),
        dir.display()
    ))
}
