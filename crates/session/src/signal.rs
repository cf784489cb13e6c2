//! Ctrl-C, SIGTERM and SIGHUP as a flag, and the campaign tag a campaign runner hands its
//! child.

use crate::SessionError;
use iogauge_store::CampaignTag;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A flag raised by SIGINT, SIGTERM or SIGHUP: workers stop, partial results are kept.
/// SIGHUP is a closed terminal (or ssh session): left to its default action it would end the
/// process at once, losing what ran and leaving the half-made files of a setup behind.
pub fn stop_flag() -> Result<Arc<AtomicBool>, SessionError> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(SessionError::Signal)?;
    }
    Ok(stop)
}

/// Set by `iogauge campaign` on the runs it starts: which case and repetition a run is, so
/// the run and its place in the campaign are stored in one transaction. Not for users.
pub const CAMPAIGN_ENV: &str = "IOGAUGE_CAMPAIGN_RUN";

/// The campaign tag of this run, if `iogauge campaign` started it.
pub fn campaign_tag() -> Result<Option<CampaignTag>, SessionError> {
    match std::env::var(CAMPAIGN_ENV) {
        Err(_) => Ok(None),
        Ok(v) => serde_json::from_str(&v)
            .map(Some)
            .map_err(|source| SessionError::Tag {
                var: CAMPAIGN_ENV,
                source,
            }),
    }
}
