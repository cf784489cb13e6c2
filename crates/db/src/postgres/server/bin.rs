//! Finding the PostgreSQL server binaries: on PATH or under /usr/lib/postgresql/*/bin (Debian
//! and Ubuntu keep one directory per major version there and put none of it on PATH), newest
//! major version first.

use crate::common::child::{bounded_output, Bounded};
use crate::error::DbError;
use iogauge_trust::{resolve, Kind, Trust};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where Debian-style packages install each major version's binaries.
pub const DEBIAN_ROOT: &str = "/usr/lib/postgresql";
const TOOLS: [&str; 3] = ["initdb", "postgres", "pg_ctl"];
/// `postgres --version` answers at once with one line: more time or output is not PostgreSQL.
const VERSION_TIME: Duration = Duration::from_secs(10);
const VERSION_BYTES: usize = 4096;

/// A directory holding `initdb`, `postgres` and `pg_ctl`, and their major version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgBin {
    pub dir: PathBuf,
    /// Major version (15 for 15.8).
    pub major: u32,
    /// `postgres --version` as printed, e.g. "postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)".
    pub version: String,
}

impl PgBin {
    /// The newest PostgreSQL on PATH or under /usr/lib/postgresql/*/bin.
    pub fn find() -> Result<PgBin, DbError> {
        let path: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        PgBin::find_in(&path, Some(Path::new(DEBIAN_ROOT)))
    }

    /// The newest PostgreSQL in the directories `path` or in `root/*/bin`. A directory that
    /// fails the trust rule (`trusted`) is passed over unrun; if no other is found, the
    /// error says why it was refused.
    pub fn find_in(path: &[PathBuf], root: Option<&Path>) -> Result<PgBin, DbError> {
        let (found, refused) = PgBin::all_in(path, root)?;
        let mut best: Option<PgBin> = None;
        for bin in found {
            if best.as_ref().is_none_or(|b| bin.major > b.major) {
                best = Some(bin);
            }
        }
        if let (None, Some(e)) = (&best, refused) {
            return Err(e);
        }
        best.ok_or_else(|| {
            let mut searched: Vec<String> = Vec::new();
            if !path.is_empty() {
                searched.push("PATH".into());
            }
            if let Some(root) = root {
                searched.push(format!("{}/*/bin", root.display()));
            }
            DbError::NoPostgres {
                searched: if searched.is_empty() {
                    "(an empty search path)".into()
                } else {
                    searched.join(" and ")
                },
            }
        })
    }

    /// Every PostgreSQL on PATH or under /usr/lib/postgresql/*/bin that passes the trust rule
    /// and answers `postgres --version`, in search order (`iogauge doctor` lists them).
    pub fn all() -> Vec<PgBin> {
        let path: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        PgBin::all_in(&path, Some(Path::new(DEBIAN_ROOT))).map_or_else(|_| Vec::new(), |(f, _)| f)
    }

    /// The PostgreSQLs in the directories `path` and in `root/*/bin`, and why the first one
    /// refused by the trust rule (`trusted`) was passed over unrun.
    fn all_in(
        path: &[PathBuf],
        root: Option<&Path>,
    ) -> Result<(Vec<PgBin>, Option<DbError>), DbError> {
        let mut dirs: Vec<PathBuf> = path.to_vec();
        if let Some(root) = root {
            if let Ok(rd) = std::fs::read_dir(root) {
                let mut versions: Vec<PathBuf> = rd
                    .filter_map(|e| e.ok())
                    .map(|e| e.path().join("bin"))
                    .collect();
                versions.sort();
                dirs.extend(versions);
            }
        }
        let (mut found, mut refused): (Vec<PgBin>, Option<DbError>) = (Vec::new(), None);
        for dir in dirs {
            if !TOOLS.iter().all(|b| is_executable(&dir.join(b))) {
                continue;
            }
            if let Err(e) = trusted(&dir) {
                refused.get_or_insert(e);
                continue;
            }
            let Some(version) = version_of(&dir.join("postgres"))? else {
                continue;
            };
            let Some(major) = parse_major(&version) else {
                continue;
            };
            if !found.iter().any(|b: &PgBin| b.version == version) {
                found.push(PgBin {
                    dir,
                    major,
                    version,
                });
            }
        }
        Ok((found, refused))
    }

