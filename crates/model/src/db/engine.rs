//! Which database a run measured: PostgreSQL, or MariaDB/MySQL on InnoDB. Recorded in every
//! stored database run (documents from before it read as PostgreSQL, the only engine then).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    #[default]
    Postgres,
    /// MariaDB (or MySQL) with InnoDB tables.
    Mariadb,
}

impl Engine {
    pub const ALL: [Engine; 2] = [Engine::Postgres, Engine::Mariadb];

    /// As `--engine` and the JSON spell it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Postgres => "postgres",
            Engine::Mariadb => "mariadb",
        }
    }

    /// As a DBA names it.
    pub fn product(self) -> &'static str {
        match self {
            Engine::Postgres => "PostgreSQL",
            Engine::Mariadb => "MariaDB",
        }
    }

    /// PostgreSQL, the default (and what documents from before the engine read as).
    pub fn is_postgres(&self) -> bool {
        *self == Engine::Postgres
    }

    /// What its log is called: PostgreSQL's WAL, InnoDB's redo.
    pub fn log(self) -> &'static str {
        match self {
            Engine::Postgres => "WAL",
            Engine::Mariadb => "redo",
        }
    }

    /// Where a private server lives when no `--dir` is given (relative to the working
    /// directory).
    pub fn default_dir(self) -> &'static str {
        match self {
            Engine::Postgres => "iogauge-pg",
            Engine::Mariadb => "iogauge-mariadb",
        }
    }

    /// The size of a data page: one row of the SLOB table per page.
    pub fn page_bytes(self) -> u64 {
        match self {
            Engine::Postgres => 8192,
            Engine::Mariadb => 16384,
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Engine {
    type Err = String;

    fn from_str(s: &str) -> Result<Engine, String> {
        match s.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" | "pg" => Ok(Engine::Postgres),
            "mariadb" | "mysql" | "innodb" => Ok(Engine::Mariadb),
            _ => Err(format!(
                "{} is not an engine: give postgres or mariadb",
                iogauge_stats::echo::quoted(s)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_old_documents_are_postgres() {
        for e in Engine::ALL {
            assert_eq!(e.name().parse::<Engine>(), Ok(e));
            assert_eq!(serde_json::to_value(e).unwrap(), e.name());
        }
        assert_eq!("MySQL".parse::<Engine>(), Ok(Engine::Mariadb));
        assert!("oracle"
            .parse::<Engine>()
            .unwrap_err()
            .contains("postgres or mariadb"));
        assert_eq!(Engine::default(), Engine::Postgres);
    }
}
