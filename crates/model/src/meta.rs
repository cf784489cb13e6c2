//! The head of every stored document: which schema and kind it is, which iogauge made it,
//! when it ran and whether it finished. See [`crate::document`] for reading documents.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Version of the JSON schema; bump on any incompatible change and teach `crate::document`'s upgrade the
/// step from the one before.
pub const SCHEMA: u32 = 4;

/// What a document is a result of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    /// `iogauge run`.
    #[serde(rename = "run")]
    Run,
    /// `iogauge calibrate`.
    #[serde(rename = "calibrate")]
    Calibrate,
    /// `iogauge db run`.
    #[serde(rename = "db")]
    DbRun,
}

impl Kind {
    /// The name stored in documents and in the history (`run`, `calibrate`, `db`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Calibrate => "calibrate",
            Kind::DbRun => "db",
        }
    }

    /// The command that produces it (`run`, `calibrate`, `db run`).
    pub fn command(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Calibrate => "calibrate",
            Kind::DbRun => "db run",
        }
    }

    /// The kind stored under `name`, if iogauge knows it.
    pub fn from_name(name: &str) -> Option<Kind> {
        [Kind::Run, Kind::Calibrate, Kind::DbRun]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The head every document starts with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub schema: u32,
    pub kind: Kind,
    pub iogauge_version: String,
    /// RFC 3339, UTC, to the millisecond.
    pub started_at: String,
    /// When the result was complete; `None` in documents stored before schema 2 that did
    /// not record it (runs and database runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Stopped early (Ctrl-C, or a failure): the figures cover what ran.
    pub interrupted: bool,
    /// What the user called this result (`--label`, ORION's `-testname`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl Meta {
    /// The head of a document of `kind` made by this iogauge.
    pub fn new(kind: Kind, started_at: String, interrupted: bool) -> Meta {
        Meta {
            schema: SCHEMA,
            kind,
            iogauge_version: env!("CARGO_PKG_VERSION").into(),
            started_at,
            ended_at: None,
            interrupted,
            label: None,
        }
    }
}
