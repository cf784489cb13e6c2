//! The cluster directory's files: the marker that says what iogauge created there (and locks
//! the cluster while a process uses it), the pristine copy, restoring it, and removing
//! exactly what iogauge made.

use crate::child::{die_with_parent, own_group, wait_or_stop};
use crate::error::PgError;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;

/// The marker's file name in the cluster directory.
pub const MARKER: &str = ".iogauge-pg";
const MAGIC: &str = "iogauge-pg 1";

/// What the marker records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// iogauge created the cluster directory itself (so `drop` may remove it).
    pub created_dir: bool,
    /// A separate WAL directory, and whether iogauge created it.
    pub wal_dir: Option<(PathBuf, bool)>,
    /// Tablespace directories (`db setup --target`), in order, and whether iogauge created
    /// each.
    pub tablespaces: Vec<(PathBuf, bool)>,
    /// The PostgreSQL binaries that ran initdb.
    pub bin: PathBuf,
}

impl Marker {
    pub fn write(&self, dir: &Path) -> Result<(), PgError> {
        let p = dir.join(MARKER);
        std::fs::write(&p, self.render()).map_err(|e| PgError::io(&p, e))
    }

    pub fn read(dir: &Path) -> Result<Marker, PgError> {
        let p = dir.join(MARKER);
        let text = std::fs::read_to_string(&p).map_err(|_| {
            PgError::dir(
                dir,
                "no iogauge cluster here (no marker); iogauge only touches directories it created",
            )
        })?;
        Marker::parse(&text).ok_or_else(|| PgError::dir(&p, "unreadable iogauge marker"))
    }

    fn render(&self) -> String {
        let mut s = format!("{MAGIC}\ncreated_dir={}\n", self.created_dir as u8);
        if let Some((w, created)) = &self.wal_dir {
            s.push_str(&format!(
                "wal_dir={}\ncreated_wal_dir={}\n",
                w.display(),
                *created as u8
            ));
        }
        for (t, created) in &self.tablespaces {
            s.push_str(&format!(
                "tablespace={}\ncreated_tablespace={}\n",
                t.display(),
                *created as u8
            ));
        }
        s.push_str(&format!("bin={}\n", self.bin.display()));
        s
    }

    /// The directories outside the cluster directory that iogauge's copies cover, with the
    /// name of each one's copy under `DIR/pristine`: the WAL directory (`wal`), then the
    /// tablespaces (`ts1`, `ts2`, …).
    pub fn outside(&self) -> Vec<Outside> {
        let wal = self.wal_dir.iter().map(|(p, c)| Outside {
            path: p.clone(),
            created: *c,
            copy: "wal".into(),
        });
        let ts = self
            .tablespaces
            .iter()
            .enumerate()
            .map(|(i, (p, c))| Outside {
                path: p.clone(),
                created: *c,
                copy: format!("ts{}", i + 1),
            });
        wal.chain(ts).collect()
    }

    fn parse(text: &str) -> Option<Marker> {
        let mut lines = text.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let (mut created_dir, mut wal, mut created_wal, mut bin) = (None, None, false, None);
        let mut tablespaces: Vec<(PathBuf, bool)> = Vec::new();
        for l in lines {
            let (k, v) = l.split_once('=')?;
            match k {
                "created_dir" => created_dir = Some(v == "1"),
                "wal_dir" => wal = Some(PathBuf::from(v)),
                "created_wal_dir" => created_wal = v == "1",
                "tablespace" => tablespaces.push((PathBuf::from(v), false)),
                "created_tablespace" => tablespaces.last_mut()?.1 = v == "1",
                "bin" => bin = Some(PathBuf::from(v)),
                _ => {}
            }
        }
        Some(Marker {
            created_dir: created_dir?,
            wal_dir: wal.map(|w| (w, created_wal)),
            tablespaces,
            bin: bin?,
        })
    }
}

/// A directory outside the cluster directory that holds part of the cluster (WAL, a
/// tablespace): where it is, whether iogauge created it, and its copy's name in `pristine`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outside {
    pub path: PathBuf,
    pub created: bool,
    pub copy: String,
}

/// Locks the cluster for this process (flock on the marker, released when the file closes).
pub fn lock(dir: &Path) -> Result<File, PgError> {
    let p = dir.join(MARKER);
    let f = File::open(&p).map_err(|e| PgError::io(&p, e))?;
    // SAFETY: flock on an open fd.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(PgError::dir(dir, "in use by another iogauge process"));
    }
    Ok(f)
}

