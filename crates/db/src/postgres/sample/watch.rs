//! What `iogauge watch` reads of a private cluster at each look (see `common::watch`): the
//! load profile's counters and how many test sessions are active right now, by wait event.

use crate::common::aas::SESSION_APP;
use crate::engine::EngineWatch;
use crate::error::DbError;
use crate::postgres::dsn::{connect, server_err};
use crate::postgres::sample::profile::{snapshot, snapshot_sql};
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::live::SocketAddr;
use postgres::{Client, Config, Statement};
use std::collections::BTreeMap;

/// The client configuration of a private cluster's socket.
pub fn socket_config(addr: &SocketAddr) -> Config {
    let mut c = Config::new();
    c.host_path(&addr.socket_dir)
        .port(addr.port)
        .user(&addr.user)
        .dbname(&addr.dbname)
        .application_name("iogauge-watch")
        .connect_timeout(std::time::Duration::from_secs(2));
    c
}

/// `watch`'s connection to a private cluster, with its snapshot statement.
pub struct PgWatch {
    cfg: Config,
    client: Client,
    stmt: Statement,
}

impl PgWatch {
    pub fn connect(addr: &SocketAddr) -> Result<PgWatch, DbError> {
        let cfg = socket_config(addr);
        let mut client = connect(&cfg)?;
        let num: i32 = client
            .query_one("SELECT current_setting('server_version_num')::int4", &[])
            .map_err(|e| server_err(&cfg, &e))?
            .get(0);
        let sql = snapshot_sql(num).ok_or_else(|| {
            DbError::Usage(format!(
                "PostgreSQL {num} has no pg_stat_wal; watch needs 14 or later"
            ))
        })?;
        let stmt = client.prepare(&sql).map_err(|e| server_err(&cfg, &e))?;
        Ok(PgWatch { cfg, client, stmt })
    }
}

impl EngineWatch for PgWatch {
    fn counters(&mut self) -> Result<LoadDelta, DbError> {
        snapshot(&mut self.client, &self.stmt).map_err(|e| server_err(&self.cfg, &e))
    }

    fn active(&mut self) -> Result<BTreeMap<String, u32>, DbError> {
        let rows = self
            .client
            .query(
                "SELECT coalesce(wait_event, 'CPU'), count(*)::int4 FROM pg_stat_activity \
                 WHERE application_name = $1 AND state = 'active' GROUP BY 1",
                &[&SESSION_APP],
            )
            .map_err(|e| server_err(&self.cfg, &e))?;
        Ok(rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i32>(1).max(0) as u32))
            .collect())
    }
}
