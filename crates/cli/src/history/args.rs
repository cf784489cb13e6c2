//! The flags of `iogauge history` and `iogauge show`.

use crate::store_args::StoreArgs;
use clap::Args;
use iogauge_model::units::parse_duration;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print the rows as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Run id, as listed by `iogauge history`.
    #[arg(value_parser = crate::values::result_id)]
    pub id: i64,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print the stored JSON document exactly as it was saved.
    #[arg(long)]
    pub json: bool,
    /// Re-render the time series at this coarser interval (a whole multiple of the recorded
    /// one): a run's, each calibration point's (recorded every 1s) or a database run's.
    /// Percentiles from the stored per-interval histograms, device figures from the raw
    /// snapshots (a calibration point's combined from its intervals'). Prints the interval
    /// table (or the JSON document).
    #[arg(long, value_parser = parse_duration)]
    pub interval: Option<Duration>,
    /// Apply this iogauge's rules to the stored result: its findings made again from its
    /// stored figures, as a result made today would carry them (the stored result is not
    /// changed). A result stored before a rule learned something gets that rule's answer.
    #[arg(long)]
    pub rediagnose: bool,
}
