//! What the OS says about a target before any I/O: which filesystem holds it and which block
//! device backs it. Samplers of /proc (diskstats, stat, meminfo) join this crate later.

mod fs;

pub use fs::{backing_device, fs_of, FsInfo};
