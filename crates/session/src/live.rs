//! The live feed of a session for `iogauge watch`: a header, then one line per finished
//! interval (`iogauge_store::live`). A session that cannot publish still runs; its result
//! says why the live view stopped.

use iogauge_model::live::{LiveHeader, LiveInterval, LiveRanks};
use iogauge_model::run::IntervalReport;
use iogauge_store::live::LiveWriter;
use std::path::Path;

/// The feed's state.
pub(crate) enum Feed {
    /// Not started (a session that never goes live).
    Off,
    On(LiveWriter),
    /// Why there is no (or no more) live view: becomes a warning of the result.
    Failed(String),
}

impl Feed {
    /// A feed next to the store at `store`, announcing `header`.
    pub(crate) fn start(store: &Path, header: &LiveHeader) -> Feed {
        match LiveWriter::create(store, header) {
            Ok(w) => Feed::On(w),
            Err(e) => Feed::Failed(format!("no live view for `iogauge watch`: {e}")),
        }
    }

    /// Publishes one finished interval, `elapsed_s` from the job's start to its end.
    /// Over ranks, `ranks` says how many ranks the interval holds and which were slowest and
    /// fastest.
    pub(crate) fn publish(
        &mut self,
        interval: &IntervalReport,
        elapsed_s: f64,
        ranks: Option<LiveRanks>,
    ) {
        let Feed::On(w) = self else {
            return;
        };
        let line = LiveInterval {
            elapsed_s,
            interval: interval.clone(),
            ranks,
        };
        if let Err(e) = w.push(&line) {
            *self = Feed::Failed(format!("live view for `iogauge watch` stopped: {e}"));
        }
    }

    /// Ends the feed (its file goes); the warning to keep, if it failed.
    pub(crate) fn end(&mut self) -> Option<String> {
        match std::mem::replace(self, Feed::Off) {
            Feed::Failed(why) => Some(why),
            Feed::On(_) | Feed::Off => None,
        }
    }
}
