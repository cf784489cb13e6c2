//! The rule itself: who may own a path, and who may write to it (see the crate's doc).

use crate::error::TrustError;
use crate::users::name;
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// The accounts a path may belong to: root, the user running iogauge and, where a database
/// server works, the server's account.
#[derive(Clone, Copy, Debug)]
pub struct Trust {
    me: u32,
    server: Option<u32>,
}

/// What a path may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
    /// A server's socket directory: iogauge sets its mode itself before every start (closing
    /// one an older iogauge left open), so only its owner matters.
    SocketDir,
}

impl Trust {
    /// Root and this process's user; with `server`, that account too where a server works.
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
    pub fn check(&self, path: &Path, kind: Kind, server_may_own: bool) -> Result<(), TrustError> {
        let m = std::fs::symlink_metadata(path).map_err(|e| TrustError::io(path, e))?;
        self.judge(path, &m, kind, server_may_own)
    }

    /// [`Trust::check`] on a file already open (a descriptor opened without following a
    /// link): what it is, not what is at its path now.
    pub fn check_open(
        &self,
        path: &Path,
        f: &File,
        kind: Kind,
        server_may_own: bool,
    ) -> Result<(), TrustError> {
        let m = f.metadata().map_err(|e| TrustError::io(path, e))?;
        self.judge(path, &m, kind, server_may_own)
    }

    fn judge(
        &self,
        path: &Path,
        m: &Metadata,
        kind: Kind,
        server_may_own: bool,
    ) -> Result<(), TrustError> {
        let what = if kind == Kind::File {
            "file"
        } else {
            "directory"
        };
        if m.file_type().is_symlink() {
            return Err(TrustError::refused(
                path,
                format!("a symbolic link where iogauge keeps a {what}; refusing to follow it (someone replaced it: remove the link)"),
            ));
        }
        if (kind == Kind::File) != m.is_file() || (kind != Kind::File && !m.is_dir()) {
            let is = if m.is_dir() {
                "a directory"
            } else if m.is_file() {
                "a regular file"
            } else {
                "a FIFO, socket or device"
            };
            return Err(TrustError::refused(
                path,
                format!("not a {what} but {is}; iogauge keeps a {what} there (someone replaced it: remove it)"),
            ));
        }
        let checked = if kind == Kind::SocketDir {
            self.owned(path, m, server_may_own)
        } else {
            self.owned_and_closed(path, m, server_may_own, false)
        };
        checked.map_err(|why| TrustError::refused(path, why))
    }

    /// Every directory above `path` (a resolved path: no symlinks above it): owned by root or
    /// this user, and not writable by others unless sticky. Ones that do not exist yet (iogauge
    /// will create them) are skipped.
    pub fn check_above(&self, path: &Path) -> Result<(), TrustError> {
        for a in path.ancestors().skip(1) {
            let m = match std::fs::symlink_metadata(a) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(TrustError::io(a, e)),
            };
            let why = if m.file_type().is_symlink() {
                Some("a symbolic link (it changed while iogauge looked)".to_string())
            } else {
                self.owned_and_closed(a, &m, false, true).err()
            };
            if let Some(why) = why {
                return Err(TrustError::refused(
                    path,
                    format!("the directory above it, {}, is {why}", a.display()),
                ));
            }
        }
        Ok(())
    }

    /// [`Trust::check_above`], then the path itself if it exists.
    pub fn check_tree(
        &self,
        path: &Path,
        kind: Kind,
        server_may_own: bool,
    ) -> Result<(), TrustError> {
        self.check_above(path)?;
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            _ => self.check(path, kind, server_may_own),
        }
    }

    /// A program iogauge will run (as root when it is root): where its links lead, the file
    /// and every directory above it belong to root or this user, and nobody else may write
    /// to them.
    pub fn check_program(&self, program: &Path) -> Result<(), TrustError> {
        let real = program
            .canonicalize()
            .map_err(|e| TrustError::io(program, e))?;
        self.check_above(&real)?;
        self.check(&real, Kind::File, false)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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

    #[test]
    fn open_modes_links_and_fifos_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let t = Trust::new(None);
        let f = d.path().join("f");
        std::fs::write(&f, "x").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        t.check(&f, Kind::File, false).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = t.check(&f, Kind::File, false).unwrap_err().to_string();
        assert!(
            e.contains("writable by its group and every user (mode 0666)"),
            "{e}"
        );
        let l = d.path().join("l");
        std::os::unix::fs::symlink(&f, &l).unwrap();
        let e = t.check(&l, Kind::File, false).unwrap_err().to_string();
        assert!(
            e.contains("a symbolic link where iogauge keeps a file"),
            "{e}"
        );
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = t.check(&fifo, Kind::File, false).unwrap_err().to_string();
        assert!(e.contains("not a file but a FIFO, socket or device"), "{e}");
        let e = t.check(&f, Kind::Dir, false).unwrap_err().to_string();
        assert!(e.contains("not a directory but a regular file"), "{e}");
    }
}
