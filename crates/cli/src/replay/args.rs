//! `iogauge replay`'s flags as clap sees them; `options` checks them as a whole.

use crate::store_args::ResultArgs;
use crate::target::args::TargetArgs;
use clap::{Args, ValueEnum};
use iogauge_model::spec::ReplayMap;
use iogauge_model::units::parse_duration;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The recorded requests: a stored trace's id (`iogauge traces`), or a file: iogauge's
    /// own trace (`capture --output`), a blktrace binary (`blkparse -d`), or a fio iolog
    /// (version 2 or 3, `--write_iolog`), told apart by their content.
    #[arg(value_name = "TRACE")]
    pub trace: String,
    #[command(flatten)]
    pub io: TargetArgs,
    /// timed: each request at its recorded time, however many are in flight (open loop;
    /// latency counts from that time, late requests are counted); fast: in the recorded
    /// order, as fast as the target allows with --depth in flight.
    #[arg(long, value_enum, default_value = "timed")]
    pub pace: PaceArg,
    /// With --pace timed: how much faster than recorded (2: twice as fast, 0.5: half).
    #[arg(long, value_name = "X")]
    pub speed: Option<f64>,
    /// With --pace fast: requests in flight. Default: the recorded mean when each was
    /// issued (1 when the trace does not say).
    #[arg(long, value_parser = crate::values::whole(1u32, 4096))]
    pub depth: Option<u32>,
    /// modulo: every recorded device onto the first --target, each offset modulo its size;
    /// devices: recorded device i onto --target i (modulo the targets given).
    #[arg(long, value_enum, default_value = "modulo")]
    pub map: MapArg,
    /// Length of one interval of the time series.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    #[command(flatten)]
    pub result: ResultArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PaceArg {
    Timed,
    Fast,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MapArg {
    Modulo,
    Devices,
}

impl From<MapArg> for ReplayMap {
    fn from(m: MapArg) -> ReplayMap {
        match m {
            MapArg::Modulo => ReplayMap::Modulo,
            MapArg::Devices => ReplayMap::Devices,
        }
    }
}
