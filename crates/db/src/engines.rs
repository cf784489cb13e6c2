//! Which engine implements the seam ([`crate::engine`]) for each kind: one line an engine.

use crate::engine::DbEngine;
use crate::mariadb::engine::MariaDb;
use crate::postgres::engine::Postgres;
use iogauge_model::db::engine::Engine;

/// The engine of `kind`.
pub fn engine(kind: Engine) -> &'static dyn DbEngine {
    match kind {
        Engine::Postgres => &Postgres,
        Engine::Mariadb => &MariaDb,
    }
}

/// The engine a DSN names: MariaDB (or MySQL) for `mysql://…`, else PostgreSQL.
pub fn engine_of_dsn(dsn: &str) -> Engine {
    if crate::mariadb::is_mysql_dsn(dsn) {
        Engine::Mariadb
    } else {
        Engine::Postgres
    }
}

/// The engine when neither `--engine` nor a DSN names one.
pub const DEFAULT_ENGINE: Engine = Engine::Postgres;
