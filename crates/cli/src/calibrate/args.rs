//! `iogauge calibrate`'s flags as clap sees them (the target flags are shared with `run`);
//! `options` checks them as a whole.

use crate::store_args::ResultArgs;
use crate::target::args::TargetArgs;
use clap::Args;
use iogauge_model::calib::{Criterion, LargeType, MatrixMode};
use iogauge_model::units::{parse_duration, parse_size, split_unit};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub io: TargetArgs,
    /// Latency cap for max_iops (CALIBRATE_IO's max_latency).
    #[arg(long, default_value = "20ms", value_parser = latency_cap)]
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
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub point_time: Duration,
    /// Physical disks behind the targets: sets the ramp's ceiling (32 outstanding per disk,
    /// at least 64), like CALIBRATE_IO's num_physical_disks and ORION's -num_disks.
    #[arg(long, default_value_t = 1, value_parser = crate::values::whole(1u32, 1024))]
    pub disks: u32,
    /// Share of writes in every point (ORION -write); only on iogauge's own files or devices
    /// handed over with --allow-overwrite.
    #[arg(long, default_value_t = 0, value_parser = crate::values::whole(0u8, 100))]
    pub write_pct: u8,
    /// Before each point, unmeasured large reads over this many bytes to flush an array
    /// cache (ORION -cache_size).
    #[arg(long, value_parser = parse_size)]
    pub cache_size: Option<u64>,
    /// Large I/Os (steps 2 and 3, the matrix's large I/Os): rand, or seq: one sequential
    /// stream per outstanding I/O, each over its own slice of the span (ORION -type).
    #[arg(long, value_name = "TYPE", default_value = "rand", value_parser = str::parse::<LargeType>)]
    pub large_type: LargeType,
    /// ORION's small × large mixed matrix after the curves (ORION -matrix): basic (none, the
    /// default), detailed (every cell; a bare --matrix), row (large fixed at --num-large),
    /// col (small fixed at --num-small), point (the one cell --num-small × --num-large).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "detailed",
          value_parser = str::parse::<MatrixMode>)]
    pub matrix: Option<MatrixMode>,
    /// Outstanding small I/Os of every cell of --matrix col or point (ORION -num_small).
    #[arg(long, value_name = "N", value_parser = crate::values::whole(0u32, 4096))]
    pub num_small: Option<u32>,
    /// Outstanding large I/Os of every cell of --matrix row or point (ORION -num_large).
    #[arg(long, value_name = "N", value_parser = crate::values::whole(0u32, 4096))]
    pub num_large: Option<u32>,
    /// With --matrix: write iops.csv, mbps.csv and lat.csv (ORION's layout) into DIR.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub result: ResultArgs,
}

fn block(s: &str) -> Result<u64, String> {
    let b = parse_size(s)?;
    if b == 0 || !b.is_multiple_of(512) || b > 64 << 20 {
        return Err(format!("'{s}' must be a multiple of 512 bytes up to 64m"));
    }
    Ok(b)
}

/// `--max-latency`: a duration with its unit. A bare number is refused: CALIBRATE_IO's
/// max_latency is in milliseconds, iogauge's durations in seconds, and `20` would silently
/// mean 20 s.
fn latency_cap(s: &str) -> Result<Duration, String> {
    let (num, unit) = split_unit(s);
    if !num.is_empty() && unit.is_empty() {
        let n = iogauge_model::echo::bounded(num);
        return Err(format!(
            "{n} what? give the unit, as in {n}ms (CALIBRATE_IO's max_latency is in milliseconds) or {n}s"
        ));
    }
    parse_duration(s)
}
