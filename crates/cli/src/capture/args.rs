//! `iogauge capture`'s flags as clap sees them; `options` checks them as a whole.

use crate::store_args::StoreArgs;
use clap::Args;
use iogauge_model::units::{parse_duration, parse_size};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// Record the requests of the disk holding each PATH (a file, a directory, or a block
    /// device; a partition's disk).
    #[arg(long = "path", value_name = "PATH", value_delimiter = ',',
          value_parser = crate::values::path_item)]
    pub paths: Vec<PathBuf>,
    /// Record the requests of these whole disks, by kernel name (vda, nvme0n1, loop3) or
    /// /dev path (a partition's: its disk).
    #[arg(long = "device", value_name = "NAME", value_delimiter = ',')]
    pub devices: Vec<String>,
    /// Keep only the requests of these processes and their descendants (followed as they
    /// are born), and of their io cgroup when it is their own.
    #[arg(long = "pid", value_name = "PID", value_delimiter = ',',
          value_parser = crate::values::whole(1u32, u32::MAX))]
    pub pids: Vec<u32>,
    /// Keep only the requests of the database server running on this data directory
    /// (PostgreSQL or MariaDB: the processes working there, and their descendants).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Keep only the requests whose bios carry this cgroup (its directory in the io
    /// controller's hierarchy: cgroup v1's blkio, or v2's), besides --pid's and --data-dir's.
    #[arg(long, value_name = "DIR")]
    pub cgroup: Option<PathBuf>,
    /// How long to record (30s, 10m). Default: until Ctrl-C.
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Also write the trace to this file (iogauge's own format; it must not exist).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Do not store the trace in the results store (then --output is needed).
    #[arg(long, requires = "output")]
    pub no_store: bool,
    /// The kernel's ring buffer between the disks and this process (a power of two, at
    /// least a page): a reader that falls this far behind loses requests, and says how
    /// many. Default 16m.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub ring: Option<u64>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print the trace's header, trailer and summary as JSON.
    #[arg(long)]
    pub json: bool,
}
