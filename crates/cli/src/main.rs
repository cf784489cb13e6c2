//! The `iogauge` binary: parse → validate → preflight → prepare targets → run → summarise →
//! store → render. Everything heavy lives in the library crates; this file is the pipeline,
//! and each subcommand's module reads the same way: its flags (`args`), checked into plain
//! data (`options`), handed to its function.

mod calibrate;
mod campaign;
mod capture;
mod clean;
mod cli;
mod completions;
mod db;
mod doctor;
mod exit;
mod exit_code;
mod history;
mod launcher;
mod paths;
mod plan;
mod replay;
mod run;
mod session;
mod store_args;
mod target;
mod traces;
mod usage;
mod values;
mod watch;

use calibrate::options::CalibrateOptions;
use clap::{CommandFactory, Parser};
use cli::{Cli, Command};
use iogauge_session::ranks::said_once;
use plan::options::PlanOptions;
use run::options::RunOptions;
use std::process::ExitCode;
use watch::options::WatchOptions;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return exit::clap_error(e),
    };
    let result = launcher::check(&cli.command).and_then(|()| dispatch(cli.command));
    // The job's cgroup, if a measured command entered one (`iogauge_session::enter_job`).
    iogauge_session::leave_job();
    match result {
        Ok(code) => code,
        Err(e) => exit::report(&e),
    }
}

/// One subcommand: its options checked (a usage error, exit 2, before anything is touched;
/// under a launcher said once, by rank 0), then its pipeline.
fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(a) => run::run(RunOptions::from_args(a).map_err(said_once)?),
        Command::Traces(a) => traces::traces(a),
        Command::Capture(a) => capture::capture(a),
        Command::Replay(a) => replay::replay(replay::options::ReplayOptions::from_args(a)?),
        Command::Calibrate(a) => {
            calibrate::calibrate(CalibrateOptions::from_args(a).map_err(said_once)?)
        }
        Command::History(a) => history::history(a),
        Command::Show(a) => history::show(a),
        Command::Watch(a) => watch::watch(WatchOptions::from_args(a)?),
        Command::Plan(a) => plan::plan(PlanOptions::from_args(a)?),
        Command::Db(a) => db::db(a),
        Command::Campaign(a) => campaign::campaign(a, cli::check_line),
        Command::Report(a) => campaign::results::report(a),
        Command::Compare(a) => campaign::results::compare(a),
        Command::Export(a) => campaign::results::export(a),
        Command::Completions(a) => completions::completions(a.shell, Cli::command()),
        Command::Man => completions::man(Cli::command()),
        Command::Doctor(a) => doctor::doctor(a),
        Command::Clean(a) => clean::clean(a),
    }
}
