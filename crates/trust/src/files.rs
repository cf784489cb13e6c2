//! File operations that keep to the rule: reads that never follow a link or block on a FIFO
//! and stop at a bound, writes that never go through what is at a path (a link, a hard link
//! to someone's file), directories checked once and then used through their descriptor.

use crate::error::TrustError;
use crate::rule::{Kind, Trust};
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The file at `path` if it is a regular file of at most `limit` bytes: opened without
/// following a symlink there and without blocking (a FIFO put in its place), judged by the
/// descriptor (not what the path holds a moment later), read to at most `limit` bytes.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, TrustError> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| not_followed(path, e, "file"))?;
    let m = f.metadata().map_err(|e| TrustError::io(path, e))?;
    if !m.is_file() {
        return Err(TrustError::refused(
            path,
            "not a regular file (a FIFO, socket or device?) where iogauge keeps one; remove it",
        ));
    }
    let mut buf = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| TrustError::io(path, e))?;
    if buf.len() as u64 > limit {
        return Err(TrustError::refused(
            path,
            format!("larger than {limit} bytes, so not a file iogauge wrote; remove it"),
        ));
    }
    Ok(buf)
}

/// An open that failed on a symbolic link (`O_NOFOLLOW` gives ELOOP, `O_DIRECTORY` ENOTDIR)
/// says so; other errors pass as they are.
fn not_followed(path: &Path, e: io::Error, what: &str) -> TrustError {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match e.raw_os_error() {
        Some(libc::ELOOP | libc::ENOTDIR) if link => TrustError::refused(
            path,
            format!("a symbolic link where iogauge keeps a {what}; refusing to follow it (someone replaced it: remove the link)"),
        ),
        Some(libc::ENOTDIR) if what == "directory" => TrustError::refused(
            path,
            "not a directory where iogauge keeps one; refusing to use it (remove it)",
        ),
        _ => TrustError::io(path, e),
    }
}

/// Replaces `path` with `bytes` (mode `mode`, owned by `owner` if given) without writing
/// through whatever is there: a new file beside it, renamed over it. A symlink or a hard link
/// left at `path` is replaced, never followed.
pub fn replace_file(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> Result<(), TrustError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.iogauge-tmp"));
    let written = (|| -> io::Result<()> {
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::fchown(&f, Some(uid), Some(gid))?;
        }
        std::fs::rename(&tmp, path)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        TrustError::io(path, e)
    })
}

/// The directory at `path`, opened without following a symlink there.
pub fn open_dir(path: &Path) -> Result<File, TrustError> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
        .open(path)
        .map_err(|e| not_followed(path, e, "directory"))
}

/// Gives the directory `path` to `owner` with `mode`, through a descriptor opened without
/// following a symlink: a directory swapped for a link is refused, its target untouched.
pub fn chown_dir(
    path: &Path,
    owner: Option<(u32, u32)>,
    mode: Option<u32>,
) -> Result<(), TrustError> {
    let f = open_dir(path)?;
    let set = || -> io::Result<()> {
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::fchown(&f, Some(uid), Some(gid))?;
        }
        if let Some(m) = mode {
            f.set_permissions(std::fs::Permissions::from_mode(m))?;
        }
        Ok(())
    };
    set().map_err(|e| TrustError::io(path, e))
}

/// `path` with the directories above it resolved ([`crate::resolve`]) but not its last
/// part: a link there is iogauge's to refuse, never to follow to a place someone chose.
fn resolve_above(path: &Path) -> Result<PathBuf, TrustError> {
    let resolved =
        std::path::absolute(path).and_then(|abs| match (abs.parent(), abs.file_name()) {
            (Some(dir), Some(name)) => crate::resolve(dir).map(|d| d.join(name)),
            _ => crate::resolve(&abs),
        });
    resolved.map_err(|e| TrustError::io(path, e))
}

/// A directory iogauge keeps files in (`live/` beside the store), made (0755) if missing,
/// opened without following a link and judged by its descriptor: it and every directory
/// above it pass the rule. Files go in with [`create_in`].
pub fn trusted_dir(path: &Path) -> Result<File, TrustError> {
    let path = &resolve_above(path)?;
    let trust = Trust::new(None);
    trust.check_above(path)?;
    match std::fs::DirBuilder::new().mode(0o755).create(path) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(TrustError::io(path, e)),
        _ => {}
    }
    let dir = open_dir(path)?;
    trust.check_open(path, &dir, Kind::Dir, false)?;
    Ok(dir)
}

/// Creates (or truncates) the file `name` in `dir`, a directory from [`trusted_dir`], for
/// writing, with `mode`: relative to the checked directory, never through a link.
pub fn create_in(dir: &File, dir_path: &Path, name: &str, mode: u32) -> Result<File, TrustError> {
    let path = dir_path.join(name);
    let c = CString::new(Path::new(name).as_os_str().as_bytes())
        .map_err(|e| TrustError::io(&path, e.into()))?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: openat(2) on a live directory descriptor with a NUL-terminated name.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(not_followed(&path, io::Error::last_os_error(), "file"));
    }
    // SAFETY: fd is a new descriptor this process owns and nothing else holds.
    let f = unsafe { File::from_raw_fd(fd) };
    Trust::new(None).check_open(&path, &f, Kind::File, false)?;
    Ok(f)
}

