//! Finding the PostgreSQL server binaries: on PATH or under /usr/lib/postgresql/*/bin (Debian
//! and Ubuntu keep one directory per major version there and put none of it on PATH), newest
//! major version first.

use crate::error::PgError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian-style packages install each major version's binaries.
pub const DEBIAN_ROOT: &str = "/usr/lib/postgresql";

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
    pub fn find() -> Result<PgBin, PgError> {
        let path: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        PgBin::find_in(&path, Some(Path::new(DEBIAN_ROOT)))
    }

    /// The newest PostgreSQL in the directories `path` or in `root/*/bin`.
    pub fn find_in(path: &[PathBuf], root: Option<&Path>) -> Result<PgBin, PgError> {
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
        let mut best: Option<PgBin> = None;
        for dir in dirs {
            if !["initdb", "postgres", "pg_ctl"]
                .iter()
                .all(|b| is_executable(&dir.join(b)))
            {
                continue;
            }
            let Some(version) = version_of(&dir.join("postgres")) else {
                continue;
            };
            let Some(major) = parse_major(&version) else {
                continue;
            };
            if best.as_ref().is_none_or(|b| major > b.major) {
                best = Some(PgBin {
                    dir,
                    major,
                    version,
                });
            }
        }
        best.ok_or_else(|| {
            let mut searched: Vec<String> = Vec::new();
            if !path.is_empty() {
                searched.push("PATH".into());
            }
            if let Some(root) = root {
                searched.push(format!("{}/*/bin", root.display()));
            }
            PgError::NoPostgres {
                searched: if searched.is_empty() {
                    "(an empty search path)".into()
                } else {
                    searched.join(" and ")
                },
            }
        })
    }

    /// The PostgreSQL in `dir` exactly (`--pg-bin DIR`): `initdb`, `postgres` and `pg_ctl`
    /// must be there and `postgres --version` must answer. The error names `flag`.
    pub fn at(flag: &str, dir: &Path) -> Result<PgBin, PgError> {
        let bad = |why: &str| {
            PgError::Usage(format!(
                "{flag} {}: {why}; give the bin directory of a PostgreSQL 14 or newer \
                 (e.g. /usr/lib/postgresql/15/bin)",
                dir.display()
            ))
        };
        let missing: Vec<&str> = ["initdb", "postgres", "pg_ctl"]
            .into_iter()
            .filter(|b| !is_executable(&dir.join(b)))
            .collect();
        if !missing.is_empty() {
            return Err(bad(&format!("no executable {}", missing.join(", "))));
        }
        let version = version_of(&dir.join("postgres"))
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

fn version_of(postgres: &Path) -> Option<String> {
    let out = Command::new(postgres).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
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
