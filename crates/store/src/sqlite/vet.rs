//! What is at the store's path, judged before SQLite opens it (SQLite would claim an empty
//! file, follow a link anywhere, and create a missing file even for a reader), and why a
//! store cannot be written when SQLite fails: a read-only mount, another user's file or
//! directory, a full filesystem, named instead of "unable to open database file".

use super::error::StoreError;
use super::locate::{identity_of_header, read_header, Identity};
use super::schema::SCHEMA_VERSION;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// What the path holds, when it may be used.
#[derive(Debug, PartialEq)]
pub(super) enum Found {
    /// Nothing: a writer creates the store, a reader has nothing to read.
    Missing,
    /// An iogauge store, or an SQLite database without tables to make one of.
    Present,
}

/// Looks at `path` without changing anything: a missing path, or a store (or an empty SQLite
/// database) as a regular file. Refused, each left untouched: a file that is not SQLite, an
/// empty file (iogauge creates its store whole under another name, so an empty file at the
/// path was never one of its stores), another program's database, a newer schema, and a
/// symbolic link unless it leads to an iogauge store (a link to a user's file turned that
/// file into a store, issue #25 row 21).
pub(super) fn vet(path: &Path) -> Result<Found, StoreError> {
    let refuse = |what: String| StoreError::NotAStore {
        path: path.into(),
        what,
    };
    let read = |source| StoreError::Read {
        path: path.into(),
        source,
    };
    let link = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) if e.kind() == ErrorKind::NotADirectory => {
            return Err(match file_in_the_way(path) {
                Some(file) => StoreError::NotADirectory {
                    path: path.into(),
                    file,
                },
                None => read(e),
            })
        }
        Err(e) => return Err(read(e)),
        Ok(m) => m.file_type().is_symlink(),
    };
    let shown = |what: &str| match std::fs::read_link(path) {
        Ok(to) if link => format!("a symbolic link to {} ({what})", to.display()),
        _ => what.to_string(),
    };
    if link && !path.exists() {
        return Err(refuse(shown("which does not exist")));
    }
    if let Some(kind) = not_a_file(path) {
        return Err(refuse(shown(kind)));
    }
    let header = read_header(path).map_err(read)?.unwrap_or_default();
    if header.is_empty() {
        return Err(refuse(shown(
            "an empty file; iogauge creates its store whole, so this file is not one: remove it if it is left over",
        )));
    }
    match identity_of_header(&header) {
        Identity::Foreign(what) => Err(refuse(shown(&what))),
        Identity::Ours { version } if version > SCHEMA_VERSION => Err(StoreError::NewerSchema {
            path: path.into(),
            found: version,
        }),
        Identity::Ours { .. } => Ok(Found::Present),
        // An SQLite database with nothing in it is claimed where it is named, never through
        // a link: the link's target is someone's file, not a store.
        Identity::Empty if link => Err(refuse(shown(
            "an SQLite database that is not an iogauge store; give the store's own path",
        ))),
        Identity::Empty => Ok(Found::Present),
    }
}

