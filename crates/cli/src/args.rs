//! The command line as clap sees it: raw values, each parsed by the engine's own parser so
//! a bad value fails here with the flag's name. `options` turns these into a validated job.

use clap::{Args, Parser, Subcommand};
use iogauge_model::calib::Criterion;
use iogauge_model::iopath::{FixedBufs, MemMode, RingSetup};
use iogauge_model::layout::{FailGroups, LayoutSpec, ReadFrom};
use iogauge_model::spec::{
    parse_duration, parse_size, parse_steady_criterion, BlockSplit, Dist, EngineKind, Region,
    RwMode,
};
use iogauge_stats::SteadyCriterion;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "iogauge",
    version,
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
    Plan(crate::plan::PlanArgs),
    /// A real PostgreSQL doing physical I/O on the storage under test (the SLOB method).
    Db(crate::db::DbArgs),
    /// Run a campaign file: configurations × repetitions, stored as they finish, resumable.
    Campaign(crate::campaign::CampaignArgs),
    /// A campaign's self-contained HTML report (charts, statistics, every run's series).
    Report(crate::campaign::results::ReportArgs),
    /// Two runs, or two cases of a campaign, side by side with the ratio and a verdict.
    Compare(crate::campaign::results::CompareArgs),
    /// A campaign's tables as CSV, Markdown or JSON.
    Export(crate::campaign::results::ExportArgs),
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Refresh interval (100ms to 1h).
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub interval: Duration,
    /// Devices to show by kernel name, e.g. sda,nvme0n1. Default: every whole disk that has
    /// done I/O.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub devices: Vec<String>,
    /// One timestamped line per interval instead of the full-screen view (for logs, like
    /// collectl -oT); implied when stdout is not a terminal.
    #[arg(long)]
    pub plain: bool,
    /// Stop after this many intervals (default: until q or Ctrl-C).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Results store whose runs in progress to follow.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// The targets and how they are accessed (shared by `run` and `calibrate`).
