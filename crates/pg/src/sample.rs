//! The database's own figures, read from its statistics views: the load profile
//! ([`profile`]), average active sessions by wait event ([`aas`]), and what `iogauge watch`
//! shows of a run in progress ([`watch`]).

pub(crate) mod aas;
pub(crate) mod profile;
pub mod watch;
