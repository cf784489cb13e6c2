//! The marker, `DIR/.iogauge-pg`: what iogauge created for a cluster (so `drop` removes that
//! and nothing else), the PostgreSQL it was made with, and the lock one iogauge process holds
//! while it uses the cluster. Claiming the directories at setup, and checking at every open
//! that nobody else could have changed them (the rule in `trust`).
//!
//! In a WAL or tablespace directory the user made, iogauge works in a directory of its own
//! inside it (`iogauge-wal`, `iogauge-ts`): the user's directory keeps its owner and mode and
//! whatever the user puts beside it. A directory iogauge creates (with any parents it had to
//! create, recorded as `…_from`) is used as it is and removed by `drop`. An older iogauge
//! worked in the user's directory itself (`created_…=0`); such a marker still opens, and
//! `files` then removes there only what PostgreSQL names.

use crate::common::claim::{claim_dir, lock_marker, make_dirs, not_a_dir_above, remove_made};
use crate::error::DbError;
use crate::postgres::server::postmaster::Owner;
use iogauge_trust::{read_bounded, resolve, Kind, Trust};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The marker's file name in the cluster directory.
pub const MARKER: &str = ".iogauge-pg";
const MAGIC: &str = "iogauge-pg 1";
/// The most a marker holds (a few paths): a larger file is not one iogauge wrote.
const MARKER_LIMIT: u64 = 64 << 10;
/// iogauge's own directory inside a WAL or tablespace directory the user made.
pub const WAL_SUBDIR: &str = "iogauge-wal";
pub const TS_SUBDIR: &str = "iogauge-ts";

/// A directory outside the cluster directory that the cluster uses (WAL, a tablespace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimed {
    pub path: PathBuf,
    /// The outermost directory iogauge created for `path`: `path` itself, or a parent it had
    /// to create too. `None`: the user made `path` (an older iogauge's marker).
    pub made_from: Option<PathBuf>,
}

/// What the marker records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// The outermost directory iogauge created for the cluster directory (itself or a parent),
    /// if it created it: `drop` removes those that are empty then.
    pub created_dir: Option<PathBuf>,
    /// A separate WAL directory.
    pub wal_dir: Option<Claimed>,
    /// Tablespace directories (`db setup --target`), in order.
    pub tablespaces: Vec<Claimed>,
    /// The PostgreSQL binaries that ran initdb.
    pub bin: PathBuf,
}

/// A directory outside the cluster directory that holds part of the cluster (WAL, a
/// tablespace): where it is, what of it iogauge made, and its copy's name in `pristine`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outside {
    pub path: PathBuf,
    pub made_from: Option<PathBuf>,
    pub copy: String,
}

impl Marker {
    /// Writes the marker as a new file (never over one, never through a symlink).
    pub fn write(&self, dir: &Path) -> Result<(), DbError> {
        let p = dir.join(MARKER);
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&p)
            .map_err(|e| DbError::io(&p, e))?;
        f.write_all(self.render().as_bytes()).map_err(|e| {
            let _ = std::fs::remove_file(&p);
            DbError::io(&p, e)
        })
    }

    /// Reads the marker in `dir` (not through a symlink).
    pub fn read(dir: &Path) -> Result<Marker, DbError> {
        let p = dir.join(MARKER);
        let text = read_bounded(&p, MARKER_LIMIT).map_err(|e| match e.is_not_found() {
            true => DbError::dir(
                dir,
                "no iogauge cluster here (no marker); iogauge only touches directories it created",
            ),
            false => e.into(),
        })?;
        Marker::parse(&String::from_utf8_lossy(&text), dir)
            .ok_or_else(|| DbError::dir(&p, "unreadable iogauge marker"))
    }

    fn render(&self) -> String {
        let mut s = format!(
            "{MAGIC}\ncreated_dir={}\n",
            self.created_dir.is_some() as u8
        );
        if let Some(top) = &self.created_dir {
            s.push_str(&format!("created_dir_from={}\n", top.display()));
        }
        let mut claimed = |key: &str, created: &str, c: &Claimed| {
            s.push_str(&format!(
                "{key}={}\n{created}={}\n",
                c.path.display(),
                c.made_from.is_some() as u8
            ));
            if let Some(top) = &c.made_from {
                s.push_str(&format!("{key}_from={}\n", top.display()));
            }
        };
        if let Some(w) = &self.wal_dir {
            claimed("wal_dir", "created_wal_dir", w);
        }
        for t in &self.tablespaces {
            claimed("tablespace", "created_tablespace", t);
        }
        s.push_str(&format!("bin={}\n", self.bin.display()));
        s
    }

    /// The marker in `text`, of the cluster in `dir`. A `…_from` that is not `…` or above it
    /// is taken as `…` itself (removing less, never more).
    fn parse(text: &str, dir: &Path) -> Option<Marker> {
        let mut lines = text.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let (mut created_dir, mut dir_from, mut bin) = (None, None, None);
        let (mut wal, mut tablespaces) = (None::<(PathBuf, bool, Option<PathBuf>)>, Vec::new());
        for l in lines {
            let (k, v) = l.split_once('=')?;
            let p = || PathBuf::from(v);
            match k {
                "created_dir" => created_dir = Some(v == "1"),
                "created_dir_from" => dir_from = Some(p()),
                "wal_dir" => wal = Some((p(), false, None)),
                "created_wal_dir" => wal.as_mut()?.1 = v == "1",
                "wal_dir_from" => wal.as_mut()?.2 = Some(p()),
                "tablespace" => tablespaces.push((p(), false, None)),
                "created_tablespace" => tablespaces.last_mut()?.1 = v == "1",
                "tablespace_from" => tablespaces.last_mut()?.2 = Some(p()),
                "bin" => bin = Some(p()),
                _ => {}
            }
        }
        let top = |path: &Path, created: bool, from: Option<PathBuf>| {
            created.then(|| from.filter(|f| path.starts_with(f)).unwrap_or(path.into()))
        };
        let claimed = |(path, created, from): (PathBuf, bool, Option<PathBuf>)| Claimed {
            made_from: top(&path, created, from),
            path,
        };
        Some(Marker {
            created_dir: top(dir, created_dir?, dir_from),
            wal_dir: wal.map(claimed),
            tablespaces: tablespaces.into_iter().map(claimed).collect(),
            bin: bin?,
        })
    }

    /// The directories outside the cluster directory that iogauge's copies cover, with the
    /// name of each one's copy under `DIR/pristine`: the WAL directory (`wal`), then the
    /// tablespaces (`ts1`, `ts2`, …).
    pub fn outside(&self) -> Vec<Outside> {
        let out = |c: &Claimed, copy: String| Outside {
            path: c.path.clone(),
            made_from: c.made_from.clone(),
            copy,
        };
        let wal = self.wal_dir.iter().map(|w| out(w, "wal".into()));
        let ts = (self.tablespaces.iter().enumerate()).map(|(i, t)| out(t, format!("ts{}", i + 1)));
        wal.chain(ts).collect()
    }
}

