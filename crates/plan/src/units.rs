//! The two rates planning works in, iogauge's own rate types (`stats::units`): I/Os per
//! second and MiB per second (a plan's MB/s are whatever MB its inputs use; iogauge's own
//! figures are MiB/s).

pub use iogauge_stats::units::{Iops, MiBps};
