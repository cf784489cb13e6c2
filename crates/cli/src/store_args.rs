//! `--store`, flattened into every subcommand that reads or writes results.

use clap::Args;
use std::path::PathBuf;

/// Where results are stored.
#[derive(Args, Debug)]
pub struct StoreArgs {
    /// Results database (SQLite). Default: $IOGAUGE_STORE, else
    /// $XDG_DATA_HOME/iogauge/results.sqlite, else ~/.local/share/iogauge/results.sqlite.
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
}
