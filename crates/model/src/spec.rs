//! The validated job: plain data that says what to run, built from the command line (or a
//! campaign file) by parsing each value once. The engine never sees raw flags.

pub use crate::iopath::EngineKind;
use crate::iopath::{IoPath, IoPathOpts};
use crate::layout::{FailGroups, LayoutSpec, ReadFrom};
use iogauge_stats::units::{opt_secs, parse_whole, secs, split_range, BlockSize};
use iogauge_stats::{SteadyConfig, SteadyCriterion};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

pub use iogauge_stats::units::{fmt_size, parse_duration, parse_size, MAX_DURATION, MIN_ALIGN};

mod like;
mod log;
mod replay;
pub use like::{Doublewrite, IoShape, Like, LogShape};
pub use log::{LogStream, DEFAULT_LOG_SIZE, LOG_ALIGN};
pub use replay::{Pace, Replay, ReplayMap};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
}

impl RwMode {
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }

    pub fn writes(self) -> bool {
        matches!(self, RwMode::Write | RwMode::RandWrite | RwMode::RandRw)
    }

    /// Share of reads in percent for this mode; `read_pct` only matters for `randrw`.
    pub fn read_share(self, read_pct: u8) -> u8 {
        match self {
            RwMode::Read | RwMode::RandRead => 100,
            RwMode::Write | RwMode::RandWrite => 0,
            RwMode::RandRw => read_pct,
        }
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandRw => "randrw",
        })
    }
}

impl FromStr for RwMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "randrw" => RwMode::RandRw,
            _ => {
                return Err(format!(
                    "unknown mode '{s}': use read, write, randread, randwrite or randrw"
                ))
            }
        })
    }
}

/// Block sizes with the share of I/Os each gets, like fio's `bssplit`: `8k:70,1m:30`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSplit(pub Vec<BlockShare>);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockShare {
    pub bs: u64,
    pub pct: u8,
}

impl BlockSplit {
    pub fn single(bs: u64) -> Self {
        BlockSplit(vec![BlockShare { bs, pct: 100 }])
    }
    pub fn max(&self) -> u64 {
        self.0.iter().map(|s| s.bs).max().unwrap_or(0)
    }
    pub fn min(&self) -> u64 {
        self.0.iter().map(|s| s.bs).min().unwrap_or(0)
    }
}

impl FromStr for BlockSplit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(',').collect();
        if parts.len() == 1 && !s.contains(':') {
            return Ok(BlockSplit::single(parse_block_size(s)?));
        }
        let mut out = Vec::new();
        for p in parts {
            let (bs, pct) = p
                .split_once(':')
                .ok_or_else(|| format!("'{p}' needs SIZE:PERCENT, as in 8k:70,1m:30"))?;
            // A share is of whole I/Os in a hundred: 99.5 cannot be issued exactly.
            let pct = parse_whole(pct.trim_end_matches('%'), 0, 100).map_err(|_| {
                format!("'{p}': a share is a whole percentage from 0 to 100, as in 8k:90,1m:10")
            })? as u8;
            out.push(BlockShare {
                bs: parse_block_size(bs)?,
                pct,
            });
        }
        let sum: u32 = out.iter().map(|s| u32::from(s.pct)).sum();
        if sum != 100 {
            return Err(format!("the shares in '{s}' add up to {sum}%, not 100%"));
        }
        out.retain(|s| s.pct > 0);
        Ok(BlockSplit(out))
    }
}

impl fmt::Display for BlockSplit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [one] = self.0.as_slice() {
            return write!(f, "{}", fmt_size(one.bs));
        }
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|s| format!("{}:{}", fmt_size(s.bs), s.pct))
            .collect();
        write!(f, "{}", parts.join(","))
    }
}

fn parse_block_size(s: &str) -> Result<u64, String> {
    s.parse::<BlockSize>().map(BlockSize::bytes)
}

/// One end of a region: a share of the target or a byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Pct(f64),
    Bytes(u64),
}

impl Bound {
    fn resolve(self, size: u64) -> u64 {
        match self {
            Bound::Pct(p) => ((size as f64) * p / 100.0).round() as u64,
            Bound::Bytes(b) => b,
        }
    }
}

impl FromStr for Bound {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(p) = s.strip_suffix('%') {
            let v: f64 = p
                .trim()
                .parse()
                .map_err(|_| format!("'{s}' is not a percentage"))?;
            if !(0.0..=100.0).contains(&v) {
                return Err(format!("'{s}' is outside 0%..100%"));
            }
            Ok(Bound::Pct(v))
        } else {
            Ok(Bound::Bytes(parse_size(s)?))
        }
    }
}

/// The part of each target the job touches: `0%..25%` (outer quarter of an HDD), `1G..2G`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Region {
    pub start: Bound,
    pub end: Bound,
}

impl Default for Region {
    fn default() -> Self {
        Region {
            start: Bound::Pct(0.0),
            end: Bound::Pct(100.0),
        }
    }
}

