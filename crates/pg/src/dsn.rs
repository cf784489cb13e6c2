//! Connection strings and connecting: parse a DSN, render a DSN or a `postgres::Config` without
//! its password, and connect with an error that names the server and the fix.

use crate::error::{error_text, PgError};
use postgres::config::Host;
use postgres::{Client, Config, NoTls};
use std::time::Duration;

/// How long a connection attempt may take before the server counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Parses a libpq connection string (`postgres://user:pw@host:port/db` or `host=… user=…`).
/// An empty DSN means libpq's defaults from the environment (PGHOST, PGUSER, …) are not
/// applied by rust-postgres; the caller passes them in as a DSN when wanted.
pub fn parse_dsn(dsn: &str) -> Result<Config, PgError> {
    let mut cfg: Config = dsn.parse().map_err(|e: postgres::Error| PgError::Dsn {
        dsn: redact_dsn(dsn),
        why: error_text(&e),
    })?;
    if cfg.get_connect_timeout().is_none() {
        cfg.connect_timeout(CONNECT_TIMEOUT);
    }
    Ok(cfg)
}

/// The DSN with any password replaced by `***`, in either syntax. Hand-written: the URL form
/// (`scheme://user:pw@host`, `?password=pw`) and the key/value form (`password=pw`,
/// `password='p w'`) are the only places libpq reads a password from a string.
pub fn redact_dsn(dsn: &str) -> String {
    let t = dsn.trim();
    if let Some((scheme, rest)) = t
        .split_once("://")
        .filter(|(s, _)| *s == "postgres" || *s == "postgresql")
    {
        let (auth_host, tail) = match rest.find(['/', '?']) {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        let auth_host = match auth_host.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{user}:***@{host}"),
                None => format!("{userinfo}@{host}"),
            },
            None => auth_host.to_string(),
        };
        let tail = match tail.split_once('?') {
            Some((path, query)) => {
                let q: Vec<String> = query
                    .split('&')
                    .map(|kv| match kv.split_once('=') {
                        Some((k, _)) if k == "password" => format!("{k}=***"),
                        _ => kv.to_string(),
                    })
                    .collect();
                format!("{path}?{}", q.join("&"))
            }
            None => tail.to_string(),
        };
        return format!("{scheme}://{auth_host}{tail}");
    }
    redact_key_value(t)
}

/// `password=…` in a key/value DSN becomes `password=***`; a quoted value may hold spaces and
/// `\'` escapes.
fn redact_key_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        let ws = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..ws]);
        rest = &rest[ws..];
        let Some(eq) = rest.find('=') else {
            out.push_str(rest);
            break;
        };
        let key = rest[..eq].trim();
        out.push_str(&rest[..=eq]);
        rest = rest[eq + 1..].trim_start();
        let end = value_end(rest);
        if key == "password" {
            out.push_str("***");
        } else {
            out.push_str(&rest[..end]);
        }
        rest = &rest[end..];
    }
    out
}

/// Byte length of the value at the start of `s`: up to whitespace, or a quoted string.
fn value_end(s: &str) -> usize {
    let b = s.as_bytes();
    if b.first() == Some(&b'\'') {
        let mut i = 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'\'' => return i + 1,
                _ => i += 1,
            }
        }
        return b.len();
    }
    s.find(char::is_whitespace).unwrap_or(s.len())
}

/// A server's description without its password: `user@host:port/dbname`, a unix socket
/// directory as the host. Used in every message that names a server.
pub fn describe(cfg: &Config) -> String {
    let hosts: Vec<String> = cfg
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(s) => s.clone(),
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
    let db = cfg.get_dbname().map_or(String::new(), |d| format!("/{d}"));
    format!("{user}{host}{port}{db}")
}

/// Connects, with an error that names the server (no password) in one line.
pub fn connect(cfg: &Config) -> Result<Client, PgError> {
    cfg.connect(NoTls).map_err(|e| PgError::Connect {
        server: describe(cfg),
        why: error_text(&e),
    })
}

/// An error from a connected client, naming the server.
pub(crate) fn server_err(cfg: &Config, e: &postgres::Error) -> PgError {
    PgError::Server {
        server: describe(cfg),
        why: error_text(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_table() {
        for (dsn, want) in [
            (
                "postgres://bench:s3cret@dbhost:5433/bench",
                "postgres://bench:***@dbhost:5433/bench",
            ),
            (
                "postgresql://bench@dbhost/bench",
                "postgresql://bench@dbhost/bench",
            ),
            (
                "postgres://u:p@h/db?sslmode=disable&password=x",
                "postgres://u:***@h/db?sslmode=disable&password=***",
            ),
            ("postgres://u:p@h", "postgres://u:***@h"),
            (
                "host=dbhost user=bench password=s3cret dbname=bench",
                "host=dbhost user=bench password=*** dbname=bench",
            ),
            (
                "host=h password='a b\\' c' dbname=d",
                "host=h password=*** dbname=d",
            ),
            ("password = x host=h", "password =*** host=h"),
            ("host=/run/pg", "host=/run/pg"),
        ] {
            let got = redact_dsn(dsn);
            assert_eq!(got, want, "{dsn}");
            assert!(!got.contains("s3cret"));
        }
    }

    #[test]
    fn describe_leaves_out_the_password() {
        let cfg = parse_dsn("postgres://bench:s3cret@dbhost:5433/bench").unwrap();
        assert_eq!(describe(&cfg), "bench@dbhost:5433/bench");
        let cfg = parse_dsn("host=/tmp/x user=u dbname=d").unwrap();
        assert_eq!(describe(&cfg), "u@/tmp/x/d");
    }

    #[test]
    fn bad_dsn_is_a_usage_error_without_the_password() {
        let e = parse_dsn("postgres://u:s3cret@h:notaport/db").unwrap_err();
        assert!(e.is_usage());
        let m = e.to_string();
        assert!(!m.contains("s3cret") && !m.contains('\n'), "{m}");
    }
}
