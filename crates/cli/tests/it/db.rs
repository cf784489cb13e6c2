//! `iogauge db` end to end on a real private server of each engine (PostgreSQL run as the
//! `postgres` user, which the harness requires: tests run as root; MariaDB's `mariadbd`):
//! setup, read and write runs with the database's own layers in JSON, the page cache limited
//! by a memory cgroup, show/history, Ctrl-C, reset, drop, and the errors. A behaviour both
//! engines have is one test body run on each ([`per_engine!`]).
//!
//! A server's life in `db/lifecycle.rs`, what only MariaDB has (its redo probe, a user's
//! MariaDB by DSN) in `db/mariadb.rs`, PostgreSQL 15 and 18 in `db/versions.rs`, tablespaces
//! and the hot spot in `db/placement.rs`, mistakes in `db/errors.rs`.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

mod dsn;
mod errors;
mod lifecycle;
mod mariadb;
mod placement;
mod versions;