impl Region {
    /// Byte range `[start, end)` of a target of `size` bytes, aligned inwards to `align`.
    /// `None` when the region is empty or lies outside the target.
    pub fn resolve(&self, size: u64, align: u64) -> Option<(u64, u64)> {
        // A start at or past the end is outside; checked, because rounding a start near
        // u64::MAX up to `align` wrapped to 0 and silently tested the whole target.
        let start = self.start.resolve(size);
        if start >= size {
            return None;
        }
        let s = start.div_ceil(align).checked_mul(align)?;
        let e = self.end.resolve(size).min(size) / align * align;
        (s < e).then_some((s, e))
    }
}

impl FromStr for Region {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = split_range(s, "0%..25%")
            .map_err(|e| format!("region {e}"))?
            .ok_or_else(|| format!("region '{s}' needs START..END, as in 0%..25% or 1G..2G"))?;
        let r = Region {
            start: a.parse()?,
            end: b.parse()?,
        };
        if let (Bound::Pct(x), Bound::Pct(y)) = (r.start, r.end) {
            if x >= y {
                return Err(format!(
                    "region '{s}' is empty: the start must be below the end"
                ));
            }
        }
        if let (Bound::Bytes(x), Bound::Bytes(y)) = (r.start, r.end) {
            if x >= y {
                return Err(format!(
                    "region '{s}' is empty: the start must be below the end"
                ));
            }
        }
        Ok(r)
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |b: Bound| match b {
            Bound::Pct(p) => format!("{p}%"),
            Bound::Bytes(n) => fmt_size(n),
        };
        write!(f, "{}..{}", b(self.start), b(self.end))
    }
}

/// Where random offsets fall.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Dist {
    Uniform,
    /// Zipf over the blocks of the region with exponent `theta` (fio's `random_distribution=zipf`).
    Zipf {
        theta: f64,
    },
    /// Every `every`-th I/O goes to the hot range `[offset, offset+size)` of the region
    /// (SLOB's HOTSPOT_MB / HOTSPOT_OFFSET_MB / HOTSPOT_FREQUENCY); the rest are uniform.
    Hotspot {
        size: u64,
        offset: u64,
        every: u32,
    },
}

impl FromStr for Dist {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "uniform" {
            return Ok(Dist::Uniform);
        }
        if let Some(t) = s.strip_prefix("zipf:") {
            let theta: f64 = t
                .parse()
                .map_err(|_| format!("zipf exponent '{t}' is not a number"))?;
            if !(theta > 0.0 && theta.is_finite()) {
                return Err(format!(
                    "zipf exponent '{t}' must be above 0, as in zipf:1.2"
                ));
            }
            return Ok(Dist::Zipf { theta });
        }
        if let Some(h) = s.strip_prefix("hotspot:") {
            let usage = || format!("hotspot '{h}' needs SIZE@OFFSET:EVERY, as in hotspot:64m@0:4");
            let (size, rest) = h.split_once('@').ok_or_else(usage)?;
            let (offset, every) = rest.split_once(':').ok_or_else(usage)?;
            let every = parse_whole(every, 1, u64::from(u32::MAX))
                .map_err(|e| format!("hotspot frequency '{every}': {e}"))?
                as u32;
            let size = parse_size(size)?;
            if size == 0 {
                return Err(usage());
            }
            return Ok(Dist::Hotspot {
                size,
                offset: parse_size(offset)?,
                every,
            });
        }
        Err(format!(
            "unknown distribution '{s}': use uniform, zipf:THETA or hotspot:SIZE@OFFSET:EVERY"
        ))
    }
}

/// The workload: what to issue, how hard, for how long.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub rw: RwMode,
    /// Share of reads for `randrw`, in percent.
    pub read_pct: u8,
    pub bs: BlockSplit,
    /// Outstanding I/Os per worker.
    pub qd: u32,
    pub workers: u32,
    /// Measured time; `None` when the job is bounded by `ios` alone.
    #[serde(with = "opt_secs")]
    pub time: Option<Duration>,
    /// Measured I/Os over all workers; `None` when bounded by time alone.
    pub ios: Option<u64>,
    /// Time before the measured window; recorded, never summarised.
    #[serde(with = "secs")]
    pub ramp: Duration,
    /// Total I/O rate cap over all workers.
    pub rate_iops: Option<u64>,
    pub region: Region,
    pub dist: Dist,
    pub engine: EngineKind,
    /// O_DIRECT (true) or through the page cache.
    pub direct: bool,
    #[serde(with = "secs")]
    pub interval: Duration,
    pub seed: u64,
    /// `--steady`: the ramp lasts until IOPS are steady (at least `ramp`, at most the
    /// wait's timeout), and the measured window starts at the next interval boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyWait>,
    /// `--layout` and its companions: how logical I/Os land on the targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutOpts>,
    /// `--mem`, `--fixed-bufs`, `--ring-setup`, `--submit-batch`: how to run the I/O.
    #[serde(flatten)]
    pub io: IoPathOpts,
    /// What the job ran on (memory, registered buffers and files, ring flags): filled in
    /// from the engine's outcome when the result is recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_path: Option<IoPath>,
    /// `--like`: the db run whose device I/O this job replays ([`crate::db::shape`]), and the
    /// shape it took from it; its figures stand in for that run's database's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub like: Option<Like>,
    /// `--log-bs` and its companions: the log-writer stream beside the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogStream>,
    /// `iogauge replay`: the recorded requests issued instead of generated ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
}

