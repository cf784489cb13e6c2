//! The targets of `run` and `calibrate` and how they are accessed: the shared flags
//! (`args`), and their checks into target specs, the layout and the I/O path (`options`).

pub mod args;
pub mod options;
