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
