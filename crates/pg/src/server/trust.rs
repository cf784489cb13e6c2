//! Who may have written the paths iogauge acts on. As root, iogauge runs the PostgreSQL
//! binaries its marker names, removes the directories the marker lists and hands its socket
//! directory to the server's account: a path another user can change would let that user
//! choose what root runs, removes or gives away. The rule is OpenSSH's StrictModes:
//!
//! - a path is owned by root or the user running iogauge (the server's account may own what
//!   PostgreSQL works in: `data/`, `run/`, the WAL and tablespace directories), and no group
//!   or other user may write to it;
//! - so is each directory above it, except that one with the sticky bit (`/tmp`) may be
//!   writable by others: they cannot rename or remove what is not theirs there;
//! - a path is judged where it really is: [`resolve`] follows the symlinks above it once,
//!   and the resolved path is used from then on; a symlink where iogauge made a directory
//!   or a file is refused, never followed.
//!
//! The helpers below write and chown without following a symlink either (files the server's
//! account could swap for links in `data/`).

use crate::error::PgError;
use crate::server::postmaster::user_name;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// The accounts a path may belong to: root, the user running iogauge and, where PostgreSQL
/// works, the server's account.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Trust {
    me: u32,
    server: Option<u32>,
}

/// What a path may be.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File,
    /// The socket directory: iogauge sets its mode itself before every start (closing one an
    /// older iogauge left open), so only its owner matters.
    SocketDir,
}

impl Trust {
    /// Root and this process's user; with `server`, that account too where PostgreSQL works.
    pub fn new(server: Option<u32>) -> Trust {
        // SAFETY: geteuid(2) cannot fail.
        let me = unsafe { libc::geteuid() };
        Trust { me, server }
    }

    fn owner_ok(&self, uid: u32, server_may_own: bool) -> bool {
        uid == 0 || uid == self.me || (server_may_own && self.server == Some(uid))
    }

    /// "root", "root or alice", "root or postgres": who may own such a path.
    fn allowed(&self, server_may_own: bool) -> String {
        let mut who = vec!["root".to_string()];
        let mut add = |uid: u32| {
            let n = name(uid);
            if uid != 0 && !who.contains(&n) {
                who.push(n);
            }
        };
        add(self.me);
        if let Some(s) = self.server.filter(|_| server_may_own) {
            add(s);
        }
        match who.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => who.join(""),
        }
    }

    /// `path` itself, not followed if it is a symlink: of `kind`, owned as allowed, not
    /// writable by group or others.
    pub fn check(&self, path: &Path, kind: Kind, server_may_own: bool) -> Result<(), PgError> {
        let m = std::fs::symlink_metadata(path).map_err(|e| PgError::io(path, e))?;
        let what = if kind == Kind::File {
            "file"
        } else {
            "directory"
        };
        if m.file_type().is_symlink() {
            return Err(PgError::dir(
                path,
                format!("a symbolic link where iogauge keeps a {what}; refusing to follow it (someone replaced it: remove the link)"),
            ));
        }
        if (kind == Kind::File) != m.is_file() || (kind != Kind::File && !m.is_dir()) {
            return Err(PgError::dir(path, format!("not a {what}")));
        }
        let checked = if kind == Kind::SocketDir {
            self.owned(path, &m, server_may_own)
        } else {
            self.owned_and_closed(path, &m, server_may_own, false)
        };
        checked.map_err(|why| PgError::dir(path, why))
    }

    /// Every directory above `path` (a resolved path: no symlinks above it): owned by root or
    /// this user, and not writable by others unless sticky. Ones that do not exist yet (iogauge
    /// will create them) are skipped.
    pub fn check_above(&self, path: &Path) -> Result<(), PgError> {
        for a in path.ancestors().skip(1) {
            let m = match std::fs::symlink_metadata(a) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(PgError::io(a, e)),
            };
            let why = if m.file_type().is_symlink() {
                Some("a symbolic link (it changed while iogauge looked)".to_string())
            } else {
                self.owned_and_closed(a, &m, false, true).err()
            };
            if let Some(why) = why {
                return Err(PgError::dir(
                    path,
                    format!("the directory above it, {}, is {why}", a.display()),
                ));
            }
        }
        Ok(())
    }

    /// [`Trust::check_above`], then the path itself if it exists.
    pub fn check_tree(&self, path: &Path, kind: Kind, server_may_own: bool) -> Result<(), PgError> {
        self.check_above(path)?;
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            _ => self.check(path, kind, server_may_own),
        }
    }

    /// The owner of one path.
    fn owned(&self, path: &Path, m: &Metadata, server_may_own: bool) -> Result<(), String> {
        if self.owner_ok(m.uid(), server_may_own) {
            return Ok(());
        }
        let me = name(self.me);
        Err(format!(
            "owned by {} (uid {}), not by {}: that user could change what iogauge does there \
             as {me}; use a directory of {me}'s or `chown {me} {}`",
            name(m.uid()),
            m.uid(),
            self.allowed(server_may_own),
            path.display()
        ))
    }

    /// Owner and mode of one path; `sticky_ok`: a directory above may be writable by others
    /// when sticky. The reason, as the end of a sentence, if not.
    fn owned_and_closed(
        &self,
        path: &Path,
        m: &Metadata,
        server_may_own: bool,
        sticky_ok: bool,
    ) -> Result<(), String> {
        self.owned(path, m, server_may_own)?;
        let me = name(self.me);
        let mode = m.permissions().mode();
        let sticky = sticky_ok && m.is_dir() && mode & libc::S_ISVTX != 0;
        if mode & 0o022 != 0 && !sticky {
            let by = match mode & 0o022 {
                0o020 => "its group",
                0o002 => "every user",
                _ => "its group and every user",
            };
            return Err(format!(
                "writable by {by} (mode {:04o}): they could change what iogauge does there \
                 as {me}; `chmod go-w {}` or use another directory",
                mode & 0o7777,
                path.display()
            ));
        }
        Ok(())
    }
}

