//! PostgreSQL's sessions of a `db run`: the statements ([`sql`]), one [`worker`] per session
//! (client driver; [`batch`]: the server driver, a PL/pgSQL procedure as pgio and SLOB run),
//! the load-profile [`sampler`]'s counters and waits, the [`sessions`] that hand them to the
//! common driver, and the [`driver`]'s preflight of the server.

pub(crate) mod batch;
pub mod driver;
pub(crate) mod sampler;
pub(crate) mod sessions;
pub(crate) mod sql;
pub(crate) mod worker;
