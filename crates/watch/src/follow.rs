//! The run in progress `watch` follows: the newest one running beside the results store,
//! its live file tailed; for a database run, its server looked at too.

use iogauge_db::watch::DbWatch;
use iogauge_model::live::{DbNow, LiveHeader, LiveInterval};
use iogauge_store::live::{running, LiveTail};
use std::path::Path;

/// The run being followed and the intervals seen of it so far; for a database run, its
/// server as of the last look.
pub struct Follow {
    tail: LiveTail,
    pub history: Vec<LiveInterval>,
    db: Option<DbWatch>,
    pub db_now: Option<DbNow>,
    pub db_error: Option<String>,
}

impl Follow {
    pub fn header(&self) -> &LiveHeader {
        &self.tail.header
    }
}

/// Keeps following the newest running job beside `store`; picks up a new one when it ends.
pub(crate) fn refresh(store: Option<&Path>, follow: &mut Option<Follow>) {
    if follow.as_ref().is_some_and(|f| !f.tail.alive()) {
        *follow = None;
    }
    if follow.is_none() {
        let Some(store) = store else { return };
        if let Some(path) = running(store).first() {
            if let Ok(tail) = LiveTail::open(path) {
                let (db, db_error) = match &tail.header.db {
                    Some(addr) => match DbWatch::connect(addr) {
                        Ok(d) => (Some(d), None),
                        Err(e) => (None, Some(e.to_string())),
                    },
                    None => (None, None),
                };
                *follow = Some(Follow {
                    tail,
                    history: Vec::new(),
                    db,
                    db_now: None,
                    db_error,
                });
            }
        }
    }
    if let Some(f) = follow {
        if let Some(d) = &mut f.db {
            match d.look() {
                Ok(now) => f.db_now = Some(now),
                Err(e) => {
                    // The run is ending (server stopping) or gone: stop asking.
                    f.db_error = Some(e.to_string());
                    f.db = None;
                    f.db_now = None;
                }
            }
        }
        match f.tail.poll() {
            Ok(new) => f.history.extend(new),
            Err(_) => *follow = None,
        }
    }
}
