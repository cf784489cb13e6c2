//! The two rates planning works in, as types: I/Os per second and megabytes per second.

use serde::Serialize;

/// I/Os per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Iops(pub f64);

/// Megabytes per second, in whatever MB the inputs use (iogauge's own figures are MiB/s).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct Mbps(pub f64);
