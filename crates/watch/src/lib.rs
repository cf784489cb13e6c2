//! What `iogauge watch` sees at each refresh: the devices and CPU since the previous /proc
//! sample (`iogauge_probe`'s sampler, derived in iostat -x terms by `iogauge_model::derive`),
//! the devices worth showing, and the run in progress it follows — the newest live feed
//! beside the results store (`iogauge_store::live`) and, for a database run, its server
//! (`iogauge_db::watch`).
//!
//! A consumer of the sessions' live feeds, beneath the binary: the session pipeline writes
//! the feed, this crate reads it, `iogauge_report` draws what it read (the plain lines and
//! the full-screen view), and the binary owns the terminal (keys, raw mode, stdout).

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod follow;
mod shown;
mod watcher;

pub use follow::Follow;
pub use watcher::{Look, Scope, Watcher};
