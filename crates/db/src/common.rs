//! What every engine shares: the server's child process ([`child`]) and memory cgroup
//! ([`cgroup`]), where a `db` command works ([`place`]), the sessions, their driver and
//! collector ([`workload`]), a `db run` made ready and recorded ([`run`]), and what `watch` sees of one ([`watch`]).

pub(crate) mod aas;
pub(crate) mod cgroup;
pub(crate) mod child;
pub(crate) mod claim;
pub(crate) mod place;
pub(crate) mod run;
pub(crate) mod schema;
pub mod watch;
pub(crate) mod workload;