/// The offset generators' seed when `--seed` is not given.
pub const DEFAULT_SEED: u64 = 0x0106_a06e;

/// How the I/O meets the targets, as `run` and `calibrate` both take it (`--engine`,
/// `--buffered`, `--region`, `--seed`, `--layout` and its companions, `--mem`,
/// `--fixed-bufs`, `--ring-setup`, `--submit-batch`). A calibration keeps it whole (flattened:
/// its JSON lists these fields in this order); a job's JSON lists them among its workload's,
/// so [`JobSpec`] keeps them as its own fields and takes them from here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoSetup {
    pub engine: EngineKind,
    /// O_DIRECT (true) or through the page cache.
    pub direct: bool,
    pub region: Region,
    pub seed: u64,
    /// `--layout` and its companions: how logical I/Os land on the targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutOpts>,
    /// `--mem`, `--fixed-bufs`, `--ring-setup`, `--submit-batch`: how to run the I/O.
    #[serde(flatten)]
    pub io: IoPathOpts,
}

/// A layout over the targets (`--layout`, `--failgroups`, `--degraded`, `--read-from`,
/// `--member-iops`); see [`crate::layout`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayoutOpts {
    pub spec: LayoutSpec,
    pub failgroups: Option<FailGroups>,
    /// Targets marked failed, as given on the command line.
    pub degraded: Vec<String>,
    pub read_from: ReadFrom,
    /// Each member throttled to this many I/Os per second (a token bucket per member).
    pub member_iops: Option<u64>,
}

/// How `--steady` decides that the ramp is over: fio's `ss=` criterion over a rolling
/// window (`ss_dur`), checked on every ramp interval, for at most `timeout`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyWait {
    pub criterion: SteadyCriterion,
    #[serde(with = "secs")]
    pub window: Duration,
    #[serde(with = "secs")]
    pub timeout: Duration,
}

impl SteadyWait {
    /// The detector's configuration on this job's interval grid (a window of at least two
    /// intervals; leaving steady state as the report judges it: 3 intervals 30% down).
    pub fn config(&self, interval: Duration) -> SteadyConfig {
        let every = interval.as_secs_f64();
        SteadyConfig {
            criterion: self.criterion,
            window: ((self.window.as_secs_f64() / every).round() as usize).max(2),
            interval_s: every,
            drop_pct: 30.0,
            drop_intervals: 3,
        }
    }
}

/// Parses fio's steady-state criteria: `iops:20%` (max deviation from the window's mean) or
/// `iops_slope:2%` (least-squares slope, % of the mean per second).
pub fn parse_steady_criterion(s: &str) -> Result<SteadyCriterion, String> {
    let bad = || {
        format!("'{s}' is not a steady-state criterion: use iops:PCT% (e.g. iops:20%) or iops_slope:PCT% (e.g. iops_slope:2%)")
    };
    let (kind, value) = s.split_once(':').ok_or_else(bad)?;
    let pct: f64 = value
        .trim()
        .strip_suffix('%')
        .unwrap_or(value.trim())
        .parse()
        .map_err(|_| bad())?;
    if !(pct.is_finite() && pct > 0.0 && pct < 1000.0) {
        return Err(bad());
    }
    match kind.trim() {
        "iops" => Ok(SteadyCriterion::Deviation { pct }),
        "iops_slope" => Ok(SteadyCriterion::Slope { pct_per_s: pct }),
        _ => Err(bad()),
    }
}

impl JobSpec {
    /// A job with iogauge's defaults: 8 KiB random reads, QD 32, one worker, 10 s.
    pub fn new(rw: RwMode) -> Self {
        JobSpec {
            rw,
            read_pct: 70,
            bs: BlockSplit::single(8192),
            qd: 32,
            workers: 1,
            time: Some(Duration::from_secs(10)),
            ios: None,
            ramp: Duration::ZERO,
            rate_iops: None,
            region: Region::default(),
            dist: Dist::Uniform,
            engine: EngineKind::IoUring,
            direct: true,
            interval: Duration::from_secs(1),
            seed: DEFAULT_SEED,
            steady: None,
            layout: None,
            io: IoPathOpts::default(),
            io_path: None,
            like: None,
            log: None,
            replay: None,
        }
    }

    /// The I/O setup `s` in place of this job's.
    pub fn set_setup(&mut self, s: IoSetup) {
        self.engine = s.engine;
        self.direct = s.direct;
        self.region = s.region;
        self.seed = s.seed;
        self.layout = s.layout;
        self.io = s.io;
    }

    /// Alignment of every offset: the smallest block size (fio's `blockalign` default).
    pub fn align(&self) -> u64 {
        self.bs.min().max(MIN_ALIGN)
    }
}

#[cfg(test)]
mod tests;
