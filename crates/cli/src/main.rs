//! The `iogauge` binary: parse → validate → preflight → prepare targets → run → summarise →
//! render. Everything heavy lives in the library crates; this file is the pipeline.

mod args;
mod exit;
mod options;
mod run;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return exit::clap_error(e),
    };
    let result = match cli.command {
        args::Command::Run(a) => options::RunOptions::from_args(a)
            .map_err(anyhow::Error::from)
            .and_then(run::run),
    };
    match result {
        Ok(code) => code,
        Err(e) => exit::report(&e),
    }
}
