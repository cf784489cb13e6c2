//! Reaching a MariaDB server: a private one by its unix socket as iogauge's own account (the
//! server's `unix_socket` plugin checks the peer's uid, so there is no password), or the
//! user's by `--dsn mysql://user:pw@host:port/db`; errors that name the server without its
//! password.

use crate::error::DbError;
use iogauge_model::secret::{redact_dsn, redact_secrets};
use mysql::{Conn, Opts, OptsBuilder};
use std::path::Path;
use std::time::Duration;

/// How long a connection attempt may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A server to connect to, and how to name it in messages.
#[derive(Clone, Debug)]
pub struct MariaTarget {
    pub opts: Opts,
    /// The socket, or the DSN without its password.
    pub name: String,
}

impl MariaTarget {
    /// A private server's socket, as the OS account running iogauge.
    pub fn socket(sock: &Path) -> MariaTarget {
        let opts = OptsBuilder::new()
            .socket(Some(sock.to_string_lossy()))
            .user(Some(os_user()))
            .prefer_socket(true)
            .tcp_connect_timeout(Some(CONNECT_TIMEOUT));
        MariaTarget {
            opts: opts.into(),
            name: sock.display().to_string(),
        }
    }

    /// `mysql://user:pw@host:port/db` (or `mariadb://…`). Named by what was parsed
    /// (`mysql://user@host:port/db`), never by the text given: the URL parser drops tabs and
    /// line breaks and encodes blanks, so a password holding them still connects, and a
    /// mask working on the text could miss part of it.
    pub fn dsn(dsn: &str) -> Result<MariaTarget, DbError> {
        let url = match dsn.strip_prefix("mariadb://") {
            Some(rest) => format!("mysql://{rest}"),
            None => dsn.to_string(),
        };
        let opts = Opts::from_url(&url).map_err(|e| DbError::Dsn {
            dsn: redact_dsn(dsn),
            // The way out, worded so that no mask takes it for a DSN with a password.
            why: format!(
                "{}; give mysql://user@host:port/database with `:password` after the user (`/`, `?`, `#`, `@` in it as %2F, %3F, %23, %40)",
                redact_secrets(&e.to_string())
            ),
        })?;
        let opts: Opts = OptsBuilder::from_opts(opts)
            .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
            .into();
        let name = describe(&opts);
        Ok(MariaTarget { opts, name })
    }

    /// Connects, with an error that names the server (no password) in one line.
    pub fn connect(&self) -> Result<Conn, DbError> {
        Conn::new(self.opts.clone()).map_err(|e| DbError::MariaConnect {
            server: self.name.clone(),
            why: one_line(&e),
        })
    }

    /// An error from a connected session, naming the server.
    pub fn err(&self, e: &mysql::Error) -> DbError {
        DbError::Maria {
            server: self.name.clone(),
            why: one_line(e),
        }
    }
}

/// A server's description without its password: `mysql://user@host:port/db`, masked as a
/// DSN too (a user name may hold what looks like one).
fn describe(opts: &Opts) -> String {
    let user = opts.get_user().map_or(String::new(), |u| format!("{u}@"));
    let db = opts
        .get_db_name()
        .map_or(String::new(), |d| format!("/{d}"));
    redact_dsn(&format!(
        "mysql://{user}{}:{}{db}",
        opts.get_ip_or_hostname(),
        opts.get_tcp_port()
    ))
}

/// Whether a DSN names a MySQL/MariaDB server (its scheme).
pub fn is_mysql_dsn(dsn: &str) -> bool {
    let d = dsn.trim_start().to_ascii_lowercase();
    d.starts_with("mysql://") || d.starts_with("mariadb://")
}

/// An error in one line, any password masked.
pub(crate) fn one_line(e: &mysql::Error) -> String {
    redact_secrets(&e.to_string().replace('\n', " "))
}

/// The name of the account this process runs as (what `unix_socket` authenticates).
pub fn os_user() -> String {
    // SAFETY: geteuid(2) cannot fail.
    let uid = unsafe { libc::geteuid() };
    iogauge_trust::user_name(uid).unwrap_or_else(|| uid.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsns_parse_and_never_show_their_password() {
        let t = MariaTarget::dsn("mysql://bench:s3cret@db1:3307/bench").unwrap();
        assert_eq!(t.opts.get_tcp_port(), 3307);
        assert_eq!(t.name, "mysql://bench@db1:3307/bench");
        assert!(MariaTarget::dsn("mariadb://u@h/db").is_ok());
        let e = MariaTarget::dsn("mysql://u:s3cret@h:notaport/db").unwrap_err();
        assert!(e.is_usage() && !e.to_string().contains("s3cret"), "{e}");
        assert!(is_mysql_dsn("MySQL://x") && !is_mysql_dsn("postgres://x"));
    }

    /// Issue #44, M3: the URL parser drops TAB, CR and LF and encodes a blank, so these
    /// passwords connect; the name is the parsed server's, without any of it.
    #[test]
    fn a_password_of_any_characters_is_never_in_the_name() {
        for pw in [
            "s3\tcr",
            "s3\rcr",
            "s3\ncr",
            "s3 cr",
            "s3%40cr",
            "s3:cr",
            "s3@cr",
            "s3\u{e9}cr",
        ] {
            let t = MariaTarget::dsn(&format!("mariadb://bench:{pw}@db1:3307/bench")).unwrap();
            assert_eq!(t.name, "mysql://bench@db1:3307/bench", "{pw:?}");
            assert!(
                t.opts.get_pass().is_some_and(|p| p.starts_with("s3")),
                "{pw:?}"
            );
        }
        // A parse error keeps its reason (what is wrong), without the password.
        for (dsn, why) in [
            ("mysql://u:s3 cr@h:notaport/db", "invalid port number"),
            (
                "mysql://u:s3\tcr@h/db?foo=bar",
                "Unknown URL parameter `foo'",
            ),
            (
                "mysql://u:s3\ncr@h/db?prefer_socket=maybe",
                "Invalid value `maybe'",
            ),
            ("mysql://u:s3cr@/db", "empty host"),
        ] {
            let e = MariaTarget::dsn(dsn).unwrap_err();
            let m = e.to_string();
            assert!(e.is_usage() && m.contains(why), "{dsn:?}: {m}");
            assert!(!m.contains("s3") && !m.contains("cr@"), "{dsn:?}: {m}");
        }
    }
}
