//! The PostgreSQL layer's errors: each names the directory or the server (password left out)
//! and, where there is one, the way out.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(
        "PostgreSQL server binaries (initdb, postgres, pg_ctl) not found on PATH or under \
         {searched}; install them, e.g. `apt-get install postgresql`"
    )]
    NoPostgres { searched: String },
    #[error(
        "MariaDB server binaries (mariadbd, mariadb-install-db) not found {searched}; install \
         them, e.g. `apt-get install mariadb-server`, or name their directory with --mysql-bin"
    )]
    NoMariadb { searched: String },
    #[error("cannot connect to MariaDB at {server}: {why}; check the DSN and that the server is running")]
    MariaConnect { server: String, why: String },
    #[error("MariaDB at {server}: {why}")]
    Maria { server: String, why: String },
    #[error("{path}: {why}")]
    Dir { path: PathBuf, why: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{what} failed (see {log}): {why}")]
    Command {
        what: String,
        log: PathBuf,
        why: String,
    },
    /// A program iogauge ran that misbehaved (hung, or printed far too much).
    #[error("{path}: {why}")]
    Program { path: PathBuf, why: String },
    #[error("PostgreSQL server on {dir} did not come up: {why}")]
    Start { dir: PathBuf, why: String },
    #[error("invalid connection string {dsn}: {why}")]
    Dsn { dsn: String, why: String },
    #[error("cannot connect to PostgreSQL at {server}: {why}; check the DSN and that the server is running")]
    Connect { server: String, why: String },
    #[error("PostgreSQL at {server}: {why}")]
    Server { server: String, why: String },
    #[error("{what}: {why}")]
    Layout { what: String, why: String },
    #[error(
        "{0:?} is not NAME=VALUE with a PostgreSQL parameter name and a one-line value, \
         as in shared_buffers=64MB"
    )]
    Setting(String),
    #[error("{setting}: {why}")]
    BadSetting { setting: String, why: String },
    #[error("stopped by Ctrl-C while {during}")]
    Interrupted { during: String },
    #[error("memory cgroup {path}: {why}")]
    Cgroup { path: PathBuf, why: String },
    #[error("{0}")]
    Usage(String),
    #[error("cannot start thread: {0}")]
    Thread(io::Error),
    /// The machine's memory could not be read (the data set is weighed against it).
    #[error(transparent)]
    Memory(#[from] iogauge_probe::SampleError),
    /// What a failed or stopped step removed again, before the reason (its source).
    #[error("{note}")]
    Noted {
        note: String,
        #[source]
        source: Box<DbError>,
    },
    /// What was being done when the source failed.
    #[error("{what}")]
    Context {
        what: String,
        #[source]
        source: Box<DbError>,
    },
    /// A failed step whose clean-up failed too (the clean-up's error is the source).
    #[error("{what}")]
    Cleanup {
        what: String,
        #[source]
        source: Box<DbError>,
    },
}

impl From<iogauge_trust::TrustError> for DbError {
    /// A path refused by the trust rule is the user's to fix (exit 2); an I/O error met
    /// while judging it is the system's.
    fn from(e: iogauge_trust::TrustError) -> Self {
        match e {
            iogauge_trust::TrustError::Refused { path, why } => DbError::Dir { path, why },
            iogauge_trust::TrustError::Io { path, source } => DbError::Io { path, source },
        }
    }
}

impl DbError {
    /// True when the user asked for something impossible as written (exit code 2): a wrong
    /// DSN, no PostgreSQL installed, a directory iogauge did not create.
    pub fn is_usage(&self) -> bool {
        if let DbError::Noted { source, .. } | DbError::Context { source, .. } = self {
            return source.is_usage();
        }
        matches!(
            self,
            DbError::NoPostgres { .. }
                | DbError::NoMariadb { .. }
                | DbError::MariaConnect { .. }
                | DbError::Dir { .. }
                | DbError::Dsn { .. }
                | DbError::Connect { .. }
                | DbError::Setting(_)
                | DbError::BadSetting { .. }
                | DbError::Usage(_)
        )
    }

    /// Whether this is Ctrl-C (or SIGTERM) stopping the work, not a failure.
    pub fn is_interrupted(&self) -> bool {
        match self {
            DbError::Noted { source, .. } | DbError::Context { source, .. } => {
                source.is_interrupted()
            }
            e => matches!(e, DbError::Interrupted { .. }),
        }
    }

    /// Says what was cleaned up when Ctrl-C stopped the work; other errors pass unchanged.
    pub fn noting(self, note: impl FnOnce() -> String) -> DbError {
        if self.is_interrupted() {
            DbError::Noted {
                note: note(),
                source: Box::new(self),
            }
        } else {
            self
        }
    }

    pub(crate) fn interrupted(during: impl Into<String>) -> Self {
        DbError::Interrupted {
            during: during.into(),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        DbError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn dir(path: impl Into<PathBuf>, why: impl Into<String>) -> Self {
        DbError::Dir {
            path: path.into(),
            why: why.into(),
        }
    }
}

/// An error and its causes on one line, as `anyhow`'s `{:#}` shows them.
pub fn chain_text(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

/// One line for a client error: the error, its causes (tokio-postgres puts the reason for a
/// failed connect in the source, not in `Display`), and a server error's detail and hint, all
/// joined with ": " so a terminal shows one line.
pub fn error_text(e: &postgres::Error) -> String {
    let mut out = match e.as_db_error() {
        Some(db) => db.to_string(),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(c) = src {
                s.push_str(": ");
                s.push_str(&c.to_string());
                src = c.source();
            }
            s
        }
    };
    out = out.replace('\n', ": ");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_are_the_users_fault() {
        assert!(DbError::NoPostgres {
            searched: "x".into()
        }
        .is_usage());
        assert!(DbError::dir("/x", "not empty").is_usage());
        assert!(!DbError::io("/x", io::Error::other("boom")).is_usage());
        assert!(!DbError::Server {
            server: "s".into(),
            why: "gone".into()
        }
        .is_usage());
    }

    #[test]
    fn no_postgres_message_says_how_to_install() {
        let m = DbError::NoPostgres {
            searched: "/usr/lib/postgresql/*/bin".into(),
        }
        .to_string();
        assert!(m.contains("apt-get install postgresql"), "{m}");
    }
}
