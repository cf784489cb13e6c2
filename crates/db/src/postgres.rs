//! PostgreSQL: the engine behind the seam ([`engine`]), connection strings ([`dsn`]), the data set ([`schema`]), the private cluster
//! ([`server`]), the database's own figures ([`sample`]) and its sessions ([`workload`]).

pub(crate) mod dsn;
pub(crate) mod engine;
pub(crate) mod sample;
pub mod schema;
pub(crate) mod server;
pub(crate) mod workload;
