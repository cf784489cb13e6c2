//! OS samplers: raw counters of /proc/diskstats, /proc/stat (the machine and each CPU),
//! /proc/meminfo, /proc/pressure/io and cpu, /proc/loadavg and, inside the job's process, its
//! own CPU time and run-queue wait, taken on the run's interval grid (`iogauge_model::system::Snapshot`,
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
mod job;

pub use cpu::{
    parse_loadavg, parse_mem_total, parse_meminfo, parse_pressure, parse_stat, parse_stat_cpus,
    parse_swap, ram_bytes,
};
pub use disk::{parse_disk_line, parse_diskstats};
pub use error::SampleError;
pub use job::{
    parse_pressure_cpu, parse_schedstat, parse_stat_cpu_ticks, retire_this_thread, JobTasks,
};

use iogauge_model::system::{DiskCounters, Snapshot};
use std::collections::HashSet;
use std::io;
use std::sync::Arc;

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
    /// `None` where /proc/pressure/cpu does not exist.
    pub pressure_cpu: Option<&'a str>,
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
        job: None,
        psi_cpu: t.pressure_cpu.map(parse_pressure_cpu).transpose()?,
    })
}

/// Reads snapshots from the live /proc.
#[derive(Clone, Debug, Default)]
pub struct Sampler {
    /// Devices to keep by kernel name (`vda`, `sda1`, `md0`). `None`: every whole disk
    /// (an entry of /sys/block, so no partitions) that has done any I/O since boot, as
    /// `iostat -x` lists them.
    pub devices: Option<Vec<String>>,
    /// This process's threads, sampled as the job's own ([`Sampler::with_job`]); `None`
    /// where the sampler runs beside someone else's work (a database's server, `watch`).
    job: Option<Arc<JobTasks>>,
}

impl Sampler {
    pub fn new(devices: Option<Vec<String>>) -> Sampler {
        Sampler { devices, job: None }
    }

    /// The same sampler, also taking this process's CPU time and its threads' run-queue
    /// wait in each snapshot: the process runs the job being measured.
    pub fn with_job(mut self) -> Sampler {
        self.job = Some(Arc::default());
        self
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
        let pressure = optional_pressure("/proc/pressure/io")?;
        let pressure_cpu = optional_pressure("/proc/pressure/cpu")?;
        let texts = Texts {
            diskstats: &diskstats,
            stat: &stat,
            meminfo: &meminfo,
            pressure_io: pressure.as_deref(),
            loadavg: &loadavg,
            vmstat: vmstat.as_deref(),
            pressure_cpu: pressure_cpu.as_deref(),
        };
        let mut snap = match &self.devices {
            Some(names) => parse_snapshot(at_ns, texts, |d| names.contains(&d.name)),
            None => {
                let whole = whole_disks()?;
                parse_snapshot(at_ns, texts, |d| whole.contains(&d.name) && !d.never_used())
            }
        }?;
        if let Some(j) = &self.job {
            snap.job = j.sample()?;
        }
        Ok(snap)
    }
}

/// A /proc/pressure file's text; `None` where PSI is missing (absent before 4.20;
/// EOPNOTSUPP when compiled in but disabled, `psi=0`).
fn optional_pressure(path: &str) -> Result<Option<String>, SampleError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::Unsupported
            ) =>
        {
            Ok(None)
        }
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => Ok(None),
        Err(source) => Err(SampleError::Read {
            path: path.into(),
            source,
        }),
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
