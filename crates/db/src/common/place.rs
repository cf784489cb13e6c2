//! Which server a `db` command works on — a private server in a directory, or an existing
//! server by DSN — and the checks of its directories, with errors that name the flag.

use crate::error::DbError;
use iogauge_trust::{resolve, Kind, Trust};
use std::path::{Path, PathBuf};

/// The server a command works on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    Private(PathBuf),
    Dsn(String),
}

impl Place {
    /// `--dsn` if given, else the directory (`--dir`, or the engine's default).
    pub fn of(dir: &Path, dsn: Option<&str>) -> Place {
        match dsn {
            Some(d) => Place::Dsn(d.to_string()),
            None => Place::Private(dir.to_path_buf()),
        }
    }
}

/// The places of a private cluster (`--dir`, `--wal-dir`, each `--target`): each given once
/// and none inside another, compared where they really are (symlinks above them resolved:
/// `A/link` and `A/real` are one directory). A tablespace inside the data directory is one
/// PostgreSQL warns about, a WAL directory inside the cluster's goes with it, and `db drop`
/// would remove a nested one twice, or the outer one with what the user keeps there.
pub fn check_overlaps(targets: &[PathBuf], dir: &Path, wal: Option<&Path>) -> Result<(), DbError> {
    let real = |p: &Path| {
        resolve(p)
            .or_else(|_| std::path::absolute(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let mut places: Vec<(&str, &Path, PathBuf)> = vec![("--dir", dir, real(dir))];
    places.extend(wal.map(|w| ("--wal-dir", w, real(w))));
    for t in targets {
        if t.as_os_str().is_empty() {
            return Err(DbError::Usage(
                "--target: an empty directory name; give DIR[,DIR...]".into(),
            ));
        }
        places.push(("--target", t, real(t)));
    }
    for (i, (flag, p, r)) in places.iter().enumerate() {
        let Some((other, q, s)) = places[..i]
            .iter()
            .find(|(_, _, s)| r.starts_with(s) || s.starts_with(r))
        else {
            continue;
        };
        let at = |p: &Path| p.display().to_string();
        return Err(DbError::Usage(if r == s && flag == other {
            let same = if p == q {
                String::new()
            } else {
                format!(" ({} is the same directory)", at(q))
            };
            format!(
                "{flag} {}: given twice{same}; give each directory once",
                at(p)
            )
        } else {
            format!(
                "{flag} {}: overlaps {other} {}; give a directory of its own (on another device to spread the data)",
                at(p),
                at(q)
            )
        }));
    }
    Ok(())
}

/// `flag`'s path must be a directory or not exist yet, under a directory (a regular file
/// there is the user's mistake, not an I/O failure), and where it is, nobody but root and
/// this user may change it or the directories above it (the rule in `trust`).
pub fn check_dir(flag: &str, p: &Path) -> Result<(), DbError> {
    a_dir(flag, p)?;
    let real = resolve(p).map_err(|e| DbError::io(p, e))?;
    Trust::new(None)
        .check_tree(&real, Kind::Dir, false)
        .map_err(|e| match e {
            iogauge_trust::TrustError::Refused { why, .. } => {
                DbError::Usage(format!("{flag} {}: {why}", p.display()))
            }
            e => e.into(),
        })
}

/// `flag`'s path is a directory, or nothing yet under a directory.
pub(crate) fn a_dir(flag: &str, p: &Path) -> Result<(), DbError> {
    let existing = p
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| std::fs::symlink_metadata(a).is_ok());
    match existing {
        Some(a) if !a.is_dir() => Err(DbError::Usage(format!(
            "{flag} {}: {}not a directory; give a new directory or an empty one",
            p.display(),
            if a == p {
                String::new()
            } else {
                format!("{} is ", a.display())
            }
        ))),
        _ => Ok(()),
    }
}
