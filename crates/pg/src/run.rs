//! A `db run` below the binary: its server opened and its data set found ([`prepare`]), and
//! the finished run as the results model records it ([`document`]).

pub(crate) mod document;
pub(crate) mod prepare;
