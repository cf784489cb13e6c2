//! PostgreSQL for iogauge: what a real database does on the storage under test, the SLOB
//! method (Kevin Closson's Silly Little Oracle Benchmark, and pgio, its PostgreSQL port) —
//! and MariaDB/InnoDB beside it ([`maria`]) behind one engine seam: a [`RunServer`] holds
//! either engine's server, and `workload::drive` runs either engine's sessions into the same
//! outcome, so everything above this crate sees one kind of `db run`.
//!
//! The seams, in the order the CLI uses them:
//! - [`PgBin::find`]: the newest PostgreSQL on PATH or under /usr/lib/postgresql/*/bin.
//! - [`Cluster`]: a private cluster on the directory under test — [`Cluster::init`] (initdb,
//!   settings for physical I/O testing from [`settings::DEFAULTS`] plus overrides),
//!   [`Cluster::open`], [`Cluster::start`] / [`Cluster::stop`] (the postmaster is this
//!   process's child, in its own process group, dies with it even on SIGKILL, optionally in
//!   a memory cgroup via [`Cluster::set_cache_limit`]; only iogauge's own account and the
//!   server's may connect, by peer authentication on a 0700 socket directory, no TCP),
//!   [`Cluster::config`] / [`Cluster::client`],
//!   [`Cluster::settings`], [`Cluster::snapshot_pristine`] / [`Cluster::reset`] (file-level
//!   copy of the stopped, loaded cluster), [`Cluster::destroy`]. Dropping a `Cluster` stops
//!   the server it started: it is the running-server guard.
//! - An existing server instead: [`parse_dsn`] gives a `postgres::Config`; everything below
//!   takes a `Config`, so the schema, driver and samplers are the same. There is no
//!   lifecycle and no file-level reset for such a server: reset means running
//!   [`schema::setup`] again, which drops iogauge's schemas and reloads them (same seed, same
//!   row placement).
//! - [`schema::setup`] / [`schema::verify`] / [`schema::discover`]: the data set — per schema
//!   one table with one row per 8 KiB block, keys in shuffled order, an index on the key.
//! - [`driver::run`]: sessions on a barrier, reads and updates through the index — by default
//!   in batches run by a PL/pgSQL procedure inside the server ([`Driver::Server`], as pgio and
//!   SLOB do), or one statement per operation ([`Driver::Client`]) — per-interval session
//!   figures, the load profile ([`LoadDelta`], [`LoadRates`]) and average active sessions by
//!   wait event ([`Aas`]), all on one [`Grid`]. [`Prepared`] is a `db run` made ready around
//!   it: the server opened, the [`WorkloadSpec`] put on its data set, the storage's
//!   [`preflight`], and the document ([`db_document`]) when it is over.
//!
//! The modules follow the concepts: `server` (the private cluster: its files, its processes,
//! who may touch them), `workload` (the sessions and the driver that runs them), `sample`
//! (the database's own figures: load profile, wait events, what `watch` reads), `run` (a
//! `db run` made ready and recorded), beside [`schema`] (the data set) and the connection
//! strings.
//!
//! Nothing here prints: progress goes to a callback, results to the caller. Errors are
//! [`DbError`]; [`DbError::is_usage`] tells the user's mistakes from run-time failures,
//! [`DbError::is_interrupted`] Ctrl-C. No message carries a password: [`redact_secrets`] is
//! the one masking function for any text ([`redact_dsn`] for one DSN), [`describe`] names a
//! server without it.
//!
//! [`Driver::Server`]: iogauge_model::db::workload::Driver::Server
//! [`Driver::Client`]: iogauge_model::db::workload::Driver::Client
//! [`LoadDelta`]: iogauge_model::db::profile::LoadDelta
//! [`LoadRates`]: iogauge_model::db::profile::LoadRates
//! [`Aas`]: iogauge_model::db::aas::Aas
//! [`Grid`]: iogauge_model::db::workload::Grid
//! [`redact_secrets`]: iogauge_model::secret::redact_secrets
//! [`redact_dsn`]: iogauge_model::secret::redact_dsn

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod common;
pub mod engine;
mod error;
pub mod mariadb;
mod postgres;

pub use common::aas::{AasAcc, ActivityRow, SAMPLE_EVERY, SESSION_APP};
pub use common::cgroup::drop_os_cache;
pub use common::place::{
    check_dir, check_overlaps, has_cluster, no_cluster, setup_finished, Place, DEFAULT_DIR,
};
pub use common::run::document::{data_set, db_document, shared_buffers};
pub use common::run::preflight;
pub use common::run::prepare::Prepared;
pub use common::run::server::{RunPlace, RunServer};
pub use common::workload::spec::WorkloadSpec;
pub use engine::{
    engine, setup, DbEngine, RunRequest, SetupDone, SetupRequest, SetupUi, DEFAULT_SEED,
};
pub use error::{chain_text, error_text, DbError};
pub use postgres::dsn::{connect, describe, parse_dsn};
pub use postgres::sample::watch;
pub use postgres::schema::{self, SchemaSpec};
pub use postgres::server::bin::PgBin;
pub use postgres::server::cluster::{Cluster, ClusterConfig, DATABASE};
pub use postgres::server::settings::{self, parse_override};
pub use postgres::server::setup::{check_places, load_dsn, setup_private, PrivateSetup, Progress};
pub use postgres::workload::driver;
