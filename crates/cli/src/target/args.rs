//! The flags that say what `run` and `calibrate` test and how: targets, size and region,
//! engine and buffers, io_uring setup, overwrite permission, seed, and the layout over
//! several targets. Each value is parsed by the model's own parser, so a bad one fails here
//! with the flag's name; `options` checks them as a whole.

use clap::Args;
use iogauge_model::iopath::{FixedBufs, MemMode, RingSetup};
use iogauge_model::layout::{FailGroups, LayoutSpec, ReadFrom};
use iogauge_model::spec::{EngineKind, Region};
use iogauge_model::units::parse_size;
use std::path::PathBuf;

/// The targets and how they are accessed (shared by `run` and `calibrate`).
#[derive(Args, Debug)]
pub struct TargetArgs {
    /// File or block device to test; repeat (or separate with commas) for several, and I/Os
    /// spread over all of them. A missing file is created at --size and pre-filled.
    /// Default: ./iogauge-scratch/data (created, 1G).
    #[arg(long = "target", value_name = "PATH", value_delimiter = ',',
          value_parser = crate::values::path_item)]
    pub targets: Vec<PathBuf>,
    /// Bytes to test on each target, and the size of files iogauge creates (8k, 1m, 2G).
    #[arg(long, value_parser = parse_size)]
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
    #[arg(long, default_value = "1", value_parser = crate::values::whole(0u32, 65536))]
    pub submit_batch: u32,
    /// Hand existing files or block devices over for writing: their contents are destroyed.
    #[arg(long)]
    pub allow_overwrite: bool,
    /// Seed for the offset generators (same seed, same offsets).
    #[arg(long, value_parser = crate::values::whole(0u64, u64::MAX))]
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
    #[arg(long, value_parser = crate::values::whole(1u64, 10_000_000))]
    pub member_iops: Option<u64>,
}