#[derive(Args, Debug)]
pub struct TargetArgs {
    /// File or block device to test; repeat (or separate with commas) for several, and I/Os
    /// spread over all of them. A missing file is created at --size and pre-filled.
    /// Default: ./iogauge-scratch/data (created, 1G).
    #[arg(long = "target", value_name = "PATH", value_delimiter = ',')]
    pub targets: Vec<PathBuf>,
    /// Bytes to test on each target, and the size of files iogauge creates (8k, 1m, 2G).
    #[arg(long, value_parser = size)]
    pub size: Option<u64>,
    /// Part of each target to use: 0%..25% (outer quarter of an HDD), 75%..100%, 1G..2G.
    #[arg(long, default_value = "0%..100%", value_parser = str::parse::<Region>)]
    pub region: Region,
    /// I/O engine: io_uring or psync.
    #[arg(long, default_value = "io_uring", value_parser = str::parse::<EngineKind>)]
    pub engine: EngineKind,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Memory of the I/O buffers: hugepage (2 MiB pages, every buffer physically
    /// contiguous, as a database's buffer cache) or page (4 KiB pages, fio's default).
    #[arg(long, default_value = "hugepage", value_parser = str::parse::<MemMode>)]
    pub mem: MemMode,
    /// Register the buffers with io_uring: auto (on huge pages, where it measured faster),
    /// on or off.
    #[arg(long, default_value = "auto", value_parser = str::parse::<FixedBufs>)]
    pub fixed_bufs: FixedBufs,
    /// io_uring setup flags: auto (single where the kernel has it), plain, coop
    /// (COOP_TASKRUN), single (SINGLE_ISSUER+COOP_TASKRUN), defer (SINGLE_ISSUER+DEFER_TASKRUN).
    #[arg(long, default_value = "auto", value_parser = str::parse::<RingSetup>)]
    pub ring_setup: RingSetup,
    /// io_uring: I/Os per submission (fio's iodepth_batch_submit); 1 submits each I/O as it
    /// is queued, 0 submits them all with the next wait.
    #[arg(long, default_value = "1", value_parser = clap::value_parser!(u32).range(0..=65536))]
    pub submit_batch: u32,
    /// Hand existing files or block devices over for writing: their contents are destroyed.
    #[arg(long)]
    pub allow_overwrite: bool,
    /// Seed for the offset generators (same seed, same offsets).
    #[arg(long)]
    pub seed: Option<u64>,
    /// How I/Os land on the targets: concat (default), stripe:UNIT (RAID 0, e.g. stripe:1m),
    /// mirror:2|3 (ASM normal/high, RAID 1/10), combined as mirror:2,stripe:1m.
    #[arg(long, value_parser = str::parse::<LayoutSpec>)]
    pub layout: Option<LayoutSpec>,
    /// Failure groups for a mirror: members by name (path or its last part), groups
    /// separated by '/': d1,d2/d3,d4. Copies never share a group. Default: one per target.
    #[arg(long, value_name = "GROUPS", value_parser = str::parse::<FailGroups>)]
    pub failgroups: Option<FailGroups>,
    /// Treat this target as failed (repeatable): its reads move to partners, its writes are
    /// dropped, as a degraded mirror does.
    #[arg(long, value_name = "TARGET")]
    pub degraded: Vec<String>,
    /// Which copy a mirrored read goes to: primary, or balanced over the live copies.
    #[arg(long, value_parser = str::parse::<ReadFrom>)]
    pub read_from: Option<ReadFrom>,
    /// Throttle every target to this many I/Os per second (a token bucket each), for
    /// deterministic layout experiments.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub member_iops: Option<u64>,
}

/// Where results are stored.
#[derive(Args, Debug)]
pub struct StoreArgs {
    /// Results database (SQLite). Default: $IOGAUGE_STORE, else
    /// $XDG_DATA_HOME/iogauge/results.sqlite, else ~/.local/share/iogauge/results.sqlite.
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
}

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
    pub id: i64,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print the stored JSON document exactly as it was saved.
    #[arg(long)]
    pub json: bool,
    /// Re-render a run's time series at this coarser interval (a whole multiple of the
    /// recorded one): workload percentiles from the stored per-interval histograms, device
    /// figures from the raw snapshots. Prints the interval table (or the JSON document).
    #[arg(long, value_parser = duration)]
    pub interval: Option<Duration>,
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub io: TargetArgs,
    /// Latency cap for max_iops (CALIBRATE_IO's max_latency).
    #[arg(long, default_value = "20ms", value_parser = duration)]
    pub max_latency: Duration,
    /// Which latency the cap applies to: mean (as CALIBRATE_IO), p95 or p99.
    #[arg(long, default_value = "mean", value_parser = str::parse::<Criterion>)]
    pub criterion: Criterion,
    /// Small I/O size (step 1).
    #[arg(long, default_value = "8k", value_parser = block)]
    pub block: u64,
    /// Large I/O size (steps 2 and 3).
    #[arg(long, default_value = "1m", value_parser = block)]
    pub large_block: u64,
    /// Measured time of each point (a further quarter of it runs first as ramp-up).
    #[arg(long, default_value = "2s", value_parser = duration)]
    pub point_time: Duration,
    /// Physical disks behind the targets: sets the ramp's ceiling (32 outstanding per disk,
    /// at least 64), like CALIBRATE_IO's num_physical_disks and ORION's -num_disks.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub disks: u32,
    /// Share of writes in every point (ORION -write); only on iogauge's own files or devices
    /// handed over with --allow-overwrite.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub write_pct: u8,
    /// Before each point, unmeasured large reads over this many bytes to flush an array
    /// cache (ORION -cache_size).
    #[arg(long, value_parser = size)]
    pub cache_size: Option<u64>,
    /// Also run ORION's small × large mixed matrix (small I/Os while large ones stream).
    #[arg(long)]
    pub matrix: bool,
    /// With --matrix: write iops.csv, mbps.csv and lat.csv (ORION's layout) into DIR.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print the result as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

fn block(s: &str) -> Result<u64, String> {
    let b = parse_size(s)?;
    if b == 0 || !b.is_multiple_of(512) || b > 64 << 20 {
        return Err(format!("'{s}' must be a multiple of 512 bytes up to 64m"));
    }
    Ok(b)
}

fn size(s: &str) -> Result<u64, String> {
    parse_size(s)
}

fn duration(s: &str) -> Result<Duration, String> {
    parse_duration(s)
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub io: TargetArgs,
    /// read | write | randread | randwrite | randrw.
    #[arg(long, default_value = "randread", value_parser = str::parse::<RwMode>)]
    pub rw: RwMode,
    /// Share of reads for --rw randrw, in percent.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub read_pct: Option<u8>,
    /// Block size, or a split with shares: 8k:70,1m:30.
    #[arg(long, default_value = "8k", value_parser = str::parse::<BlockSplit>)]
    pub bs: BlockSplit,
    /// Outstanding I/Os per worker.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub qd: u32,
    /// Worker threads (each with its own ring and --qd I/Os in flight).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub workers: u32,
    /// Measured time (30s, 5m). Default 10s unless --ios is given.
    #[arg(long, value_parser = duration)]
    pub time: Option<Duration>,
    /// Measured I/Os over all workers (ends the job when reached, or at --time if sooner).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub ios: Option<u64>,
    /// Time run before the measured window and left out of the results.
    #[arg(long, default_value = "0s", value_parser = duration)]
    pub ramp: Duration,
    /// Cap on total I/Os per second over all workers.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub rate_iops: Option<u64>,
    /// Offset distribution: uniform, zipf:THETA, hotspot:SIZE@OFFSET:EVERY.
    #[arg(long, default_value = "uniform", value_parser = str::parse::<Dist>)]
    pub dist: Dist,
    /// Length of one interval of the time series.
    #[arg(long, default_value = "1s", value_parser = duration)]
    pub interval: Duration,
    /// Ramp up until IOPS are steady, then measure: fio's criteria iops:PCT% (every interval
    /// of the window within PCT% of its mean) or iops_slope:PCT% (slope per second, % of the
    /// mean). Bare --steady means iops:20%. The ramp lasts at least --ramp.
    #[arg(long, value_name = "CRITERION", num_args = 0..=1, default_missing_value = "iops:20%",
          value_parser = parse_steady_criterion)]
    pub steady: Option<SteadyCriterion>,
    /// Rolling window the --steady criterion must hold over (fio's ss_dur).
    #[arg(long, default_value = "5s", value_parser = duration, requires = "steady")]
    pub steady_window: Duration,
    /// Longest ramp under --steady; the measured window starts then, steady or not (and the
    /// summary says so).
    #[arg(long, default_value = "2m", value_parser = duration, requires = "steady")]
    pub steady_timeout: Duration,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print the result as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}