/// Locks the cluster for this process (flock on the marker, released when the file closes).
pub fn lock(dir: &Path) -> Result<File, DbError> {
    lock_marker(dir, MARKER)
}

/// The marker of the cluster in `dir` (a resolved path), once every path iogauge will act on
/// passes the trust rule: `dir` and the marker belong to root or this user; `data/`, `run/`,
/// the WAL and tablespace directories may belong to the server's account too (the owner of
/// `data/`, returned). A path another user could change is refused, whatever it holds.
pub fn read_trusted(dir: &Path) -> Result<(Marker, Option<u32>), DbError> {
    let me = Trust::new(None);
    me.check_above(dir)?;
    me.check(dir, Kind::Dir, false)?;
    let p = dir.join(MARKER);
    if std::fs::symlink_metadata(&p).is_ok() {
        me.check(&p, Kind::File, false)?;
    }
    let marker = Marker::read(dir)?;
    let server = std::fs::symlink_metadata(dir.join("data"))
        .ok()
        .map(|m| m.uid());
    let trust = Trust::new(server);
    for (name, kind) in [("data", Kind::Dir), ("run", Kind::SocketDir)] {
        let p = dir.join(name);
        if std::fs::symlink_metadata(&p).is_ok() {
            trust.check(&p, kind, true)?;
        }
    }
    for o in marker.outside() {
        trust.check_tree(&o.path, Kind::Dir, true)?;
    }
    Ok((marker, server))
}

/// Claims `dir` (a resolved path), the WAL directory and the tablespace directories (each
/// resolved here, and reachable for the server's account `owner`), and writes the marker
/// listing what was created; on failure undoes the claims.
pub fn claim(
    dir: &Path,
    wal: Option<&Path>,
    tablespaces: &[PathBuf],
    bin: &Path,
    owner: &Owner,
) -> Result<Marker, DbError> {
    let real = |p: &Path| resolve(p).map_err(|e| DbError::io(p, e));
    let wal = wal.map(real).transpose()?;
    let tablespaces: Vec<PathBuf> = tablespaces
        .iter()
        .map(|t| real(t))
        .collect::<Result<_, _>>()?;
    // In a directory the user made, the server works in iogauge's own inside it.
    for (p, sub) in
        (wal.iter().map(|w| (w, WAL_SUBDIR))).chain(tablespaces.iter().map(|t| (t, TS_SUBDIR)))
    {
        owner.check_reachable(&p.join(sub))?;
    }
    let trust = Trust::new(None);
    let mut marker = Marker {
        created_dir: claim_dir(dir, &trust, MARKER)?,
        wal_dir: None,
        tablespaces: Vec::new(),
        bin: bin.to_path_buf(),
    };
    // Undoes the claims so far: removes the (empty) directories this call created.
    let unclaim = |m: &Marker, e: DbError| {
        for o in m.outside() {
            if let Some(top) = &o.made_from {
                remove_made(&o.path, top);
            }
        }
        if let Some(top) = &m.created_dir {
            remove_made(dir, top);
        }
        e
    };
    if let Some(w) = &wal {
        match claim_outside(w, WAL_SUBDIR, &trust) {
            Ok(c) => marker.wal_dir = Some(c),
            Err(e) => return Err(unclaim(&marker, e)),
        }
    }
    for t in &tablespaces {
        match claim_outside(t, TS_SUBDIR, &trust) {
            Ok(c) => marker.tablespaces.push(c),
            Err(e) => return Err(unclaim(&marker, e)),
        }
    }
    if let Err(e) = marker.write(dir) {
        return Err(unclaim(&marker, e));
    }
    Ok(marker)
}

