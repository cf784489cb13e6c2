//! The cluster's files: the pristine copy, restoring it, and removing exactly what iogauge
//! (or PostgreSQL) made, as the marker (`marker`) lists it.

use crate::common::child::{die_with_parent, own_group, wait_or_stop};
use crate::common::claim::remove_made;
use crate::error::DbError;
use crate::postgres::server::marker::{Marker, Outside, MARKER};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;

/// Copies with `cp -a`: it keeps owners, modes and the `pg_wal` symlink. No crate does all of
/// that. Never by reflink (`--reflink=never`), though btrfs and xfs could: a data file sharing
/// its extents with the pristine copy makes the first write of every block copy-on-write
/// there (even under btrfs's `nodatacow`), so a run after `setup` or `reset` would measure
/// the filesystem's copying, and on btrfs its writes would all land wherever it allocates new
/// space (two members of a three-member raid1) instead of where the data is. Ctrl-C (`stop`) ends it early with
/// `Interrupted`; the caller removes the partial copy.
fn cp(from: &Path, to: &Path, stop: &AtomicBool) -> Result<(), DbError> {
    let mut cmd = Command::new("cp");
    cmd.args(["-a", "--reflink=never"])
        .arg(from)
        .arg(to)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    die_with_parent(&mut cmd, libc::SIGTERM);
    own_group(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| DbError::io(to, e))?;
    // Read on a thread: a copy failing on many files could fill the pipe and stall cp.
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let status = wait_or_stop(&mut child, stop).map_err(|e| DbError::io(to, e))?;
    let err = reader.join().unwrap_or_default();
    match status {
        None => Err(DbError::interrupted(format!("copying to {}", to.display()))),
        Some(st) if st.success() => Ok(()),
        Some(st) => {
            // Killed by a signal, cp says nothing: the status is the reason then.
            let why = match err.trim() {
                "" => format!("cp {st}"),
                e => e.replace('\n', "; "),
            };
            // The system's failure (a full disk, a signal), not the user's: exit 1.
            Err(DbError::io(
                to,
                std::io::Error::other(format!("copy from {} failed: {why}", from.display())),
            ))
        }
    }
}

/// Puts a copy on the device and out of the page cache: syncfs(2) on its filesystem (one
/// journal commit; fsync per file costs one each, seconds for a data directory's thousand
/// files on a busy disk), then drops every file's now clean pages. Otherwise the copy's
/// write-back pollutes the next run, and its reads come from the copy's page cache (charged
/// to iogauge, outside any cache limit of the server) instead of the device.
fn sync_and_evict(path: &Path) -> Result<(), DbError> {
    let f = File::open(path).map_err(|e| DbError::io(path, e))?;
    // SAFETY: syncfs on an open fd.
    if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
        return Err(DbError::io(path, std::io::Error::last_os_error()));
    }
    evict(path)
}

/// posix_fadvise(DONTNEED) on every regular file under `path` (advisory: a kernel that
/// ignores it leaves the cache warm).
fn evict(path: &Path) -> Result<(), DbError> {
    let m = std::fs::symlink_metadata(path).map_err(|e| DbError::io(path, e))?;
    if m.is_dir() {
        for e in std::fs::read_dir(path).map_err(|e| DbError::io(path, e))? {
            evict(&e.map_err(|e| DbError::io(path, e))?.path())?;
        }
    } else if m.is_file() {
        // Not through a link, and never blocking on a FIFO swapped in meanwhile.
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| DbError::io(path, e))?;
        // SAFETY: posix_fadvise on an open fd.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
    Ok(())
}

fn remove_tree(p: &Path) -> Result<(), DbError> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(p).map_err(|e| DbError::io(p, e)),
        Ok(_) => std::fs::remove_file(p).map_err(|e| DbError::io(p, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(DbError::io(p, e)),
    }
}

/// The pristine copy, and the name it is taken under: it becomes `pristine` only once it is
/// whole and on the device, so a copy cut short (iogauge killed with SIGKILL, the machine
/// down) is never taken for one; `reset` refuses to swap in anything less.
const PRISTINE: &str = "pristine";
const PRISTINE_NEW: &str = "pristine.new";

/// Whether the cluster in `dir` has its whole pristine copy: its setup finished.
pub fn has_pristine(dir: &Path) -> bool {
    dir.join(PRISTINE).join("data").is_dir()
}

