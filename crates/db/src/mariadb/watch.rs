//! What `iogauge watch` shows of a MariaDB run in progress: the load profile's rates since the
//! previous look, and the test sessions active now by wait event (`performance_schema`, as
//! the run's own sampler reads them). Its own connection on the private server's socket.

use super::activity;
use super::conn::MariaTarget;
use super::status::{snapshot, STATUS_SQL};
use crate::engine::EngineWatch;
use crate::error::DbError;
use iogauge_model::db::profile::LoadDelta;
use mysql::prelude::Queryable;
use mysql::Conn;
use std::collections::BTreeMap;
use std::path::Path;

/// The test sessions: every other client thread of the account running iogauge.
const SESSIONS_SQL: &str = "SELECT PROCESSLIST_ID FROM performance_schema.threads \
     WHERE TYPE = 'FOREGROUND' AND PROCESSLIST_USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1) \
     AND PROCESSLIST_ID <> CONNECTION_ID()";

/// `watch`'s connection to a private server, and whether it sees the sessions' waits.
pub struct MariaWatch {
    target: MariaTarget,
    conn: Conn,
    waits: Option<activity::Sight>,
}

impl MariaWatch {
    pub fn connect(socket: &Path) -> Result<MariaWatch, DbError> {
        let target = MariaTarget::socket(socket);
        let mut conn = target.connect()?;
        let waits = activity::available(&mut conn).map_err(|e| target.err(&e))?;
        Ok(MariaWatch {
            target,
            conn,
            waits,
        })
    }
}

impl EngineWatch for MariaWatch {
    fn counters(&mut self) -> Result<LoadDelta, DbError> {
        let rows: Vec<(String, String)> = self
            .conn
            .query(STATUS_SQL)
            .map_err(|e| self.target.err(&e))?;
        Ok(snapshot(&rows))
    }

    fn active(&mut self) -> Result<BTreeMap<String, u32>, DbError> {
        let err = |e: mysql::Error| self.target.err(&e);
        let mut active: BTreeMap<String, u32> = BTreeMap::new();
        if let Some(sight) = self.waits {
            let ids: Vec<u32> = self.conn.query(SESSIONS_SQL).map_err(err)?;
            let raw: Vec<activity::WaitRow> = self
                .conn
                .query(activity::sample_sql(&ids, sight))
                .map_err(err)?;
            for r in activity::rows(&raw, sight)
                .into_iter()
                .filter(|r| r.backend_type == "client backend")
            {
                *active
                    .entry(r.wait_event.unwrap_or_else(|| "CPU".into()))
                    .or_default() += 1;
            }
        }
        Ok(active)
    }
}
