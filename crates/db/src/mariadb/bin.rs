//! The MariaDB binaries a private server is made and run with: `--mysql-bin DIR`, else the
//! first `mariadbd` on PATH or in /usr/sbin (where Debian puts it), with `mariadb-install-db`
//! beside it or on PATH. iogauge runs them as itself (root when it is root), so each must pass
//! the trust rule (`iogauge-trust`: owned by root or this user, nobody else may write to it or
//! a directory above it) before it is run at all, even for `--version`: one that fails it is
//! passed over on PATH, and refused as `--mysql-bin`.

use crate::common::child::bounded_output;
use crate::error::DbError;
use iogauge_trust::Trust;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Server and installer names, MariaDB's first (MySQL 5.7's names after them).
const SERVERS: [&str; 2] = ["mariadbd", "mysqld"];
const INSTALLERS: [&str; 2] = ["mariadb-install-db", "mysql_install_db"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MariaBin {
    pub server: PathBuf,
    pub install: PathBuf,
    /// As `mariadbd --version` says it: `10.11.19-MariaDB-0+deb12u1`.
    pub version: String,
}

impl MariaBin {
    /// The binaries in `dir` (`--mysql-bin`), or found on PATH and in the sbin directories.
    pub fn find(dir: Option<&Path>) -> Result<MariaBin, DbError> {
        // Absolute: the server starts in its own directory, where a relative path means
        // something else.
        let dir = dir
            .map(|d| std::path::absolute(d).map_err(|e| DbError::io(d, e)))
            .transpose()?;
        let dir = dir.as_deref();
        let dirs: Vec<PathBuf> = match dir {
            Some(d) => vec![d.to_path_buf(), d.join("../bin"), d.join("../scripts")],
            None => std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
                .unwrap_or_default()
                .into_iter()
                .chain(["/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"].map(PathBuf::from))
                .collect(),
        };
        // The first of `names` in `dirs` that passes the trust rule; one that fails it is
        // remembered, to say why when no other is found.
        let refused = std::cell::RefCell::new(None::<DbError>);
        let first = |names: &[&str]| -> Option<PathBuf> {
            dirs.iter()
                .flat_map(|d| names.iter().map(move |n| d.join(n)))
                .filter(|p| p.is_file())
                .find(|p| match Trust::new(None).check_program(p) {
                    Ok(()) => true,
                    Err(e) => {
                        refused.borrow_mut().get_or_insert(e.into());
                        false
                    }
                })
        };
        let searched = match dir {
            Some(d) => format!("in --mysql-bin {}", d.display()),
            None => "on PATH or in /usr/sbin".into(),
        };
        let found = (first(&SERVERS), first(&INSTALLERS));
        if let (Some(e), None, _) | (Some(e), _, None) = (refused.take(), &found.0, &found.1) {
            return Err(match (dir, e) {
                (Some(d), DbError::Dir { why, path }) => DbError::Usage(format!(
                    "--mysql-bin {}: {}: {why}",
                    d.display(),
                    path.display()
                )),
                (_, e) => e,
            });
        }
        let (Some(server), Some(install)) = found else {
            if let Some(mysqld) = first(&SERVERS[1..]).filter(|_| dir.is_some()) {
                // MySQL 8 has no installer: it initializes with `mysqld --initialize`, which a
                // private server here does not do (no MySQL 8 to build it against).
                return Err(DbError::Usage(format!(
                    "--mysql-bin: {} has no mysql_install_db beside it (MySQL 8 or later?); iogauge makes private servers with MariaDB's or MySQL 5.7's installer: start that server yourself and give --dsn mysql://user@host:port/db (with :password after the user)",
                    mysqld.display()
                )));
            }
            return Err(DbError::NoMariadb { searched });
        };
        let version = version(&server).ok_or_else(|| DbError::Program {
            path: server.clone(),
            why: "`--version` did not say a MariaDB version; is this a MariaDB server binary?"
                .into(),
        })?;
        Ok(MariaBin {
            server,
            install,
            version,
        })
    }
}

/// `mariadbd --version`: `mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu …`.
fn version(server: &Path) -> Option<String> {
    let mut cmd = Command::new(server);
    cmd.arg("--version");
    let (status, out) = bounded_output(cmd, 4096, Duration::from_secs(10)).ok()?;
    if !status.success() {
        return None;
    }
    parse_version(&String::from_utf8_lossy(&out))
}

fn parse_version(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    words.find(|w| *w == "Ver")?;
    words.next().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_from_its_line() {
        assert_eq!(
            parse_version("/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n"),
            Some("10.11.19-MariaDB-0+deb12u1".into())
        );
        assert_eq!(parse_version("nothing here"), None);
    }

    #[test]
    fn a_mysqld_without_an_installer_points_at_dsn() {
        let d = std::env::temp_dir().join(format!("iogauge-mysql8-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("mysqld"), b"").unwrap();
        let e = MariaBin::find(Some(&d)).unwrap_err();
        std::fs::remove_dir_all(&d).unwrap();
        assert!(e.is_usage(), "{e}");
        let e = e.to_string();
        assert!(
            e.starts_with("--mysql-bin: ") && e.contains("--dsn mysql://"),
            "{e}"
        );
    }

    #[test]
    fn a_directory_without_them_is_a_usage_error_naming_the_flag() {
        let e = MariaBin::find(Some(Path::new("/nonexistent"))).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(e.to_string().contains("--mysql-bin /nonexistent"), "{e}");
    }
}
