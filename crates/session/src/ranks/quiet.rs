//! The error a rank ends with when another rank said why.

/// Under a launcher every rank reads the same command line: a mistake in it is said once, by
/// rank 0, and the other ranks end with the same code saying nothing (as they do when another
/// rank failed and said why). The binary prints no line for this error.
#[derive(Debug, thiserror::Error)]
#[error("said by another rank")]
pub struct Quiet(pub u8);

/// Exit codes [`Quiet`] carries: the command line's mistake, or a failure elsewhere.
pub const USAGE: u8 = 2;
pub const RUNTIME: u8 = 1;
