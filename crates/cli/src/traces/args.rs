//! The flags of `iogauge traces`: the stored traces listed, shown, exported for another
//! tool, imported from one, removed.

use crate::store_args::StoreArgs;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct TracesArgs {
    #[command(subcommand)]
    pub command: TracesCommand,
}

#[derive(Subcommand, Debug)]
pub enum TracesCommand {
    /// The stored traces, newest first.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// One trace's figures: rate, mix, sizes, locality, arrivals, depth, who issued them.
    Show {
        /// Trace id, as listed by `iogauge traces list`.
        #[arg(value_parser = crate::values::result_id)]
        id: i64,
        #[command(flatten)]
        store: StoreArgs,
        /// Print the header, trailer and summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a stored trace out: fio's iolog (version 3, for `fio --read_iolog`),
    /// blktrace's binary, or iogauge's own file.
    Export {
        #[arg(value_parser = crate::values::result_id)]
        id: i64,
        /// fio | blktrace | iogauge.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// The file to write (never replaced: it must not exist).
        #[arg(long, value_name = "FILE")]
        output: PathBuf,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Store a trace made elsewhere: a blktrace binary (`blkparse -d`), a fio iolog (v2 or
    /// v3), or iogauge's own file.
    Import {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Remove a stored trace.
    Rm {
        #[arg(value_parser = crate::values::result_id)]
        id: i64,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Fio,
    Blktrace,
    Iogauge,
}
