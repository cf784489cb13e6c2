//! Connection strings and connecting: parse a DSN, render a `postgres::Config` without its
//! password, and connect with an error that names the server and the fix. Passwords in any
//! text are masked by `iogauge_model::secret` (the one masking function iogauge uses).

use crate::error::{error_text, DbError};
use iogauge_model::secret::redact_dsn;
use postgres::config::Host;
use postgres::{Client, Config, NoTls};
use std::time::Duration;

/// How long a connection attempt may take before the server counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Parses a libpq connection string (`postgres://user:pw@host:port/db` or `host=… user=…`).
/// An empty DSN means libpq's defaults from the environment (PGHOST, PGUSER, …) are not
/// applied by rust-postgres; the caller passes them in as a DSN when wanted.
pub fn parse_dsn(dsn: &str) -> Result<Config, DbError> {
    let mut cfg: Config = dsn.parse().map_err(|e: postgres::Error| DbError::Dsn {
        dsn: redact_dsn(dsn),
        // The parser quotes the string back ("unknown option `u:pw@h…`"): all of it is DSN.
        why: redact_dsn(&error_text(&e)),
    })?;
    if cfg.get_connect_timeout().is_none() {
        cfg.connect_timeout(CONNECT_TIMEOUT);
    }
    Ok(cfg)
}

/// A server's description without its password: `user@host:port/dbname`, a unix socket
/// directory as the host. Used in every message that names a server. The whole is masked
/// as a DSN too: a mistyped URL (`postgres://@/:pw@host/`) parses with its password inside
/// the database name.
pub fn describe(cfg: &Config) -> String {
    let hosts: Vec<String> = cfg
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(s) => after_at(s).to_string(),
            Host::Unix(p) => p.display().to_string(),
        })
        .collect();
    let host = if hosts.is_empty() {
        "localhost".to_string()
    } else {
        hosts.join(",")
    };
    let port = cfg
        .get_ports()
        .first()
        .map_or(String::new(), |p| format!(":{p}"));
    let user = cfg.get_user().map_or(String::new(), |u| format!("{u}@"));
    let db = cfg
        .get_dbname()
        .map_or(String::new(), |d| format!("/{}", after_at(d)));
    redact_dsn(&format!("{user}{host}{port}{db}"))
}

/// A host or database name with what comes before its last `@` masked: `u:p@w@h` parses as
/// password `p` on host `w@h`, and `u:p@:/w@h/db` with the rest in the database's name. No
/// host holds an `@`, and a name that does is taken to hold the rest of a password.
fn after_at(name: &str) -> std::borrow::Cow<'_, str> {
    match name.rfind('@') {
        Some(at) => format!("***{}", &name[at..]).into(),
        None => name.into(),
    }
}

/// Connects, with an error that names the server (no password) in one line.
pub fn connect(cfg: &Config) -> Result<Client, DbError> {
    cfg.connect(NoTls).map_err(|e| DbError::Connect {
        server: describe(cfg),
        why: error_text(&e),
    })
}

/// An error from a connected client, naming the server.
pub(crate) fn server_err(cfg: &Config, e: &postgres::Error) -> DbError {
    DbError::Server {
        server: describe(cfg),
        why: error_text(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_leaves_out_the_password() {
        let cfg = parse_dsn("postgres://bench:s3cret@dbhost:5433/bench").unwrap();
        assert_eq!(describe(&cfg), "bench@dbhost:5433/bench");
        let cfg = parse_dsn("host=/tmp/x user=u dbname=d").unwrap();
        assert_eq!(describe(&cfg), "u@/tmp/x/d");
        let cfg = parse_dsn("postgres://@/:s3cret@%2Ftmp%2Fnosock/").unwrap();
        assert!(!describe(&cfg).contains("s3cret"), "{}", describe(&cfg));
    }

    #[test]
    fn bad_dsn_is_a_usage_error_without_the_password() {
        for dsn in [
            "postgres://u:s3cret@h:notaport/db",
            "garbage://u:s3cret@x",
            "postgres:/u:s3cret@x/db",
            "u:s3cret@host/db",
            "PASSWORD=s3cret host=h",
            "host=h password='s3cret",
            "postgres::s3cret@%2Ftmp%2Fnosock/?password=s3cret",
            "postgres:/':s3cret@h/db",
        ] {
            let e = parse_dsn(dsn).unwrap_err();
            assert!(e.is_usage(), "{dsn}");
            let m = e.to_string();
            assert!(!m.contains("s3cret") && !m.contains('\n'), "{m}");
        }
    }

    /// Issue #44, rows M3 and 3: a password of any characters is masked whole, and the
    /// error still says what is wrong with the DSN.
    #[test]
    fn a_bad_dsn_keeps_its_reason_and_masks_any_password() {
        for pw in [
            "s3 cr", "s3\tcr", "s3\ncr", "s3\rcr", "s3@cr", "s3:cr", "s3/cr", "s3%cr",
        ] {
            for (dsn, why) in [
                (
                    format!("postgres://u:{pw}@h:notaport/db"),
                    "invalid value for option `port`",
                ),
                (
                    format!("postgres://u:{pw}@h/db?foo=bar"),
                    "unknown option `foo`",
                ),
                (
                    format!("postgres://u:{pw}@h/db?sslmode=bogus"),
                    "option `sslmode`",
                ),
                (
                    format!("host=h password='{pw}' port=x"),
                    "invalid value for option `port`",
                ),
            ] {
                let m = parse_dsn(&dsn).unwrap_err().to_string();
                assert!(m.contains(why), "{dsn:?}: {m}");
                assert!(!m.contains("s3") && !m.contains("cr@"), "{dsn:?}: {m}");
            }
            let cfg = parse_dsn(&format!("postgres://u:{pw}@h:5433/db")).unwrap();
            let d = describe(&cfg);
            assert!(d == "u@h:5433/db" || d == "u@***@h:5433/db", "{pw:?}: {d}");
        }
    }
}
