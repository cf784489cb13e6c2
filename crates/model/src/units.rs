//! Units as types and as users type them: `stats` holds the types (its histograms and
//! counters need them, and it sits below this crate); sizes and durations are parsed and
//! formatted here.

pub use iogauge_stats::{Bytes, Nanos, MIB};