    /// The PostgreSQL in `dir` exactly (`--pg-bin DIR`): `initdb`, `postgres` and `pg_ctl`
    /// must be there and `postgres --version` must answer. The error names `flag`.
    pub fn at(flag: &str, dir: &Path) -> Result<PgBin, DbError> {
        let bad = |why: &str| {
            DbError::Usage(format!(
                "{flag} {}: {why}; give the bin directory of a PostgreSQL 14 or newer \
                 (e.g. /usr/lib/postgresql/15/bin)",
                dir.display()
            ))
        };
        let missing: Vec<&str> = TOOLS
            .into_iter()
            .filter(|b| !is_executable(&dir.join(b)))
            .collect();
        if !missing.is_empty() {
            return Err(bad(&format!("no executable {}", missing.join(", "))));
        }
        trusted(dir).map_err(|e| DbError::Usage(format!("{flag} {}: {e}", dir.display())))?;
        let version = version_of(&dir.join("postgres"))?
            .ok_or_else(|| bad("`postgres --version` failed there"))?;
        let major = parse_major(&version)
            .ok_or_else(|| bad(&format!("unrecognised version \"{version}\"")))?;
        Ok(PgBin {
            dir: std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()),
            major,
            version,
        })
    }

    pub fn tool(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The trust rule (see `trust`) for a bin directory iogauge will run programs from, as root
/// when it is root: the directory, the three programs (where their links lead) and every
/// directory above them belong to root or this user, and nobody else may write to them.
fn trusted(dir: &Path) -> Result<(), DbError> {
    let t = Trust::new(None);
    let real = resolve(dir).map_err(|e| DbError::io(dir, e))?;
    t.check_above(&real)?;
    t.check(&real, Kind::Dir, false)?;
    for b in TOOLS {
        t.check_program(&dir.join(b))?;
    }
    Ok(())
}

/// `postgres --version`'s line; `None` if it fails. One that hangs or floods is killed
/// (see [`VERSION_TIME`]) and is an error naming it.
fn version_of(postgres: &Path) -> Result<Option<String>, DbError> {
    let mut cmd = Command::new(postgres);
    cmd.arg("--version").env("LC_ALL", "C");
    let gave_up = |what: String| {
        DbError::Program {
        path: postgres.to_path_buf(),
        why: format!("`postgres --version` {what} and was killed: not a working PostgreSQL server binary; give the bin directory of PostgreSQL 14 or newer"),
    }
    };
    match bounded_output(cmd, VERSION_BYTES, VERSION_TIME) {
        Ok((st, out)) => Ok(st
            .success()
            .then(|| String::from_utf8_lossy(&out).trim().to_string())),
        Err(Bounded::Failed) => Ok(None),
        Err(Bounded::TimedOut) => Err(gave_up(format!(
            "gave no answer within {} s",
            VERSION_TIME.as_secs()
        ))),
        Err(Bounded::TooLong) => Err(gave_up(format!(
            "printed more than {VERSION_BYTES} bytes (a version is one line)"
        ))),
    }
}

/// The major version in `postgres --version` output: "postgres (PostgreSQL) 15.8 (Debian …)"
/// gives 15; "postgres (PostgreSQL) 9.6.24" gives 9 (before 10 the major was two numbers;
/// iogauge needs 14+ anyway).
pub(crate) fn parse_major(version: &str) -> Option<u32> {
    let rest = version.split(')').nth(1)?.trim_start();
    let num: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    num.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_version_table() {
        for (s, want) in [
            (
                "postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)",
                Some(15),
            ),
            ("postgres (PostgreSQL) 17devel", Some(17)),
            ("postgres (PostgreSQL) 9.6.24", Some(9)),
            ("something else", None),
        ] {
            assert_eq!(parse_major(s), want, "{s}");
        }
    }

    #[test]
    fn an_explicit_directory_without_postgres_names_the_flag() {
        let e = PgBin::at("--pg-bin", Path::new("/nonexistent/bin")).unwrap_err();
        assert!(e.is_usage());
        let m = e.to_string();
        assert!(
            m.starts_with("--pg-bin /nonexistent/bin: no executable initdb, postgres, pg_ctl"),
            "{m}"
        );
    }

    #[test]
    fn empty_search_path_is_a_clear_error() {
        let e = PgBin::find_in(&[], None).unwrap_err();
        assert!(e.is_usage());
        let m = e.to_string();
        assert!(m.contains("apt-get install postgresql"), "{m}");
        assert!(m.contains("empty search path"), "{m}");
    }
}
