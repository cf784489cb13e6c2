//! The SLOB sessions of a `db run`: what each one does ([`role`], [`ops`], [`sql`]), the
//! threads that do it — one [`worker`] per session (client driver; [`batch`]: the server
//! driver) and the database [`sampler`] — what they share ([`shared`]), and the [`driver`]
//! that starts them on a barrier and collects their parts on the grid. [`spec`]: the
//! workload `db run` asked for, before the data set is known.

pub(crate) mod batch;
pub(crate) mod collect;
pub(crate) mod drive;
pub mod driver;
pub(crate) mod ops;
pub(crate) mod pg_sessions;
pub(crate) mod role;
pub(crate) mod sampler;
pub(crate) mod shared;
pub(crate) mod spec;
pub(crate) mod sql;
pub(crate) mod worker;
