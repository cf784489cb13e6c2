//! `iogauge run`'s flags as clap sees them: raw values, each parsed by the model's own parser
//! so a bad value fails with the flag's name; `options` checks them as a whole.

use crate::store_args::ResultArgs;
use crate::target::args::TargetArgs;
use clap::Args;
use iogauge_model::spec::{parse_steady_criterion, BlockSplit, Dist, RwMode};
use iogauge_model::units::{parse_duration, parse_size, BlockSize};
use iogauge_stats::SteadyCriterion;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub io: TargetArgs,
    /// Replay the I/O a stored db run drove at its data disks (read:write mix, request size,
    /// requests in flight) on --target: the raw-device stand-in for a database (the
    /// filesystem study's RAW = 1). Sets --rw, --read-pct, --bs and --qd.
    #[arg(long, value_name = "DB_RUN_ID", conflicts_with_all = ["rw", "read_pct", "bs", "qd"],
          value_parser = crate::values::result_id)]
    pub like: Option<i64>,
    /// read | write | randread | randwrite | randrw.
    #[arg(long, default_value = "randread", value_parser = str::parse::<RwMode>)]
    pub rw: RwMode,
    /// Share of reads for --rw randrw, in percent.
    #[arg(long, value_parser = crate::values::whole(0u8, 100))]
    pub read_pct: Option<u8>,
    /// Block size, or a split with shares: 8k:70,1m:30.
    #[arg(long, default_value = "8k", value_parser = str::parse::<BlockSplit>)]
    pub bs: BlockSplit,
    /// Outstanding I/Os per worker.
    #[arg(long, default_value_t = 32, value_parser = crate::values::whole(1u32, 4096))]
    pub qd: u32,
    /// Worker threads (each with its own ring and --qd I/Os in flight).
    #[arg(long, default_value_t = 1, value_parser = crate::values::whole(1u32, 256))]
    pub workers: u32,
    /// Measured time (30s, 5m). Default 10s unless --ios is given.
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Measured I/Os over all workers (ends the job when reached, or at --time if sooner).
    #[arg(long, value_parser = crate::values::whole(1u64, u64::MAX))]
    pub ios: Option<u64>,
    /// Time run before the measured window and left out of the results.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub ramp: Duration,
    /// Cap on total I/Os per second over all workers.
    #[arg(long, value_parser = crate::values::whole(1u64, u64::MAX))]
    pub rate_iops: Option<u64>,
    /// Offset distribution: uniform, zipf:THETA, hotspot:SIZE@OFFSET:EVERY.
    #[arg(long, default_value = "uniform", value_parser = str::parse::<Dist>)]
    pub dist: Dist,
    /// Length of one interval of the time series.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Ramp up until IOPS are steady, then measure: fio's criteria iops:PCT% (every interval
    /// of the window within PCT% of its mean) or iops_slope:PCT% (slope per second, % of the
    /// mean). Bare --steady means iops:20%. The ramp lasts at least --ramp.
    #[arg(long, value_name = "CRITERION", num_args = 0..=1, default_missing_value = "iops:20%",
          value_parser = parse_steady_criterion)]
    pub steady: Option<SteadyCriterion>,
    /// Rolling window the --steady criterion must hold over (fio's ss_dur).
    #[arg(long, default_value = "5s", value_parser = parse_duration, requires = "steady")]
    pub steady_window: Duration,
    /// Longest ramp under --steady; the measured window starts then, steady or not (and the
    /// summary says so).
    #[arg(long, default_value = "2m", value_parser = parse_duration, requires = "steady")]
    pub steady_timeout: Duration,
    /// Over MPI ranks: let every rank write anywhere in a target all ranks share (by default
    /// each writes only its own 1/N of --region, as IOR's segments: no two ranks' writes
    /// overlap).
    #[arg(long)]
    pub shared_offsets: bool,
    /// Over MPI ranks: keep every rank's own interval series in the result (`ranks[].
    /// intervals`); by default each rank keeps a summary row and only the job's series is
    /// kept.
    #[arg(long)]
    pub keep_rank_series: bool,
    #[command(flatten)]
    pub log: LogArgs,
    #[command(flatten)]
    pub result: ResultArgs,
}

/// `run`'s log writer beside the job (`--log-bs` turns it on).
#[derive(Args, Debug)]
pub struct LogArgs {
    /// Beside the job, a log writer (a database's WAL writer): one thread writing SIZE bytes
    /// sequentially, each write followed by fdatasync, wrapping around in --log-size. With
    /// --like, a db run that wrote WAL sets it (its mean WAL write).
    #[arg(long, value_name = "SIZE", value_parser = str::parse::<BlockSize>)]
    pub log_bs: Option<BlockSize>,
    /// The log writer's own file or device (as PostgreSQL's --waldir on a device of its
    /// own), created at --log-size when missing. Default (or the first --target itself): the
    /// last --log-size bytes of the first --target, which the job's --region then leaves out.
    #[arg(long, value_name = "PATH", value_parser = crate::values::path_item)]
    pub log_target: Option<PathBuf>,
    /// Bytes the log writer wraps around in (a multiple of 4k). Default: 64m.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub log_size: Option<u64>,
    /// Cap on log writes per second. Default: back to back.
    #[arg(long, value_name = "N", value_parser = crate::values::whole(1u64, 10_000_000))]
    pub log_rate: Option<u64>,
}