/// Copies the stopped cluster's data (and the directories outside it: WAL, tablespaces) to
/// `DIR/pristine`, by way of `DIR/pristine.new`. Interrupted, the partial copy is removed.
pub fn snapshot(dir: &Path, outside: &[Outside], stop: &AtomicBool) -> Result<(), DbError> {
    let (p, fresh) = (dir.join(PRISTINE), dir.join(PRISTINE_NEW));
    remove_tree(&fresh)?;
    std::fs::create_dir(&fresh).map_err(|e| DbError::io(&fresh, e))?;
    let copied = cp(&dir.join("data"), &fresh.join("data"), stop)
        .and_then(|()| {
            outside
                .iter()
                .try_for_each(|o| cp(&o.path, &fresh.join(&o.copy), stop))
        })
        .and_then(|()| sync_and_evict(&fresh));
    if let Err(e) = copied {
        let _ = remove_tree(&fresh);
        return Err(e);
    }
    remove_tree(&p)?;
    std::fs::rename(&fresh, &p).map_err(|e| DbError::io(&p, e))?;
    // The rename on the device too: the copy counts as taken once `pristine` is there.
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| DbError::io(dir, e))
}

/// Where `restore` copies to before swapping: `DIR/data.new`, and a directory inside each
/// outside directory (the same filesystem, so the swap is renames; the user may own such a
/// directory itself, so nothing is created beside it).
const FRESH_DATA: &str = "data.new";
const FRESH_OUTSIDE: &str = ".iogauge-new";

/// Replaces the stopped cluster's data (and the outside directories' contents) with the
/// pristine copy: copies first, then swaps. Interrupted while copying, the copies are removed
/// and the cluster is as it was; the swap (removals and renames) is not interrupted.
pub fn restore(dir: &Path, outside: &[Outside], stop: &AtomicBool) -> Result<(), DbError> {
    let p = dir.join(PRISTINE);
    if !has_pristine(dir) {
        let why = if dir.join(PRISTINE_NEW).exists() {
            "the pristine copy is incomplete (db setup was interrupted while taking it)"
        } else {
            "no pristine copy to reset to (db setup did not finish: it takes the copy last)"
        };
        return Err(DbError::dir(
            dir,
            format!(
                "{why}; run `iogauge db setup --dir {}` again: it replaces the unfinished cluster",
                dir.display()
            ),
        ));
    }
    if let Some(o) = outside.iter().find(|o| !p.join(&o.copy).is_dir()) {
        return Err(DbError::dir(
            dir,
            format!(
                "the pristine copy lacks {} (of {}); run setup again",
                o.copy,
                o.path.display()
            ),
        ));
    }
    let (data, fresh) = (dir.join("data"), dir.join(FRESH_DATA));
    let fresh_outside: Vec<PathBuf> = outside.iter().map(|o| o.path.join(FRESH_OUTSIDE)).collect();
    let copied = remove_tree(&fresh)
        .and_then(|()| cp(&p.join("data"), &fresh, stop))
        .and_then(|()| {
            outside
                .iter()
                .zip(&fresh_outside)
                .try_for_each(|(o, f)| remove_tree(f).and_then(|()| cp(&p.join(&o.copy), f, stop)))
        });
    if let Err(e) = copied {
        let _ = remove_tree(&fresh);
        for f in &fresh_outside {
            let _ = remove_tree(f);
        }
        return Err(e);
    }
    remove_tree(&data)?;
    std::fs::rename(&fresh, &data).map_err(|e| DbError::io(&data, e))?;
    for (o, fw) in outside.iter().zip(&fresh_outside) {
        let w = &o.path;
        if o.made_from.is_some() {
            for e in std::fs::read_dir(w).map_err(|e| DbError::io(w, e))? {
                let e = e.map_err(|e| DbError::io(w, e))?;
                if e.file_name() != FRESH_OUTSIDE {
                    remove_tree(&e.path())?;
                }
            }
        } else {
            // The user's directory (an older iogauge's cluster): what PostgreSQL made, and
            // what the copy holds, goes; the user's files stay.
            let copied: Vec<OsString> = std::fs::read_dir(fw)
                .map_err(|e| DbError::io(fw, e))?
                .filter_map(|e| Some(e.ok()?.file_name()))
                .collect();
            remove_postgres_made(w, &copied)?;
        }
        for e in std::fs::read_dir(fw).map_err(|e| DbError::io(fw, e))? {
            let e = e.map_err(|e| DbError::io(fw, e))?;
            let to = w.join(e.file_name());
            std::fs::rename(e.path(), &to).map_err(|e| DbError::io(&to, e))?;
        }
        std::fs::remove_dir(fw).map_err(|e| DbError::io(fw, e))?;
        sync_and_evict(w)?;
    }
    sync_and_evict(&data)
}

