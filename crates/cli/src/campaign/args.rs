//! The flags of `iogauge campaign` and of the commands that read campaigns back (`report`,
//! `export`, `compare`).

use crate::store_args::StoreArgs;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct CampaignArgs {
    /// The campaign file (TOML): variables, cases, the workload and its options, repetitions.
    pub file: PathBuf,
    /// List the runs still to make and their estimated duration; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Tiny scale to try a campaign in a minute: seconds-long runs, 2 repetitions, no
    /// warm-up, small data sets; stored as NAME-smoke.
    #[arg(long)]
    pub smoke: bool,
    /// Start over: earlier runs of this campaign stay in the history but no longer count.
    #[arg(long)]
    pub fresh: bool,
    /// Store the campaign under this name instead of the file's.
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Which campaign, and where its rendering goes.
#[derive(clap::Args, Debug)]
pub struct CampaignOutput {
    /// The campaign, by the name `iogauge campaign` stored it under.
    #[arg(long)]
    pub campaign: String,
    #[command(flatten)]
    pub out: Output,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Where a rendering goes.
#[derive(clap::Args, Debug)]
pub struct Output {
    /// Write here (default, or `-`: stdout). An existing file is replaced only with --force.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Stored results to draw, by id (`iogauge history`): runs, calibrations and database
    /// runs; several of a kind share their charts (before/after a change).
    #[arg(
        value_name = "ID",
        required_unless_present = "campaign",
        conflicts_with = "campaign",
        value_parser = crate::values::result_id
    )]
    pub ids: Vec<i64>,
    /// The campaign, by the name `iogauge campaign` stored it under.
    #[arg(long)]
    pub campaign: Option<String>,
    /// With --campaign: every figure a ratio to the baseline case (= 1), no absolute figure
    /// anywhere (for results whose licence allows only normalised figures).
    #[arg(long)]
    pub relative: bool,
    #[command(flatten)]
    pub out: Output,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// csv (one row per case and metric), md (Markdown tables) or json (everything).
    #[arg(long, value_parser = ["csv", "md", "json"])]
    pub format: String,
    /// Every figure a ratio to the baseline case (= 1), no absolute figure anywhere (for
    /// results whose licence allows only normalised figures).
    #[arg(long)]
    pub relative: bool,
    #[command(flatten)]
    pub out: CampaignOutput,
}

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The reference: a run id, or with --campaign a case name. A calibration and a db run,
    /// in either order, give the placement table (the calibration's figures beside the
    /// database's devices').
    pub a: String,
    /// Compared with the reference: a run id, or with --campaign a case name.
    pub b: String,
    /// Compare two cases of this campaign (every repetition, with confidence intervals).
    #[arg(long)]
    pub campaign: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}
