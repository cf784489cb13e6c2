//! A private MariaDB's directory, under the trust rule PostgreSQL's clusters keep
//! (`iogauge-trust`): what iogauge made there, checked at every open, locked while in use,
//! and removed exactly.
//!
//! ```text
//! DIR/.iogauge-maria   marker: iogauge made this (and which directories), whether setup
//!                      finished; flock'ed by the one iogauge process using the server
//! DIR/my.cnf           the server's settings, rewritten at every open
//! DIR/data/            the datadir (mariadb-install-db)
//! DIR/run/             socket, pid file, tmpdir and secure_file_priv: 0700
//! DIR/server.log       the installer's and the server's output
//! ```
//!
//! The server runs as the account running iogauge (root when iogauge is root), so every one
//! of these belongs to root or that account, and no group or other user may write to them or
//! to the directories above: a directory another user prepared could otherwise choose what
//! root overwrites (`my.cnf` or `server.log` linked to a file of root's), makes 0700 (`run/`
//! linked elsewhere), deletes (a marker listing someone's directory) or lets that user reach
//! the server (a socket directory of theirs). All of it is checked before anything is written,
//! started or removed.

use crate::common::claim::{claim_dir, lock_marker, remove_made, ServerDir};
use crate::error::DbError;
use iogauge_trust::{chown_dir, replace_file, resolve, Kind, Trust};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub(super) const MARKER: &str = ".iogauge-maria";
const MAGIC: &str = "iogauge private MariaDB";
const FINISHED: &str = "setup=finished";
/// The most a marker holds (a version and a path): a larger file is not one iogauge wrote.
const MARKER_LIMIT: u64 = 64 << 10;

/// Whether `dir` holds a private MariaDB iogauge made (its marker, not followed if a link).
pub fn has_server(dir: &Path) -> bool {
    fs::symlink_metadata(dir.join(MARKER)).is_ok()
}

/// The directory of a private server, checked and locked for this process.
#[derive(Debug)]
pub(super) struct MariaDir {
    path: PathBuf,
    /// The outermost directory iogauge created for `path` (itself or a parent), if it did:
    /// removed again, when empty, by `destroy`.
    made_from: Option<PathBuf>,
    finished: bool,
    /// The marker, open for appending and flock'ed: one iogauge per server at a time.
    lock: File,
}

impl MariaDir {
    /// Claims `dir` for a new server: refused if another user could change it or a directory
    /// above, or if it is not empty; created (0700) if missing; marked and locked.
    pub fn create(dir: &Path, version: &str) -> Result<MariaDir, DbError> {
        let path = resolve(dir).map_err(|e| DbError::io(dir, e))?;
        let made_from = claim_dir(&path, &Trust::new(None), MARKER)?;
        let undo = |e: DbError| {
            let _ = fs::remove_file(path.join(MARKER));
            if let Some(top) = &made_from {
                remove_made(&path, top);
            }
            e
        };
        if made_from.is_some() {
            chown_dir(&path, None, Some(0o700)).map_err(|e| undo(e.into()))?;
        }
        let mut text = format!("{MAGIC}\nserver={version}\n");
        if let Some(top) = &made_from {
            text.push_str(&format!("made_dir=1\nmade_from={}\n", top.display()));
        }
        let m = path.join(MARKER);
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&m)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        written.map_err(|e| undo(DbError::io(&m, e)))?;
        let lock = lock_marker(&path, MARKER).map_err(undo)?;
        Ok(MariaDir {
            path,
            made_from,
            finished: false,
            lock,
        })
    }

    /// The server iogauge made in `dir`, once nobody but root and this user could have
    /// changed what iogauge will act on there: the directory and those above, the marker,
    /// `data/`, `run/`, `my.cnf` and `server.log`. Locked until dropped: a second iogauge on
    /// the same server (a run, a reset, a drop) is refused.
    pub fn open(dir: &Path) -> Result<MariaDir, DbError> {
        let path = resolve(dir).map_err(|e| DbError::io(dir, e))?;
        let trust = Trust::new(None);
        trust.check_above(&path)?;
        trust.check(&path, Kind::Dir, false)?;
        let m = path.join(MARKER);
        if !has_server(&path) {
            return Err(DbError::Usage(format!(
                "--dir {}: no MariaDB made by iogauge here; run `iogauge db setup --engine mariadb --dir {}` first",
                dir.display(),
                dir.display()
            )));
        }
        trust.check(&m, Kind::File, false)?;
        for (name, kind) in [
            ("data", Kind::Dir),
            ("run", Kind::SocketDir),
            ("my.cnf", Kind::File),
            ("server.log", Kind::File),
        ] {
            let p = path.join(name);
            if fs::symlink_metadata(&p).is_ok() {
                trust.check(&p, kind, false)?;
            }
        }
        let mut lock = lock_marker(&path, MARKER)?;
        trust.check_open(&m, &lock, Kind::File, false)?;
        let text = bounded(&mut lock, &m)?;
        let (made_from, finished) =
            parse(&text, &path).ok_or_else(|| DbError::dir(&m, "unreadable iogauge marker"))?;
        Ok(MariaDir {
            path,
            made_from,
            finished,
            lock,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the setup finished (one interrupted left a server `db setup` replaces).
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Records that the setup finished, through the locked marker (never a path).
    pub fn finish(&mut self) -> Result<(), DbError> {
        let m = self.path.join(MARKER);
        (self.lock.write_all(format!("{FINISHED}\n").as_bytes()))
            .and_then(|()| self.lock.sync_all())
            .map_err(|e| DbError::io(&m, e))?;
        self.finished = true;
        Ok(())
    }

    /// Writes `my.cnf` (never through a link) and makes `run/` 0700 (through a descriptor
    /// opened without following a link), creating it if missing.
    pub fn write_cnf(&self, text: &str) -> Result<(), DbError> {
        let run = self.run_dir();
        match fs::DirBuilder::new().create(&run) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(DbError::io(&run, e))
            }
            _ => {}
        }
        // An older run dir made looser is closed again.
        chown_dir(&run, None, Some(0o700))?;
        Ok(replace_file(&self.cnf(), text.as_bytes(), 0o600, None)?)
    }

    /// The server's log, opened for appending (never through a link).
    pub fn open_log(&self) -> Result<File, DbError> {
        let log = self.log_path();
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&log)
            .map_err(|e| DbError::io(&log, e))
    }

    /// Removes what iogauge made here, the marker last, and the directories it created for
    /// the server if nothing else is left in them. The lock is held throughout.
    pub fn destroy(&self) -> Result<(), DbError> {
        for d in [self.data_dir(), self.run_dir()] {
            match fs::symlink_metadata(&d) {
                Ok(m) if m.is_dir() => fs::remove_dir_all(&d).map_err(|e| DbError::io(&d, e))?,
                Ok(_) => fs::remove_file(&d).map_err(|e| DbError::io(&d, e))?,
                Err(_) => {}
            }
        }
        let tmp_cnf = self.path.join(".my.cnf.iogauge-tmp");
        for f in [self.cnf(), tmp_cnf, self.log_path(), self.path.join(MARKER)] {
            match fs::remove_file(&f) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(DbError::io(&f, e))
                }
                _ => {}
            }
        }
        if let Some(top) = &self.made_from {
            // Left in place if someone else put files there since.
            remove_made(&self.path, top);
        }
        Ok(())
    }

    pub fn cnf(&self) -> PathBuf {
        self.path.join("my.cnf")
    }
}

