//! The mark iogauge leaves on files it created, so it knows later that writing to them
//! destroys nobody's data. The mark also records how much of the file was pre-filled, so a
//! fill cut short by a crash is finished on the next run.
//!
//! The mark is an extended attribute (`user.iogauge`), which stays with the inode: a user who
//! replaces the file with their own loses the mark. Filesystems without user xattrs get a
//! hidden sidecar file `.NAME.iogauge` that names the inode it belongs to.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

const XATTR: &[u8] = b"user.iogauge\0";
const PREFIX: &str = "iogauge v1 filled=";

fn sidecar(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.iogauge"))
}

/// Marks `file` (at `path`) as iogauge's, pre-filled up to `filled` bytes.
pub fn set(file: &File, path: &Path, filled: u64) -> io::Result<()> {
    let value = format!("{PREFIX}{filled}");
    // SAFETY: the fd is open, the name is NUL-terminated and `value` is valid for its length.
    let rc = unsafe {
        libc::fsetxattr(
            file.as_raw_fd(),
            XATTR.as_ptr().cast(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOTSUP) {
        return Err(e);
    }
    let ino = file.metadata()?.ino();
    std::fs::write(sidecar(path), format!("{value} ino={ino}\n"))
}

/// Bytes pre-filled if `file` carries iogauge's mark; `None` if it does not.
pub fn get(file: &File, path: &Path) -> Option<u64> {
    let mut buf = [0u8; 64];
    // SAFETY: the fd is open, the name is NUL-terminated and `buf` is writable for its length.
    let n = unsafe {
        libc::fgetxattr(
            file.as_raw_fd(),
            XATTR.as_ptr().cast(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n >= 0 {
        return parse(std::str::from_utf8(&buf[..n as usize]).ok()?, None);
    }
    let ino = file.metadata().ok()?.ino();
    let text = std::fs::read_to_string(sidecar(path)).ok()?;
    parse(text.trim(), Some(ino))
}

/// Parses `iogauge v1 filled=N[ ino=I]`; with `ino`, the sidecar must name that inode.
fn parse(text: &str, ino: Option<u64>) -> Option<u64> {
    let rest = text.strip_prefix(PREFIX)?;
    let mut parts = rest.split(' ');
    let filled = parts.next()?.parse().ok()?;
    match ino {
        None => Some(filled),
        Some(want) => {
            let got: u64 = parts.next()?.strip_prefix("ino=")?.parse().ok()?;
            (got == want).then_some(filled)
        }
    }
}

pub fn remove_sidecar(path: &Path) {
    let _ = std::fs::remove_file(sidecar(path));
}

/// Whether `path` exists and carries the mark (used by tests and by `--allow-overwrite` checks).
pub fn is_marked(path: &Path) -> bool {
    File::open(path).ok().and_then(|f| get(&f, path)).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        assert_eq!(parse("iogauge v1 filled=4096", None), Some(4096));
        assert_eq!(parse("iogauge v1 filled=4096 ino=7", Some(7)), Some(4096));
        assert_eq!(
            parse("iogauge v1 filled=4096 ino=7", Some(8)),
            None,
            "another inode"
        );
        assert_eq!(parse("iogauge v1 filled=4096", Some(7)), None);
        assert_eq!(parse("something else", None), None);
        assert_eq!(parse("iogauge v1 filled=x", None), None);
    }

    #[test]
    fn mark_round_trip_on_a_real_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let f = File::create(&p).unwrap();
        assert_eq!(get(&f, &p), None);
        set(&f, &p, 8192).unwrap();
        assert_eq!(get(&f, &p), Some(8192));
        assert!(is_marked(&p));
    }
}
