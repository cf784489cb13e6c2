//! Facts about a target (a file or block device) as a result records them: path, kind,
//! filesystem, device, bytes under test, and whether iogauge created, owns and may write it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    File,
    Block,
}

/// Facts about an opened target, stored with the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetInfo {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub fs: Option<String>,
    pub device: Option<String>,
    /// Bytes under test.
    pub size: u64,
    /// Created (and pre-filled) by this run.
    pub created: bool,
    /// Carries iogauge's marker.
    pub owned: bool,
    pub direct: bool,
    pub writable: bool,
}
