//! The exit codes: 2 when the command line cannot work as written, 1 when the system failed
//! while doing it, 130 when stopped by Ctrl-C. A leaf: every module may name them.

pub const USAGE: u8 = 2;
pub const RUNTIME: u8 = 1;
pub const INTERRUPTED: u8 = 130;
