//! What a `db run`'s sessions are, whichever engine runs them: each session's role
//! ([`role`]) and operations ([`ops`]), the workload asked for before the data set is known
//! ([`spec`]), what the threads share ([`shared`]), the driver that starts them on a barrier
//! ([`drive`]), the database sampler's loop on the grid ([`sampler`]) and the collector of
//! their parts ([`collect`]).

pub(crate) mod collect;
pub(crate) mod drive;
pub(crate) mod ops;
pub(crate) mod role;
pub(crate) mod sampler;
pub(crate) mod shared;
pub(crate) mod spec;
