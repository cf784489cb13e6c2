//! `iogauge campaign FILE.toml`: the file read and every case's command line checked here,
//! then its plan run by `iogauge_runner` (one `iogauge` child per run, stored by the child
//! with its case and repetition; resumable; one runner per campaign and store), and what it
//! tells printed: the plan, a line per run, the verdicts. A password in the file is masked in
//! everything printed or stored, and only the runs it starts see it.

pub mod args;
pub mod results;

use crate::exit_code::INTERRUPTED;
use crate::session::print_stdout;
use crate::usage::UsageError;
use anyhow::Context;
use args::CampaignArgs;
use iogauge_campaign::{Campaign, CheckLine, LoadError, PlannedRun};
use iogauge_report::{campaign_command, campaign_plan_line, campaign_run_label};
use iogauge_runner::{pending, End, Progress, Runner};
use iogauge_session::stop_flag;
use iogauge_store::{CampaignTag, Store};
use std::process::ExitCode;

// A run stopped by Ctrl-C exits as every iogauge command does; the runner counts on it.
const _: () = assert!(iogauge_runner::INTERRUPTED_EXIT == INTERRUPTED as i32);

/// Runs the campaign of `a`; `check` parses a case's command line as `iogauge` would, so a
/// bad case fails before anything runs.
pub fn campaign(a: CampaignArgs, check: CheckLine) -> anyhow::Result<ExitCode> {
    let loaded =
        iogauge_campaign::load(&a.file, a.smoke, a.name.as_deref(), check).map_err(file_error)?;
    let c = &loaded.shown;
    if a.dry_run {
        let p = pending(c, a.store.store.as_deref(), a.fresh)?;
        let plan = iogauge_report::campaign_dry_run(c, &p.plan, p.done.len(), p.fresh_needed);
        print_stdout(&plan).context("writing the plan to stdout")?;
        return Ok(ExitCode::SUCCESS);
    }
    let stop = stop_flag()?;
    let runner = Runner {
        loaded: &loaded,
        file: &a.file,
        store: a.store.store.as_deref(),
        fresh: a.fresh,
        stop: &stop,
    };
    let outcome = runner.run(&mut Lines::default())?;
    let store = outcome.store.display();
    let End::Finished(view) = &outcome.end else {
        eprintln!(
            "campaign {}: interrupted; every finished run is stored, run the same command again to resume",
            c.name
        );
        return Ok(ExitCode::from(INTERRUPTED));
    };
    print_stdout(&iogauge_report::verdicts_text(view)).with_context(|| {
        format!(
            "writing the verdicts to stdout (every run is stored in {store}: `iogauge report --campaign {}`)",
            c.name
        )
    })?;
    eprintln!(
        "stored in {store}; `iogauge report --campaign {}` writes the HTML report",
        c.name
    );
    Ok(ExitCode::SUCCESS)
}

/// A file at fault is a usage error (exit 2); one the system failed to read is not (exit 1).
fn file_error(e: LoadError) -> anyhow::Error {
    if e.is_usage() {
        UsageError(e.to_string()).into()
    } else {
        e.into()
    }
}

/// The runner's progress on stderr: the plan, then each run's label with its command line
/// and, once stored, its headline figures.
#[derive(Default)]
struct Lines {
    label: String,
}

impl Progress for Lines {
    type Error = anyhow::Error;

    fn planned(&mut self, c: &Campaign, done: usize, plan: &[PlannedRun]) {
        eprintln!("{}", campaign_plan_line(c, done, plan));
    }

    fn starting(&mut self, c: &Campaign, plan: &[PlannedRun], i: usize) {
        self.label = campaign_run_label(c, plan, i);
        eprintln!("{}: {}", self.label, campaign_command(c, plan[i].case));
    }

    fn measured(&mut self, store: &Store, tag: &CampaignTag) -> anyhow::Result<()> {
        eprintln!("{}: {}", self.label, iogauge_report::run_line(store, tag)?);
        Ok(())
    }
}
