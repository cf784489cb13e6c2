//! The text a terminal shows: a run's, a calibration's and a database run's summaries, the
//! time series as tables, the history table, the placement table of `compare CAL DB` and the
//! live lines of `watch`.

pub(crate) mod calib;
pub(crate) mod db;
pub(crate) mod findings;
pub(crate) mod history;
mod label;
pub(crate) mod log;
pub(crate) mod placement;
pub(crate) mod preflight;
mod ranks;
pub(crate) mod relations;
pub(crate) mod replay;
pub(crate) mod run;
pub(crate) mod series;
pub(crate) mod trace;
pub(crate) mod watch;