/// What `path` is when it exists and is not a regular file (links followed).
pub(super) fn not_a_file(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::metadata(path).ok()?.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

/// The directory of the store at `path`, where a store can be written: it exists, and is
/// not on one of the kernel's filesystems; a file where one of its directories should be is
/// named. And the store's name leaves room for its journal's.
pub(super) fn store_dir(path: &Path) -> Result<PathBuf, StoreError> {
    // SQLite's journal, `NAME-journal`, is a file name too.
    let name = path.file_name().map_or(0, |n| n.len());
    if name + "-journal".len() > crate::names::NAME_MAX {
        return Err(StoreError::LongName {
            path: path.into(),
            len: name,
        });
    }
    let dir = dir_of(path);
    if !dir.is_dir() {
        return Err(match file_in_the_way(path) {
            Some(file) => StoreError::NotADirectory {
                path: path.into(),
                file,
            },
            None => StoreError::MissingDir {
                path: path.into(),
                dir,
            },
        });
    }
    match not_storage(&dir) {
        Some(why) => Err(StoreError::NotStorage {
            path: path.into(),
            why,
        }),
        None => Ok(dir),
    }
}

/// The directory `path` is in (`.` for a bare name).
pub(super) fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The file SQLite keeps beside the store at `path` with this suffix (`-wal`, `-shm`,
/// `-journal`): beside the file a link leads to, as SQLite puts it.
pub(super) fn beside(path: &Path, suffix: &str) -> PathBuf {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut name = real.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    dir_of(&real).join(name)
}

/// Why the store at `path` (or a new one there) cannot be written, when the filesystem says:
/// `(reason, full)`, `full` when freeing space is the way out rather than another path.
pub(super) fn why_unwritable(path: &Path) -> Option<(String, bool)> {
    use rustix::fs::{access, statvfs, Access, StatVfsMountFlags};
    let (real, dir) = where_written(path);
    if let Some(why) = not_storage(&dir) {
        return Some((why, false));
    }
    let vfs = statvfs(&dir).ok();
    if vfs
        .as_ref()
        .is_some_and(|v| v.f_flag.contains(StatVfsMountFlags::RDONLY))
    {
        return Some((
            format!("{} is on a read-only filesystem", dir.display()),
            false,
        ));
    }
    let denied = |p: &Path, how| matches!(access(p, how), Err(e) if e == rustix::io::Errno::ACCESS || e == rustix::io::Errno::PERM);
    if real.exists() && denied(&real, Access::WRITE_OK) {
        return Some((
            format!("{} is not writable by this user", real.display()),
            false,
        ));
    }
    if denied(&dir, Access::WRITE_OK | Access::EXEC_OK) {
        return Some((
            format!(
                "its directory {} is not writable by this user, and SQLite keeps its journal there",
                dir.display()
            ),
            false,
        ));
    }
    // Root may use the blocks ext4 keeps back from other users (f_bfree, not f_bavail). No
    // inodes left counts too, where the filesystem counts them (btrfs reports 0 of 0).
    // SAFETY: geteuid(2) cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let no_room = |v: &rustix::fs::StatVfs| {
        (if root { v.f_bfree } else { v.f_bavail }) == 0 || (v.f_files > 0 && v.f_favail == 0)
    };
    if vfs.as_ref().is_some_and(no_room) {
        return Some((full(&dir), true));
    }
    None
}

/// The file a link at `path` leads to, or where a new store would be, and its directory:
/// SQLite's files go there.
fn where_written(path: &Path) -> (PathBuf, PathBuf) {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| {
        let dir = std::fs::canonicalize(dir_of(path)).unwrap_or_else(|_| dir_of(path));
        dir.join(path.file_name().unwrap_or_default())
    });
    let dir = dir_of(&real);
    (real, dir)
}

/// "the filesystem of DIR is full".
fn full(dir: &Path) -> String {
    format!("the filesystem of {} is full", dir.display())
}

/// The error of a write SQLite failed (`op`): the filesystem's cause where it names one. A
/// full filesystem is said so when SQLite says so (SQLITE_FULL), also while a few blocks are
/// free, too few for the transaction.
pub(super) fn write_failed(path: &Path, op: &'static str, source: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode::{CannotOpen, DiskFull, ReadOnly, SystemIoFailure};
    let cause = match source.sqlite_error_code() {
        Some(DiskFull) => Some((full(&where_written(path).1), true)),
        Some(CannotOpen | ReadOnly | SystemIoFailure) => why_unwritable(path),
        _ => None,
    };
    match cause {
        Some((why, full)) => StoreError::CannotWrite {
            path: path.into(),
            why,
            full,
        },
        None => StoreError::Sqlite {
            path: path.into(),
            op,
            source,
        },
    }
}

/// Why the directory `dir` is no place for a store: on one of the kernel's own filesystems
/// (/proc, /sys, cgroupfs…), which hold no files of anyone's and report no free blocks.
pub(super) fn not_storage(dir: &Path) -> Option<String> {
    match iogauge_probe::fs_of_nearest(dir) {
        Ok((_, fs)) if fs.is_kernel_interface() => Some(format!(
            "{} is on {}, the kernel's interface, not storage",
            dir.display(),
            fs.name
        )),
        _ => None,
    }
}

/// The file standing where a directory of `path` should be (`/etc/passwd` in
/// `/etc/passwd/x.sqlite`): the nearest of its directories that exists, if that is not one.
pub(super) fn file_in_the_way(path: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(path).ok()?;
    let (nearest, is_dir) = abs
        .ancestors()
        .skip(1)
        .find_map(|a| std::fs::metadata(a).ok().map(|m| (a, m.is_dir())))?;
    (!is_dir).then(|| nearest.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_links_and_empty_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.sqlite");
        assert_eq!(vet(&p).unwrap(), Found::Missing);
        std::fs::write(&p, "").unwrap();
        let e = vet(&p).unwrap_err().to_string();
        assert!(e.contains("an empty file"), "{e}");
        let link = d.path().join("link.sqlite");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        let e = vet(&link).unwrap_err().to_string();
        assert!(e.contains("a symbolic link to"), "{e}");
        let dangling = d.path().join("dangling.sqlite");
        std::os::unix::fs::symlink(d.path().join("none"), &dangling).unwrap();
        let e = vet(&dangling).unwrap_err().to_string();
        assert!(e.contains("which does not exist"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"", "left untouched");
    }
}
