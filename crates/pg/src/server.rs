//! The private server: a PostgreSQL cluster iogauge makes on the storage under test, starts
//! as its own child and removes again — where it lives and who may touch it ([`place`],
//! `trust`, [`marker`], [`files`], [`access`]), the binaries and processes that run it
//! ([`bin`], [`child`], [`postmaster`], [`cgroup`]), its configuration ([`settings`],
//! [`conf`]), the [`cluster`] itself, and the data set set up on it ([`setup`]).

pub(crate) mod access;
pub(crate) mod bin;
pub(crate) mod cgroup;
pub(crate) mod child;
pub(crate) mod cluster;
pub(crate) mod conf;
pub(crate) mod files;
pub(crate) mod marker;
pub(crate) mod place;
pub(crate) mod postmaster;
pub mod settings;
pub(crate) mod setup;
/// The trust rule, shared with the rest of iogauge (`iogauge-trust`).
pub(crate) use iogauge_trust as trust;
