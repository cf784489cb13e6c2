//! The top of the command line: `iogauge SUBCOMMAND`, each subcommand's flags owned by its
//! module. Only `main` uses this module (and hands `check_line` to `campaign`), so no
//! subcommand imports the tree it is part of.

use crate::calibrate::args::CalibrateArgs;
use crate::calibrate::options::CalibrateOptions;
use crate::campaign::args::{CampaignArgs, CompareArgs, ExportArgs, ReportArgs};
use crate::capture::args::CaptureArgs;
use crate::clean::args::CleanArgs;
use crate::completions::CompletionsArgs;
use crate::db::args::DbArgs;
use crate::doctor::args::DoctorArgs;
use crate::history::args::{HistoryArgs, ShowArgs};
use crate::plan::args::PlanArgs;
use crate::replay::args::ReplayArgs;
use crate::run::args::RunArgs;
use crate::run::options::RunOptions;
use crate::traces::args::TracesArgs;
use crate::usage::clap_line;
use crate::watch::args::WatchArgs;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::cell::RefCell;

#[derive(Parser, Debug)]
#[command(
    name = "iogauge",
    version = crate::doctor::version(),
    about = "Measure storage the way a database uses it"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one synthetic job (fio-like): e.g. 8K random reads at QD 32.
    Run(RunArgs),
    /// Issue recorded block requests (a stored trace, a blktrace or a fio iolog) on a
    /// target, at their recorded times or as fast as it allows; stored as a run.
    Replay(ReplayArgs),
    /// Record every block request of some disks (all, a process's or a database server's)
    /// into a trace: its time, place, size, operation, flags and issuer.
    Capture(CaptureArgs),
    /// Stored traces of block requests: list, show, export (fio iolog, blktrace), import,
    /// remove.
    Traces(TracesArgs),
    /// Max IOPS under a latency cap, max MB/s and one process's MB/s (CALIBRATE_IO), with
    /// the whole IOPS/latency curve (ORION).
    Calibrate(CalibrateArgs),
    /// Past runs and calibrations, newest first.
    History(HistoryArgs),
    /// One stored run in full, as it was printed live.
    Show(ShowArgs),
    /// Devices, CPU and the run in progress on one screen, refreshed every interval.
    Watch(WatchArgs),
    /// Capacity planning: workload IOPS to hardware IOPS, disks and enclosures.
    Plan(PlanArgs),
    /// A real PostgreSQL doing physical I/O on the storage under test (the SLOB method).
    Db(DbArgs),
    /// Run a campaign file: configurations × repetitions, stored as they finish, resumable.
    Campaign(CampaignArgs),
    /// A self-contained HTML report: of stored results by id (charts of a run, calibration or
    /// database run; several overlaid), or of a campaign with --campaign.
    Report(ReportArgs),
    /// Two runs of one kind, a calibration beside a db run (the placement table), or two
    /// cases of a campaign, side by side with the ratio and a verdict.
    Compare(CompareArgs),
    /// A campaign's tables as CSV, Markdown or JSON.
    Export(ExportArgs),
    /// A shell's completion script on stdout (bash, zsh, fish, elvish or powershell).
    Completions(CompletionsArgs),
    /// The manual page (roff) on stdout: iogauge man | man -l -
    Man,
    /// What this machine gives iogauge (io_uring, O_DIRECT, the tracer, tracefs, privileges,
    /// huge pages, cgroups, PostgreSQL, MariaDB, MPI): one line each, with what a missing
    /// piece costs and the fix.
    Doctor(DoctorArgs),
    /// Remove iogauge's own scratch files (those carrying its mark) and nothing else.
    Clean(CleanArgs),
}

thread_local! {
    /// Built once per thread: building clap's whole command tree per line cost 200 µs.
    static PARSER: RefCell<clap::Command> = RefCell::new(Cli::command());
}

/// Checks one command line (`iogauge` first) as a typed one is checked: clap's parse, then
/// the checks between flags that `run` and `calibrate` make before touching anything (`db
/// run` checks its own when it starts). Why it cannot work comes back as one line. For the
/// cases of a campaign, checked before anything runs.
pub fn check_line(argv: &[&str]) -> Result<(), String> {
    PARSER.with_borrow_mut(|cli| {
        let parsed = cli
            .try_get_matches_from_mut(argv.iter().copied())
            .and_then(|mut m| Cli::from_arg_matches_mut(&mut m));
        match parsed.map_err(|e| clap_line(&e))?.command {
            Command::Run(a) => RunOptions::from_args(a).map(drop).map_err(|e| e.0),
            Command::Calibrate(a) => CalibrateOptions::from_args(a).map(drop).map_err(|e| e.0),
            _ => Ok(()),
        }
    })
}
