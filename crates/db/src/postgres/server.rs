//! The private server: a PostgreSQL cluster iogauge makes on the storage under test, starts
//! as its own child and removes again — whether a directory holds one ([`place`]), who may touch it (the trust rule of
//! `iogauge-trust`, [`marker`], [`files`],
//! [`access`]), the binaries and processes that run it ([`bin`], [`postmaster`]; the child
//! process and the memory cgroup are [`crate::common`]'s), its configuration ([`settings`],
//! [`conf`]), the [`cluster`] itself, and the data set set up on it ([`setup`]).

pub(crate) mod access;
pub(crate) mod bin;
pub(crate) mod cluster;
pub(crate) mod conf;
pub(crate) mod files;
pub(crate) mod marker;
pub(crate) mod place;
pub(crate) mod postmaster;
pub mod settings;
pub(crate) mod setup;
