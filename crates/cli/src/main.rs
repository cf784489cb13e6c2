//! The `iogauge` binary: parse → validate → preflight → prepare targets → run → summarise →
//! store → render. Everything heavy lives in the library crates; this file is the pipeline.

mod args;
mod calibrate;
mod campaign;
mod db;
mod exit;
mod history;
mod options;
mod plan;
mod run;
mod session;
mod watch;

use args::Command;
use clap::Parser;
use options::{CalibrateOptions, RunOptions};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return exit::clap_error(e),
    };
    let result = match cli.command {
        Command::Run(a) => RunOptions::from_args(a)
            .map_err(Into::into)
            .and_then(run::run),
        Command::Calibrate(a) => CalibrateOptions::from_args(a)
            .map_err(Into::into)
            .and_then(calibrate::calibrate),
        Command::History(a) => history::history(a),
        Command::Show(a) => history::show(a),
        Command::Watch(a) => watch::watch(a),
        Command::Plan(a) => plan::plan(a),
        Command::Db(a) => db::db(a),
        Command::Campaign(a) => campaign::campaign(a),
        Command::Report(a) => campaign::results::report(a),
        Command::Compare(a) => campaign::results::compare(a),
        Command::Export(a) => campaign::results::export(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => exit::report(&e),
    }
}
