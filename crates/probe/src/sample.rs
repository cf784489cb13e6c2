//! OS samplers: raw counters of /proc/diskstats, /proc/stat (the machine and each CPU),
//! /proc/meminfo, /proc/pressure/io and /proc/loadavg taken on the run's interval grid (`iogauge_model::system::Snapshot`,
//! what gets stored; the iostat -x figures are derived from two of them by
//! `iogauge_model::derive`). Because the raw counters are kept, a run can be re-derived
//! later at any multiple of its interval.
//!
//! Every file is parsed from text (procfs-core's parsers, checked where they are lenient),
//! so the tests run on lines captured from several kernels; reading the live files is only
//! [`Sampler::sample`].

mod cpu;
mod disk;
mod error;

pub use cpu::{
    parse_loadavg, parse_mem_total, parse_meminfo, parse_pressure, parse_stat, parse_stat_cpus,
    parse_swap, ram_bytes,
};
pub use disk::{parse_disk_line, parse_diskstats};
pub use error::SampleError;

use iogauge_model::system::{DiskCounters, Snapshot};
use std::collections::HashSet;
use std::io;

/// The texts of the sampled files.
#[derive(Clone, Copy, Debug)]
pub struct Texts<'a> {
    pub diskstats: &'a str,
    pub stat: &'a str,
    pub meminfo: &'a str,
    /// `None` where /proc/pressure/io does not exist.
    pub pressure_io: Option<&'a str>,
    pub loadavg: &'a str,
    /// `None` where /proc/vmstat could not be read.
    pub vmstat: Option<&'a str>,
}

/// Builds a snapshot from the texts of the sampled files, keeping the disks `keep` accepts.
pub fn parse_snapshot(
    at_ns: u64,
    t: Texts,
    keep: impl Fn(&DiskCounters) -> bool,
) -> Result<Snapshot, SampleError> {
    let mut disks = parse_diskstats(t.diskstats)?;
    disks.retain(|d| keep(d));
    // A run keeps every snapshot to its end: no room left for the lines not kept (every
    // loop device's, on some machines), which held half a snapshot's memory.
    disks.shrink_to_fit();
    let (cpu, mut cpus) = parse_stat_cpus(t.stat)?;
    cpus.shrink_to_fit();
    Ok(Snapshot {
        at_ns,
        disks,
        cpu,
        mem: parse_meminfo(t.meminfo)?,
        psi: t.pressure_io.map(parse_pressure).transpose()?,
        cpus,
        load: Some(parse_loadavg(t.loadavg)?),
        layers: Vec::new(),
        ring: None,
        others: Vec::new(),
        swap: t.vmstat.and_then(parse_swap),
    })
}

/// Reads snapshots from the live /proc.
#[derive(Clone, Debug, Default)]
pub struct Sampler {
    /// Devices to keep by kernel name (`vda`, `sda1`, `md0`). `None`: every whole disk
    /// (an entry of /sys/block, so no partitions) that has done any I/O since boot, as
    /// `iostat -x` lists them.
    pub devices: Option<Vec<String>>,
}

impl Sampler {
    pub fn new(devices: Option<Vec<String>>) -> Sampler {
        Sampler { devices }
    }

    /// One snapshot of the live system, stamped `at_ns`. A named device that does not
    /// exist (yet, or any more) is simply absent from the snapshot.
    pub fn sample(&self, at_ns: u64) -> Result<Snapshot, SampleError> {
        let diskstats = read("/proc/diskstats")?;
        let stat = read("/proc/stat")?;
        let meminfo = read("/proc/meminfo")?;
        let loadavg = read("/proc/loadavg")?;
        // Optional: a snapshot without it only lacks the swap figures.
        let vmstat = std::fs::read_to_string("/proc/vmstat").ok();
        let pressure = match std::fs::read_to_string("/proc/pressure/io") {
            Ok(t) => Some(t),
            // Absent before 4.20; EOPNOTSUPP when PSI is compiled in but disabled (psi=0).
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::Unsupported
                ) =>
            {
                None
            }
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => None,
            Err(source) => {
                return Err(SampleError::Read {
                    path: "/proc/pressure/io".into(),
                    source,
                })
            }
        };
        let texts = Texts {
            diskstats: &diskstats,
            stat: &stat,
            meminfo: &meminfo,
            pressure_io: pressure.as_deref(),
            loadavg: &loadavg,
            vmstat: vmstat.as_deref(),
        };
        match &self.devices {
            Some(names) => parse_snapshot(at_ns, texts, |d| names.contains(&d.name)),
            None => {
                let whole = whole_disks()?;
                parse_snapshot(at_ns, texts, |d| whole.contains(&d.name) && !d.never_used())
            }
        }
    }
}

fn read(path: &str) -> Result<String, SampleError> {
    std::fs::read_to_string(path).map_err(|source| SampleError::Read {
        path: path.into(),
        source,
    })
}

/// Names in /sys/block: whole disks, loop, md, dm and zram devices, never partitions.
fn whole_disks() -> Result<HashSet<String>, SampleError> {
    let err = |source| SampleError::Read {
        path: "/sys/block".into(),
        source,
    };
    let mut names = HashSet::new();
    for entry in std::fs::read_dir("/sys/block").map_err(err)? {
        names.insert(
            entry
                .map_err(err)?
                .file_name()
                .to_string_lossy()
                .into_owned(),
        );
    }
    Ok(names)
}

#[cfg(test)]
mod tests;
