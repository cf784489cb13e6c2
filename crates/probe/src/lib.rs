//! What the OS says about a target before any I/O: which filesystem holds it, the chain of
//! block devices under it (partitions, loop, md and dm down to the disks) with their size,
//! rotational flag and scheduler, the md arrays of /proc/mdstat, and the preflight warnings
//! `iogauge calibrate` shows and stores with the run. Every parser reads text or a root
//! directory passed in, so tests run on captured data. `sample` reads /proc/diskstats, stat,
//! meminfo and pressure/io on the run's interval grid and derives iostat -x figures.

// A library never writes to the terminal: results go to its caller, who decides where.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod btrfs;
pub mod cgroup;
mod fs;
mod grid;
mod layout;
pub mod mdstat;
pub mod preflight;
pub mod sample;
pub mod sysfs;

pub use btrfs::btrfs_members_of;
pub use cgroup::io_limits_of;
pub use fs::{backing_device, fs_of, fs_of_nearest, FsInfo};
pub use grid::{
    device_of_path, devices_under, disks_under, phase_grid, sample_grid, sample_grid_with, Devices,
};
pub use layout::{extents_of, file_layout, mount_facts, mount_of};
pub use mdstat::{parse_mdstat, read_mdstat, MdstatError};
pub use preflight::{layout_warnings, preflight, preflight_roles, warnings_for, SHORT_SPAN_PCT};
pub use sample::{ram_bytes, SampleError, Sampler};
pub use sysfs::{file_dev, parse_scheduler, Sysfs, SysfsError};
