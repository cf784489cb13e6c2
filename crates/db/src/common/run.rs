//! A `db run` below the binary: its server opened and its data set found ([`prepare`]), the
//! storage under a private cluster checked as calibrate's is ([`preflight`]), and the
//! finished run as the results model records it ([`document`]). The device sampling around
//! the sessions is the caller's (it owns the samplers).

pub(crate) mod document;
pub mod preflight;
pub(crate) mod prepare;
pub(crate) mod server;
