//! The database's own figures, read from its statistics views: the load profile
//! ([`profile`]), reads per relation over
//! the measured window ([`relations`]), and what `iogauge watch`
//! shows of a run in progress ([`watch`]).

pub(crate) mod profile;
pub(crate) mod relations;
pub(crate) mod watch;