/// A WAL or tablespace directory: one the user made gets iogauge's own `sub` inside it (the
/// user's directory and what else it holds are left alone); a new one is created and used.
fn claim_outside(p: &Path, sub: &str, trust: &Trust) -> Result<Claimed, DbError> {
    not_a_dir_above(p)?;
    trust.check_above(p)?;
    match std::fs::symlink_metadata(p) {
        Ok(_) => {
            trust.check(p, Kind::Dir, false)?;
            let s = p.join(sub);
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&s)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => DbError::dir(
                        &s,
                        "already there (left by an earlier iogauge?); remove it or choose another directory",
                    ),
                    _ => DbError::io(&s, e),
                })?;
            Ok(Claimed {
                made_from: Some(s.clone()),
                path: s,
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Claimed {
            made_from: Some(make_dirs(p)?),
            path: p.to_path_buf(),
        }),
        Err(e) => Err(DbError::io(p, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(path: &str, from: Option<&str>) -> Claimed {
        Claimed {
            path: path.into(),
            made_from: from.map(Into::into),
        }
    }

    #[test]
    fn marker_round_trip() {
        let dir = Path::new("/x/pg");
        for m in [
            Marker {
                created_dir: Some("/x/pg".into()),
                wal_dir: None,
                tablespaces: Vec::new(),
                bin: "/usr/lib/postgresql/15/bin".into(),
            },
            Marker {
                created_dir: Some("/x".into()),
                wal_dir: Some(c("/u03/wal/iogauge-wal", Some("/u03/wal/iogauge-wal"))),
                tablespaces: vec![c("/u04/ts", None), c("/u05/a/ts", Some("/u05/a"))],
                bin: "/usr/bin".into(),
            },
            Marker {
                created_dir: None,
                wal_dir: None,
                tablespaces: Vec::new(),
                bin: "/usr/bin".into(),
            },
        ] {
            assert_eq!(Marker::parse(&m.render(), dir), Some(m));
        }
        assert_eq!(Marker::parse("something else\n", dir), None);
        assert_eq!(Marker::parse("iogauge-pg 1\nbin=/x\n", dir), None);
        // A created_tablespace line without its tablespace line is not a marker iogauge wrote.
        assert_eq!(
            Marker::parse(
                "iogauge-pg 1\ncreated_dir=1\ncreated_tablespace=1\nbin=/x\n",
                dir
            ),
            None
        );
    }

    /// An older iogauge's marker: no `…_from` lines; what it created is the path itself. A
    /// `…_from` that is not above its path removes no more than the path.
    #[test]
    fn older_markers_and_stray_tops() {
        let old = "iogauge-pg 1\ncreated_dir=1\nwal_dir=/w\ncreated_wal_dir=1\n\
                   tablespace=/t\ncreated_tablespace=0\nbin=/b\n";
        let m = Marker::parse(old, Path::new("/x/pg")).unwrap();
        assert_eq!(m.created_dir, Some("/x/pg".into()));
        assert_eq!(m.wal_dir, Some(c("/w", Some("/w"))));
        assert_eq!(m.tablespaces, vec![c("/t", None)]);
        let stray = "iogauge-pg 1\ncreated_dir=1\ncreated_dir_from=/etc\n\
                     tablespace=/t/ts\ncreated_tablespace=1\ntablespace_from=/u\nbin=/b\n";
        let m = Marker::parse(stray, Path::new("/x/pg")).unwrap();
        assert_eq!(m.created_dir, Some("/x/pg".into()));
        assert_eq!(m.tablespaces, vec![c("/t/ts", Some("/t/ts"))]);
    }

    #[test]
    fn made_directories_go_up_to_the_first_one_in_use() {
        let base = std::env::temp_dir().join(format!("iogauge-marker-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let deep = base.join("a/b/c");
        assert_eq!(make_dirs(&deep).unwrap(), base.join("a"));
        std::fs::write(base.join("a/keep"), "user").unwrap();
        remove_made(&deep, &base.join("a"));
        assert!(!base.join("a/b").exists() && base.join("a/keep").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
