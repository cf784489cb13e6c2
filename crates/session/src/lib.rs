//! The measured-session pipeline (DESIGN's `Recorder`), the same for every producer of a
//! result (`run`, `calibrate`, `db run`, and so every campaign child):
//!
//! 1. [`Session::begin`]: the stop flag raised by Ctrl-C or SIGTERM, the campaign tag a
//!    campaign runner hands its child, and the results store opened before anything is
//!    measured (a bad `--store` fails first);
//! 2. [`Session::go_live`] / [`Session::publish`]: the live feed `iogauge watch` follows;
//! 3. [`sampled`]: the one device and CPU sampler (`iogauge_probe::sample_grid`) on the
//!    producer's interval grid, from the moment the producer says it started;
//! 4. [`Session::finish`]: the document stored, then printed, then where it is stored said;
//!    the caller turns the [`Ending`] into an exit code.
//!
//! The producers themselves (the engine, PostgreSQL's sessions) and the summaries they build
//! (`iogauge_engine::document`, `iogauge_model::db::report`) stay in their crates: a session
//! only records and finishes. Nothing here writes to the terminal; the caller hands in where
//! the result goes.

mod error;
mod finish;
mod live;
mod sampled;
mod signal;

pub use error::SessionError;
pub use finish::{Ending, Stored};
pub use sampled::sampled;
pub use signal::{campaign_tag, stop_flag, CAMPAIGN_ENV};

use iogauge_store::{CampaignTag, Store};
use live::Feed;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One measured session, from its first step to its stored result.
pub struct Session {
    stop: Arc<AtomicBool>,
    tag: Option<CampaignTag>,
    store: Store,
    feed: Feed,
    started_at: String,
}

impl Session {
    /// Installs the Ctrl-C handler, reads the campaign tag and opens the store (`store`, else
    /// `$IOGAUGE_STORE` or the platform data directory).
    pub fn begin(store: Option<&Path>) -> Result<Session, SessionError> {
        let stop = stop_flag()?;
        let tag = campaign_tag()?;
        let store = Store::open_resolved(store)?;
        Ok(Session {
            stop,
            tag,
            store,
            feed: Feed::Off,
            started_at: now(),
        })
    }

    /// The stop flag: raised by Ctrl-C or SIGTERM; producers stop at their next boundary.
    pub fn stop(&self) -> &Arc<AtomicBool> {
        &self.stop
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// When the session began, RFC 3339 UTC.
    pub fn started_at(&self) -> &str {
        &self.started_at
    }

    pub fn store_path(&self) -> &Path {
        self.store.path()
    }
}

/// Now, RFC 3339 UTC to the millisecond.
pub fn now() -> String {
    let t = jiff::Timestamp::now();
    t.round(jiff::Unit::Millisecond).unwrap_or(t).to_string()
}