/// Removes what the marker says iogauge created: the cluster's files, the WAL and tablespace
/// directories it made (or, in one an older iogauge was given, what PostgreSQL made there),
/// the marker, and the directories it made for the cluster if nothing else is left in them.
pub fn remove(dir: &Path, marker: &Marker) -> Result<(), DbError> {
    for name in [
        PRISTINE,
        PRISTINE_NEW,
        "data",
        FRESH_DATA,
        "run",
        "server.log",
    ] {
        remove_tree(&dir.join(name))?;
    }
    for o in marker.outside() {
        match &o.made_from {
            Some(top) => {
                remove_tree(&o.path)?;
                remove_made(&o.path, top);
            }
            None => remove_postgres_made(&o.path, &[])?,
        }
    }
    remove_tree(&dir.join(MARKER))?;
    if let Some(top) = &marker.created_dir {
        // Left in place if someone else put files there since.
        remove_made(dir, top);
    }
    Ok(())
}

/// Removes from `dir`, a directory the user made, what PostgreSQL or iogauge made there (its
/// names, or one of `also`) and nothing else: files the user put there stay.
fn remove_postgres_made(dir: &Path, also: &[OsString]) -> Result<(), DbError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(DbError::io(dir, e)),
    };
    for e in rd {
        let name = e.map_err(|e| DbError::io(dir, e))?.file_name();
        if name != FRESH_OUTSIDE && (postgres_names(&name) || also.contains(&name)) {
            remove_tree(&dir.join(name))?;
        }
    }
    Ok(())
}

/// The names PostgreSQL gives what it makes in a tablespace directory (`PG_15_202209061`) or
/// a WAL directory (segments `000000010000000000000001` with `.partial` or `.…backup`,
/// timeline `00000002.history`, `archive_status`, `summaries`, `xlogtemp.123`).
fn postgres_names(name: &OsStr) -> bool {
    let Some(n) = name.to_str() else {
        return false;
    };
    let hex = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit());
    let segment = n.get(..24).is_some_and(|s| hex(s, 24)) && matches!(&n[24..], "" | ".partial")
        || n.get(..24).is_some_and(|s| hex(s, 24))
            && n[24..]
                .strip_prefix('.')
                .and_then(|r| r.strip_suffix(".backup"))
                .is_some_and(|o| hex(o, 8));
    let history = n.strip_suffix(".history").is_some_and(|t| hex(t, 8));
    n.starts_with("PG_")
        || n.starts_with("xlogtemp.")
        || matches!(n, "archive_status" | "summaries")
        || segment
        || history
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_postgres_gives() {
        for n in [
            "PG_15_202209061",
            "000000010000000000000001",
            "000000010000000000000001.partial",
            "000000010000000000000002.00000028.backup",
            "00000002.history",
            "archive_status",
            "summaries",
            "xlogtemp.4242",
        ] {
            assert!(postgres_names(OsStr::new(n)), "{n}");
        }
        for n in [
            "notes.txt",
            "lost+found",
            "00000001000000000000000",
            "000000010000000000000001.txt",
            "history",
            "0000000G.history",
        ] {
            assert!(!postgres_names(OsStr::new(n)), "{n}");
        }
    }

    /// An older iogauge's cluster used a WAL or tablespace directory the user made as it is:
    /// `drop` removes only what PostgreSQL made there.
    #[test]
    fn a_user_made_directory_keeps_the_users_files() {
        let base = std::env::temp_dir().join(format!("iogauge-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (dir, ts) = (base.join("pg"), base.join("ts"));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        std::fs::create_dir_all(ts.join("PG_15_202209061/16384")).unwrap();
        std::fs::write(ts.join("notes.txt"), "user").unwrap();
        std::fs::write(dir.join(MARKER), "x").unwrap();
        let m = Marker {
            created_dir: None,
            wal_dir: None,
            tablespaces: vec![crate::postgres::server::marker::Claimed {
                path: ts.clone(),
                made_from: None,
            }],
            bin: "/usr/bin".into(),
        };
        remove(&dir, &m).unwrap();
        let left: Vec<_> = std::fs::read_dir(&ts)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["notes.txt"]);
        assert!(dir.exists() && !dir.join("data").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
