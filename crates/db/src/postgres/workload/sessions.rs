//! PostgreSQL's part of a run for `drive`: each session (`worker`) and the sampler
//! (`sampler`) on their own connections, and the sessions' cancel tokens.

use crate::common::aas::SESSION_APP;
use crate::common::workload::drive::Sessions;
use crate::common::workload::shared::Seat;
use crate::error::DbError;
use crate::postgres::workload::sampler::sampler;
use crate::postgres::workload::worker::run;
use postgres::{CancelToken, Config, NoTls};
use std::sync::Mutex;

/// PostgreSQL's part of a run (see `drive::Sessions`): each session's connection settings,
/// the sampler's, and the sessions' cancel tokens.
pub(crate) struct PgSessions {
    cfg: Config,
    sampler_cfg: Config,
    tokens: Mutex<Vec<Option<CancelToken>>>,
    version_num: i32,
}

impl PgSessions {
    pub fn new(cfg: &Config, sessions: usize, version_num: i32) -> PgSessions {
        let mut scfg = cfg.clone();
        scfg.application_name(SESSION_APP);
        let mut sampler_cfg = cfg.clone();
        sampler_cfg.application_name("iogauge-sampler");
        PgSessions {
            cfg: scfg,
            sampler_cfg,
            tokens: Mutex::new((0..sessions).map(|_| None).collect()),
            version_num,
        }
    }

    fn token(&self, id: usize, t: Option<CancelToken>) {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())[id] = t;
    }
}

impl Sessions for PgSessions {
    const PREFIX: &'static str = "pg";

    fn session(&self, id: usize, seat: Seat<'_>) -> Result<(), DbError> {
        let token = |t| self.token(id, t);
        run(&self.cfg, self.version_num >= 150000, &token, id, seat)
    }

    fn sampler(&self, seat: Seat<'_>) -> Result<(), DbError> {
        sampler(&self.sampler_cfg, self.version_num, seat)
    }

    fn cancel_all(&self) {
        let tokens: Vec<_> = self
            .tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .flatten()
            .cloned()
            .collect();
        for t in tokens {
            // A failed cancel means the connection is gone already; the session sees that.
            let _ = t.cancel_query(NoTls);
        }
    }
}
