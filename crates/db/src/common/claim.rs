//! A private server's directory made iogauge's: claimed (created, or an empty one accepted,
//! under the trust rule of `iogauge-trust`), locked by one process through its marker, and
//! what iogauge created removed again. Each engine keeps its own marker in it
//! (`postgres::server::marker`, `mariadb::dir`).

use crate::error::DbError;
use iogauge_trust::{Kind, Trust};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Locks the server in `dir` for this process: an exclusive flock on its marker `name`,
/// opened for reading and appending, never through a link or blocking on a FIFO; released
/// when the file closes (also when the process dies).
pub fn lock_marker(dir: &Path, name: &str) -> Result<File, DbError> {
    let p = dir.join(name);
    let f = OpenOptions::new()
        .read(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&p)
        .map_err(|e| DbError::io(&p, e))?;
    // SAFETY: flock on an open fd.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(DbError::dir(dir, "in use by another iogauge process"));
    }
    Ok(f)
}

/// Removes the empty directories from `path` up to `top`, which iogauge created; one that
/// holds something (a file the user put there since) stays, and so do those above it.
pub fn remove_made(path: &Path, top: &Path) {
    for a in path.ancestors().take_while(|a| a.starts_with(top)) {
        if std::fs::remove_dir(a).is_err() && a.exists() {
            return;
        }
    }
}

/// Makes `dir` iogauge's: creates it (returning the outermost directory created), or
/// accepts an existing empty one (`None`). Refuses a non-empty directory, one that already
/// holds an iogauge server (its `marker`), or one another user could change.
pub fn claim_dir(dir: &Path, trust: &Trust, marker: &str) -> Result<Option<PathBuf>, DbError> {
    not_a_dir_above(dir)?;
    trust.check_above(dir)?;
    match std::fs::read_dir(dir) {
        Ok(mut rd) => {
            trust.check(dir, Kind::Dir, false)?;
            if std::fs::symlink_metadata(dir.join(marker)).is_ok() {
                return Err(DbError::dir(
                    dir,
                    "already holds an iogauge cluster; reset or drop it first",
                ));
            }
            if rd.next().is_some() {
                return Err(DbError::dir(
                    dir,
                    "not empty and not created by iogauge; refusing to use it (choose an empty or new directory)",
                ));
            }
            Ok(None)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => make_dirs(dir).map(Some),
        Err(e) => Err(DbError::io(dir, e)),
    }
}

/// The nearest existing path at or above `p` must be a directory.
pub(crate) fn not_a_dir_above(p: &Path) -> Result<(), DbError> {
    match p.ancestors().find(|a| std::fs::symlink_metadata(a).is_ok()) {
        Some(a) if !a.is_dir() => Err(DbError::dir(
            a,
            "not a directory; give a new directory or an empty one",
        )),
        _ => Ok(()),
    }
}

/// Creates `dir` and the missing directories above it, one by one (a directory that appears
/// meanwhile is someone else's: refused), 0755; returns the outermost one created.
pub(crate) fn make_dirs(dir: &Path) -> Result<PathBuf, DbError> {
    let missing: Vec<&Path> = dir
        .ancestors()
        .take_while(|a| std::fs::symlink_metadata(a).is_err())
        .collect();
    let mut made: Vec<&Path> = Vec::new();
    for d in missing.iter().rev() {
        if let Err(e) = std::fs::DirBuilder::new().mode(0o755).create(d) {
            for m in made.iter().rev() {
                let _ = std::fs::remove_dir(m);
            }
            return Err(DbError::io(d, e));
        }
        made.push(d);
    }
    Ok(made
        .first()
        .map_or_else(|| dir.to_path_buf(), |d| d.to_path_buf()))
}

/// Where a private server's parts live in its directory, whichever engine's: its data
/// (`data/`), its socket (`run/`) and its log (`server.log`) beside the engine's marker.
pub trait ServerDir {
    /// The directory iogauge made for the server.
    fn root(&self) -> &Path;

    fn data_dir(&self) -> PathBuf {
        self.root().join("data")
    }

    fn run_dir(&self) -> PathBuf {
        self.root().join("run")
    }

    fn log_path(&self) -> PathBuf {
        self.root().join("server.log")
    }
}