/// The marker's text, read through its descriptor with a bound.
fn bounded(f: &mut File, path: &Path) -> Result<String, DbError> {
    let mut buf = Vec::new();
    f.rewind()
        .and_then(|_| f.take(MARKER_LIMIT + 1).read_to_end(&mut buf))
        .map_err(|e| DbError::io(path, e))?;
    if buf.len() as u64 > MARKER_LIMIT {
        return Err(DbError::dir(
            path,
            format!("larger than {MARKER_LIMIT} bytes, so not a marker iogauge wrote; remove it"),
        ));
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The directories iogauge made (`made_dir=1`, and since this version `made_from=`, the
/// outermost; one that is not the server's directory or above it is taken as the directory
/// itself: removing less, never more) and whether setup finished.
fn parse(text: &str, dir: &Path) -> Option<(Option<PathBuf>, bool)> {
    let mut lines = text.lines();
    if lines.next()? != MAGIC {
        return None;
    }
    let (mut made, mut from, mut finished) = (false, None, false);
    for l in lines {
        match l.split_once('=') {
            Some(("made_dir", v)) => made = v == "1",
            Some(("made_from", v)) => from = Some(PathBuf::from(v)),
            Some(("setup", "finished")) => finished = true,
            _ => {}
        }
    }
    let top = made.then(|| from.filter(|f| dir.starts_with(f)).unwrap_or(dir.into()));
    Some((top, finished))
}

impl ServerDir for MariaDir {
    fn root(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_old_and_new_parse() {
        let d = Path::new("/srv/a/maria");
        let old = format!("{MAGIC}\nserver=10.11\nmade_dir=1\n{FINISHED}\n");
        assert_eq!(parse(&old, d), Some((Some(d.into()), true)));
        let new = format!("{MAGIC}\nserver=10.11\nmade_dir=1\nmade_from=/srv/a\n");
        assert_eq!(parse(&new, d), Some((Some("/srv/a".into()), false)));
        // A made_from that is not above the directory removes less, never more.
        let odd = format!("{MAGIC}\nmade_dir=1\nmade_from=/etc\n");
        assert_eq!(parse(&odd, d), Some((Some(d.into()), false)));
        assert_eq!(
            parse(&format!("{MAGIC}\nserver=x\n"), d),
            Some((None, false))
        );
        assert_eq!(parse("something else\n", d), None);
    }
}
