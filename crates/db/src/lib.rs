//! The databases for iogauge: what a real database does on the storage under test, the SLOB
//! method (Kevin Closson's Silly Little Oracle Benchmark, and pgio, its PostgreSQL port), on
//! PostgreSQL and on MariaDB/InnoDB, each behind one seam ([`mod@engine`]): a [`DbEngine`] per
//! engine sets up, reloads and removes the data set and opens a server for a run, whose
//! engine part is an `EngineServer` inside a [`RunServer`]; the common driver runs either
//! engine's sessions, and the common sampler loop reads either engine's counters, into the
//! same outcome. Everything above this crate sees one kind of `db run`.
//!
//! The folders show the seam:
//! - `common/`: what every engine shares — where a command works ([`Place`]), the private
//!   server's child process and memory cgroup, AAS accumulation ([`AasAcc`]), the sessions'
//!   workload ([`WorkloadSpec`]), their driver, sampler loop and collector, and a `db run`
//!   made ready ([`Prepared`]: the server opened, the workload put on its data set, the
//!   storage's [`preflight`]) and recorded ([`db_document`]).
//! - `postgres/`: the private cluster ([`Cluster`]: initdb with settings for physical I/O
//!   testing from [`settings::DEFAULTS`] plus overrides, the postmaster as iogauge's child,
//!   peer authentication on a 0700 socket directory and no TCP, a file-level copy for
//!   `reset`; dropping a `Cluster` stops its server), a user's server by [`parse_dsn`], the
//!   data set ([`schema`]: one row per 8 KiB block, keys in shuffled order, an index), the
//!   sessions ([`driver::run`]: by default batches in a PL/pgSQL procedure, as pgio and SLOB
//!   run, or one statement per operation) and the load profile and waits from its statistics
//!   views.
//! - `mariadb/` ([`mariadb`]): a private server made by `mariadb-install-db` and run as
//!   iogauge's child behind its 0700 socket, or a user's by `--dsn mysql://…`; one row per
//!   16 KiB page; sessions of prepared primary-key lookups; `SHOW GLOBAL STATUS`,
//!   `performance_schema` and a probe on the redo log for the profile and the waits.
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
mod engines;
mod error;
pub mod mariadb;
mod postgres;

pub use common::aas::{AasAcc, ActivityRow, SAMPLE_EVERY, SESSION_APP};
pub use common::cgroup::drop_os_cache;
pub use common::claim::ServerDir;
pub use common::place::{check_dir, check_overlaps, Place};
pub use common::run::document::{data_set, db_document, shared_buffers};
pub use common::run::preflight;
pub use common::run::prepare::Prepared;
pub use common::run::server::{RunPlace, RunServer};
pub use common::schema::SchemaSpec;
pub use common::watch;
pub use common::workload::spec::WorkloadSpec;
pub use engine::{
    setup, DbEngine, RunRequest, Setup, SetupDone, SetupRequest, SetupUi, DEFAULT_SEED,
};
pub use engines::{engine, engine_of_dsn, DEFAULT_ENGINE};
pub use error::{chain_text, error_text, DbError};
pub use postgres::dsn::{connect, describe, parse_dsn};
pub use postgres::schema;
pub use postgres::server::bin::PgBin;
pub use postgres::server::cluster::{Cluster, ClusterConfig, DATABASE};
pub use postgres::server::settings::{self, parse_override};
pub use postgres::server::setup::{check_places, load_dsn, setup_private, PrivateSetup, Progress};
pub use postgres::workload::driver;
