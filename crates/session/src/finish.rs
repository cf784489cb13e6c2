//! How a session ends: its ending (for the exit code), where its result went, and the
//! writing of the result once it is stored. Stored first, so a stdout that fails (a full disk, a
//! reader that went away, a campaign runner killed mid-run) never costs the result; a store
//! that fails still prints it, so neither failure loses it.

use iogauge_model::Document;
use std::io::Write;
use std::path::PathBuf;

/// How a measured session ended, for its exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    Complete,
    /// Stopped by Ctrl-C, SIGTERM or SIGHUP: what ran is kept (exit 130).
    Interrupted,
    /// Ended early by a failure; the part that ran is kept, then this is reported (exit 1).
    Failed(String),
}

impl Ending {
    /// Complete, or interrupted when the document says so.
    pub fn of(doc: &Document) -> Ending {
        Ending::of_meta(doc.meta())
    }

    /// Complete, or interrupted when the document's head says so.
    pub fn of_meta(meta: &iogauge_model::Meta) -> Ending {
        if meta.interrupted {
            Ending::Interrupted
        } else {
            Ending::Complete
        }
    }
}

/// Where a result went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    pub id: i64,
    pub path: PathBuf,
}

/// Writes `text` and flushes: the error of either is the error.
pub(crate) fn write_all(out: &mut dyn Write, text: &str) -> std::io::Result<()> {
    out.write_all(text.as_bytes())?;
    out.flush()
}