/// Copies with `cp -a`: it keeps owners, modes and the `pg_wal` symlink, and reflinks where
/// the filesystem can. No crate does all of that. Ctrl-C (`stop`) ends it early with
/// `Interrupted`; the caller removes the partial copy.
fn cp(from: &Path, to: &Path, stop: &AtomicBool) -> Result<(), PgError> {
    let mut cmd = Command::new("cp");
    cmd.args(["-a", "--reflink=auto"])
        .arg(from)
        .arg(to)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    die_with_parent(&mut cmd, libc::SIGTERM);
    own_group(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| PgError::io(to, e))?;
    // Read on a thread: a copy failing on many files could fill the pipe and stall cp.
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let status = wait_or_stop(&mut child, stop).map_err(|e| PgError::io(to, e))?;
    let err = reader.join().unwrap_or_default();
    match status {
        None => Err(PgError::interrupted(format!("copying to {}", to.display()))),
        Some(st) if st.success() => Ok(()),
        Some(st) => {
            // Killed by a signal, cp says nothing: the status is the reason then.
            let why = match err.trim() {
                "" => format!("cp {st}"),
                e => e.replace('\n', "; "),
            };
            // The system's failure (a full disk, a signal), not the user's: exit 1.
            Err(PgError::io(
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
fn sync_and_evict(path: &Path) -> Result<(), PgError> {
    let f = File::open(path).map_err(|e| PgError::io(path, e))?;
    // SAFETY: syncfs on an open fd.
    if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
        return Err(PgError::io(path, std::io::Error::last_os_error()));
    }
    evict(path)
}

/// posix_fadvise(DONTNEED) on every regular file under `path` (advisory: a kernel that
/// ignores it leaves the cache warm).
fn evict(path: &Path) -> Result<(), PgError> {
    let m = std::fs::symlink_metadata(path).map_err(|e| PgError::io(path, e))?;
    if m.is_dir() {
        for e in std::fs::read_dir(path).map_err(|e| PgError::io(path, e))? {
            evict(&e.map_err(|e| PgError::io(path, e))?.path())?;
        }
    } else if m.is_file() {
        let f = File::open(path).map_err(|e| PgError::io(path, e))?;
        // SAFETY: posix_fadvise on an open fd.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
    Ok(())
}

fn remove_tree(p: &Path) -> Result<(), PgError> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(p).map_err(|e| PgError::io(p, e)),
        Ok(_) => std::fs::remove_file(p).map_err(|e| PgError::io(p, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(PgError::io(p, e)),
    }
}

fn remove_contents(dir: &Path) -> Result<(), PgError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(PgError::io(dir, e)),
    };
    for e in rd {
        remove_tree(&e.map_err(|e| PgError::io(dir, e))?.path())?;
    }
    Ok(())
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
pub fn snapshot(dir: &Path, outside: &[Outside], stop: &AtomicBool) -> Result<(), PgError> {
    let (p, fresh) = (dir.join(PRISTINE), dir.join(PRISTINE_NEW));
    remove_tree(&fresh)?;
    std::fs::create_dir(&fresh).map_err(|e| PgError::io(&fresh, e))?;
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
    std::fs::rename(&fresh, &p).map_err(|e| PgError::io(&p, e))?;
    // The rename on the device too: the copy counts as taken once `pristine` is there.
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| PgError::io(dir, e))
}

/// Where `restore` copies to before swapping: `DIR/data.new`, and a directory inside each
/// outside directory (the same filesystem, so the swap is renames; the user may own such a
/// directory itself, so nothing is created beside it).
const FRESH_DATA: &str = "data.new";
const FRESH_OUTSIDE: &str = ".iogauge-new";

/// Replaces the stopped cluster's data (and the outside directories' contents) with the
/// pristine copy: copies first, then swaps. Interrupted while copying, the copies are removed
/// and the cluster is as it was; the swap (removals and renames) is not interrupted.
pub fn restore(dir: &Path, outside: &[Outside], stop: &AtomicBool) -> Result<(), PgError> {
    let p = dir.join(PRISTINE);
    if !has_pristine(dir) {
        let why = if dir.join(PRISTINE_NEW).exists() {
            "the pristine copy is incomplete (db setup was interrupted while taking it)"
        } else {
            "no pristine copy to reset to (db setup did not finish: it takes the copy last)"
        };
        return Err(PgError::dir(
            dir,
            format!(
                "{why}; run `iogauge db setup --dir {}` again: it replaces the unfinished cluster",
                dir.display()
            ),
        ));
    }
    if let Some(o) = outside.iter().find(|o| !p.join(&o.copy).is_dir()) {
        return Err(PgError::dir(
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
    std::fs::rename(&fresh, &data).map_err(|e| PgError::io(&data, e))?;
    for (o, fw) in outside.iter().zip(&fresh_outside) {
        let w = &o.path;
        for e in std::fs::read_dir(w).map_err(|e| PgError::io(w, e))? {
            let e = e.map_err(|e| PgError::io(w, e))?;
            if e.file_name() != FRESH_OUTSIDE {
                remove_tree(&e.path())?;
            }
        }
        for e in std::fs::read_dir(fw).map_err(|e| PgError::io(fw, e))? {
            let e = e.map_err(|e| PgError::io(fw, e))?;
            let to = w.join(e.file_name());
            std::fs::rename(e.path(), &to).map_err(|e| PgError::io(&to, e))?;
        }
        std::fs::remove_dir(fw).map_err(|e| PgError::io(fw, e))?;
        sync_and_evict(w)?;
    }
    sync_and_evict(&data)
}

/// Removes what the marker says iogauge created: the cluster's files, the WAL directory (or
/// its contents, if the user made it), the marker, and the directory if iogauge made it and
/// nothing else is left in it.
pub fn remove(dir: &Path, marker: &Marker) -> Result<(), PgError> {
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
        if o.created {
            remove_tree(&o.path)?;
        } else {
            remove_contents(&o.path)?;
        }
    }
    remove_tree(&dir.join(MARKER))?;
    if marker.created_dir {
        // Left in place if someone else put files there since.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(())
}

pub fn absolute(p: &Path) -> Result<PathBuf, PgError> {
    std::path::absolute(p).map_err(|e| PgError::io(p, e))
}

/// Claims `dir`, the WAL directory and the tablespace directories, and writes the marker
/// listing what was created; on failure undoes the claims.
pub fn claim(
    dir: &Path,
    wal: Option<&Path>,
    tablespaces: &[PathBuf],
    bin: &Path,
) -> Result<Marker, PgError> {
    let mut marker = Marker {
        created_dir: claim_dir(dir)?,
        wal_dir: None,
        tablespaces: Vec::new(),
        bin: bin.to_path_buf(),
    };
    // Undoes the claims so far: removes the (empty) directories this call created.
    let unclaim = |m: &Marker, e: PgError| {
        for o in m.outside().iter().filter(|o| o.created) {
            let _ = std::fs::remove_dir(&o.path);
        }
        if m.created_dir {
            let _ = std::fs::remove_dir(dir);
        }
        e
    };
    let claimed = |p: &Path| absolute(p).and_then(|p| Ok((p.clone(), claim_dir(&p)?)));
    if let Some(w) = wal {
        match claimed(w) {
            Ok(c) => marker.wal_dir = Some(c),
            Err(e) => return Err(unclaim(&marker, e)),
        }
    }
    for t in tablespaces {
        match claimed(t) {
            Ok(c) => marker.tablespaces.push(c),
            Err(e) => return Err(unclaim(&marker, e)),
        }
    }
    if let Err(e) = marker.write(dir) {
        let _ = std::fs::remove_file(dir.join(MARKER));
        return Err(unclaim(&marker, e));
    }
    Ok(marker)
}

/// Makes `dir` iogauge's: creates it (true), or accepts an existing empty one (false).
/// Refuses a non-empty directory, or one that already holds an iogauge cluster.
pub fn claim_dir(dir: &Path) -> Result<bool, PgError> {
    if let Some(a) = dir
        .ancestors()
        .find(|a| std::fs::symlink_metadata(a).is_ok())
    {
        if !a.is_dir() {
            return Err(PgError::dir(
                a,
                "not a directory; give a new directory or an empty one",
            ));
        }
    }
    match std::fs::read_dir(dir) {
        Ok(mut rd) => {
            if dir.join(MARKER).exists() {
                return Err(PgError::dir(
                    dir,
                    "already holds an iogauge cluster; reset or drop it first",
                ));
            }
            if rd.next().is_some() {
                return Err(PgError::dir(
                    dir,
                    "not empty and not created by iogauge; refusing to use it (choose an empty or new directory)",
                ));
            }
            Ok(false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| PgError::io(dir, e))?;
            Ok(true)
        }
        Err(e) => Err(PgError::io(dir, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_round_trip() {
        for m in [
            Marker {
                created_dir: true,
                wal_dir: None,
                tablespaces: Vec::new(),
                bin: "/usr/lib/postgresql/15/bin".into(),
            },
            Marker {
                created_dir: false,
                wal_dir: Some(("/u03/wal".into(), true)),
                tablespaces: vec![("/u04/ts".into(), false), ("/u05/ts".into(), true)],
                bin: "/usr/bin".into(),
            },
        ] {
            assert_eq!(Marker::parse(&m.render()), Some(m));
        }
        assert_eq!(Marker::parse("something else\n"), None);
        assert_eq!(Marker::parse("iogauge-pg 1\nbin=/x\n"), None);
        // A created_tablespace line without its tablespace line is not a marker iogauge wrote.
        assert_eq!(
            Marker::parse("iogauge-pg 1\ncreated_dir=1\ncreated_tablespace=1\nbin=/x\n"),
            None
        );
    }
}
