//! What `iogauge watch` shows of a database run in progress: the load profile's rates since
//! the previous look, and how many test sessions are active right now, by wait event. Its own
//! connection, read once per watch interval (the run's own samplers are separate). MariaDB's
//! is `maria::watch`; [`DbWatch`] is either.

use crate::common::aas::SESSION_APP;
use crate::error::DbError;
use crate::postgres::dsn::{connect, server_err};
use crate::postgres::sample::profile::{snapshot, snapshot_sql};
use iogauge_model::db::engine::Engine;
use iogauge_model::db::profile::LoadDelta;
use iogauge_model::live::{DbNow, SocketAddr};
use postgres::{Client, Config, Statement};
use std::time::Instant;

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

/// A look at a private server of either engine.
pub enum DbWatch {
    Pg(Box<PgWatch>),
    Maria(Box<crate::mariadb::watch::MariaWatch>),
}

impl DbWatch {
    pub fn connect(addr: &SocketAddr) -> Result<DbWatch, DbError> {
        Ok(match addr.engine {
            Engine::Postgres => DbWatch::Pg(Box::new(PgWatch::connect(addr)?)),
            Engine::Mariadb => DbWatch::Maria(Box::new(
                crate::mariadb::watch::MariaWatch::connect(&addr.socket_dir.join("mysqld.sock"))?,
            )),
        })
    }

    pub fn look(&mut self) -> Result<DbNow, DbError> {
        match self {
            DbWatch::Pg(w) => w.look(),
            DbWatch::Maria(w) => w.look(),
        }
    }
}

pub struct PgWatch {
    cfg: Config,
    client: Client,
    stmt: Statement,
    prev: Option<(Instant, LoadDelta)>,
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
        Ok(PgWatch {
            cfg,
            client,
            stmt,
            prev: None,
        })
    }

    pub fn look(&mut self) -> Result<DbNow, DbError> {
        let now = Instant::now();
        let cur = snapshot(&mut self.client, &self.stmt).map_err(|e| server_err(&self.cfg, &e))?;
        let rates = self.prev.as_ref().map(|(t, p)| {
            cur.since(p)
                .rates(now.duration_since(*t).as_secs_f64().max(1e-6))
        });
        self.prev = Some((now, cur));
        let rows = self
            .client
            .query(
                "SELECT coalesce(wait_event, 'CPU'), count(*)::int4 FROM pg_stat_activity \
                 WHERE application_name = $1 AND state = 'active' GROUP BY 1",
                &[&SESSION_APP],
            )
            .map_err(|e| server_err(&self.cfg, &e))?;
        let active = rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i32>(1).max(0) as u32))
            .collect();
        Ok(DbNow { rates, active })
    }
}
