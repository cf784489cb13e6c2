//! What `iogauge watch` shows of a database run in progress, whichever engine's: the load
//! profile's rates since the previous look and the test sessions active now by wait event,
//! read on a connection of its own to the private server's socket (the run's own samplers
//! are separate) through the engine's [`EngineWatch`].

use crate::engine::EngineWatch;
use crate::engines::engine;
use crate::error::DbError;
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::live::{DbNow, SocketAddr};
use std::time::Instant;

/// A look at a private server of either engine.
pub struct DbWatch {
    server: Box<dyn EngineWatch>,
    prev: Option<(Instant, LoadDelta)>,
}

impl DbWatch {
    pub fn connect(addr: &SocketAddr) -> Result<DbWatch, DbError> {
        Ok(DbWatch {
            server: engine(addr.engine).watch(addr)?,
            prev: None,
        })
    }

    /// The rates since the previous look (`None` on the first), and who is active now.
    pub fn look(&mut self) -> Result<DbNow, DbError> {
        let now = Instant::now();
        let cur = self.server.counters()?;
        let rates = self.prev.as_ref().map(|(t, p)| {
            cur.since(p)
                .rates(now.duration_since(*t).as_secs_f64().max(1e-6))
        });
        self.prev = Some((now, cur));
        Ok(DbNow {
            rates,
            active: self.server.active()?,
        })
    }
}
