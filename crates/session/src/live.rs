//! The live feed of the session for `iogauge watch`: a header, then one line per finished
//! interval (`iogauge_store::live`). A session that cannot publish still runs; its result
//! says why the live view stopped.

use crate::Session;
use iogauge_model::live::{LiveHeader, LiveInterval, SocketAddr};
use iogauge_model::run::IntervalReport;
use iogauge_model::Kind;
use iogauge_store::live::LiveWriter;

/// The feed's state.
pub(crate) enum Feed {
    /// Not started (a session that never goes live).
    Off,
    On(LiveWriter),
    /// Why there is no (or no more) live view: becomes a warning of the result.
    Failed(String),
}

impl Session {
    /// Starts the live feed: what runs (`kind`, a one-line description) and, for a database
    /// run on a private server, its socket (never a DSN).
    pub fn go_live(&mut self, kind: Kind, what: String, db: Option<SocketAddr>) {
        let header = LiveHeader {
            pid: std::process::id(),
            kind: kind.command().into(),
            what,
            started_at: self.started_at.clone(),
            db,
        };
        self.feed = match LiveWriter::create(self.store.path(), &header) {
            Ok(w) => Feed::On(w),
            Err(e) => Feed::Failed(format!("no live view for `iogauge watch`: {e}")),
        };
    }

    /// Publishes one finished interval, `elapsed_s` from the job's start to its end.
    pub fn publish(&mut self, interval: &IntervalReport, elapsed_s: f64) {
        let Feed::On(w) = &mut self.feed else {
            return;
        };
        let line = LiveInterval {
            elapsed_s,
            interval: interval.clone(),
        };
        if let Err(e) = w.push(&line) {
            self.feed = Feed::Failed(format!("live view for `iogauge watch` stopped: {e}"));
        }
    }

    /// Ends the feed (its file goes); the warning to keep, if it failed.
    pub(crate) fn end_live(&mut self) -> Option<String> {
        match std::mem::replace(&mut self.feed, Feed::Off) {
            Feed::Failed(why) => Some(why),
            Feed::On(_) | Feed::Off => None,
        }
    }
}