/// Opens the file at `path` to read and write, creating it (with `mode`) if missing, never
/// truncating it: a lock file beside the results store, in a directory other users may write
/// to if it is sticky (/tmp), as StrictModes allows the directories above a file.
///
/// Judged as [`create_in`] judges: every directory above passes the rule, the file is opened
/// relative to its directory's descriptor without following a link or blocking (a FIFO), and
/// the descriptor is a regular file of root's or this user's that no other may write. And it
/// has one name: a hard link another user made in a sticky directory to a file of root's
/// (where `fs.protected_hardlinks` is off) would pass the owner's test.
pub fn open_beside(path: &Path, mode: u32) -> Result<File, TrustError> {
    let path = &resolve_above(path)?;
    let trust = Trust::new(None);
    trust.check_above(path)?;
    let (Some(dir_path), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(TrustError::refused(path, "not a file name"));
    };
    let dir = open_dir(dir_path)?;
    let c = CString::new(name.as_bytes()).map_err(|e| TrustError::io(path, e.into()))?;
    let flags =
        libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    // SAFETY: openat(2) on a live directory descriptor with a NUL-terminated name.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        // The rule's reason where it has one: a link, or another user's file (which
        // `fs.protected_regular` keeps root from opening with O_CREAT in a sticky directory).
        return Err(match trust.check(path, Kind::File, false) {
            Err(refused @ TrustError::Refused { .. }) => refused,
            _ => not_followed(path, e, "file"),
        });
    }
    // SAFETY: fd is a new descriptor this process owns and nothing else holds.
    let f = unsafe { File::from_raw_fd(fd) };
    trust.check_open(path, &f, Kind::File, false)?;
    let links = f.metadata().map_err(|e| TrustError::io(path, e))?.nlink();
    if links != 1 {
        return Err(TrustError::refused(
            path,
            format!("a file with {links} names (hard links), not one iogauge made; remove it"),
        ));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_reads_refuse_links_fifos_and_endless_files() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, "abc").unwrap();
        assert_eq!(read_bounded(&f, 3).unwrap(), b"abc");
        let e = read_bounded(&f, 2).unwrap_err().to_string();
        assert!(e.contains("larger than 2 bytes"), "{e}");
        let zero = d.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read_bounded(&zero, 1 << 20).unwrap_err().to_string();
        assert!(
            e.contains("a symbolic link where iogauge keeps a file"),
            "{e}"
        );
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let fifo = d.path().join("fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would hang here.
        let e = read_bounded(&fifo, 10).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        assert!(read_bounded(&d.path().join("none"), 1)
            .unwrap_err()
            .is_not_found());
    }

    #[test]
    fn files_in_a_trusted_directory_are_never_written_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let live = d.path().join("live");
        let dir = trusted_dir(&live).unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, live.join("1.jsonl")).unwrap();
        let e = create_in(&dir, &live, "1.jsonl", 0o644)
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let mut f = create_in(&dir, &live, "2.jsonl", 0o644).unwrap();
        f.write_all(b"x").unwrap();
        assert_eq!(std::fs::read_to_string(live.join("2.jsonl")).unwrap(), "x");
        // A link where the directory should be is refused, its target untouched.
        let other = d.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o700)).unwrap();
        let l = d.path().join("live2");
        std::os::unix::fs::symlink(&other, &l).unwrap();
        assert!(open_dir(&l)
            .unwrap_err()
            .to_string()
            .contains("symbolic link"));
        // Nor a link at the directory's own path, to a directory that would pass.
        let e = trusted_dir(&l).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = trusted_dir(&open).unwrap_err().to_string();
        assert!(e.contains("mode 0777"), "{e}");
    }

    #[test]
    fn a_file_beside_is_opened_unless_a_link_or_a_second_name() {
        let d = tempfile::tempdir().unwrap();
        // A sticky directory anyone may write to, as /tmp.
        let tmp = d.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let lock = tmp.join("s.lock");
        let mut f = open_beside(&lock, 0o644).unwrap();
        f.write_all(b"1").unwrap();
        drop(f);
        // Opened again as it is, not truncated.
        let mut text = String::new();
        open_beside(&lock, 0o644)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "1");
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = tmp.join("link.lock");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = open_beside(&link, 0o644).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let hard = tmp.join("hard.lock");
        std::fs::hard_link(&victim, &hard).unwrap();
        let e = open_beside(&hard, 0o644).unwrap_err().to_string();
        assert!(e.contains("2 names (hard links)"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let fifo = tmp.join("fifo.lock");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_beside(&fifo, 0o644).unwrap_err().to_string();
        assert!(e.contains("not a file but a FIFO"), "{e}");
    }
}