/// A user's name, or `uid N` without one.
fn name(uid: u32) -> String {
    user_name(uid).unwrap_or_else(|| format!("uid {uid}"))
}

/// Where `p` really is: absolute, the symlinks in its existing part resolved, the rest (to be
/// created) appended with `.` and `..` taken lexically. Two spellings of one directory (a
/// symlink, `a/../b`) resolve alike.
pub fn resolve(p: &Path) -> io::Result<PathBuf> {
    let abs = std::path::absolute(p)?;
    let parts: Vec<Component> = abs.components().collect();
    for keep in (1..=parts.len()).rev() {
        let head: PathBuf = parts[..keep].iter().collect();
        match head.canonicalize() {
            Ok(mut real) => {
                for c in &parts[keep..] {
                    match c {
                        Component::ParentDir => {
                            real.pop();
                        }
                        Component::Normal(n) => real.push(n),
                        _ => {}
                    }
                }
                return Ok(real);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(abs)
}

/// Reads a file without following a symlink at `path`.
pub(crate) fn read_nofollow(path: &Path) -> io::Result<Vec<u8>> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mut buf = Vec::new();
    io::Read::read_to_end(&mut f, &mut buf)?;
    Ok(buf)
}

/// Replaces `path` with `bytes` (mode `mode`, owned by `owner` if given) without writing
/// through whatever is there: a new file beside it, renamed over it. A symlink or a hard link
/// left at `path` by the server's account is replaced, never followed.
pub(crate) fn replace_file(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> Result<(), PgError> {
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
        PgError::io(path, e)
    })
}

/// Gives the directory `path` to `owner` with `mode`, through a descriptor opened without
/// following a symlink: a directory swapped for a link is refused, its target untouched.
pub(crate) fn chown_dir(
    path: &Path,
    owner: Option<(u32, u32)>,
    mode: Option<u32>,
) -> Result<(), PgError> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => PgError::dir(
                path,
                "not a directory (a symbolic link?) where iogauge keeps one; refusing to follow it",
            ),
            _ => PgError::io(path, e),
        })?;
    set_owner_mode(&f, owner, mode).map_err(|e| PgError::io(path, e))
}

fn set_owner_mode(f: &File, owner: Option<(u32, u32)>, mode: Option<u32>) -> io::Result<()> {
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::fchown(f, Some(uid), Some(gid))?;
    }
    if let Some(m) = mode {
        f.set_permissions(std::fs::Permissions::from_mode(m))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_symlinks_in_the_existing_part_only() {
        let base = std::env::temp_dir().join(format!("iogauge-trust-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("real/sub")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let real = base.canonicalize().unwrap().join("real");
        assert_eq!(resolve(&base.join("link")).unwrap(), real);
        assert_eq!(
            resolve(&base.join("link/new/x")).unwrap(),
            real.join("new/x")
        );
        assert_eq!(
            resolve(&base.join("link/new/../y")).unwrap(),
            real.join("y")
        );
        assert_eq!(resolve(&base.join("real/sub/..")).unwrap(), real);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn allowed_owners_read_as_a_list() {
        let t = Trust {
            me: 0,
            server: Some(0),
        };
        assert_eq!(t.allowed(true), "root");
        let t = Trust {
            me: 0,
            server: Some(u32::MAX - 7),
        };
        assert_eq!(t.allowed(false), "root");
        assert_eq!(t.allowed(true), format!("root or uid {}", u32::MAX - 7));
    }
}
