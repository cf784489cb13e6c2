//! OS samplers: raw counters of /proc/diskstats, /proc/stat, /proc/meminfo and
//! /proc/pressure/io taken on the run's interval grid ([`Snapshot`], what gets stored), and
//! the iostat -x style figures computed from two snapshots ([`derive`], pure). Because the
//! raw counters are kept, a run can be re-derived later at any multiple of its interval.
//!
//! Every file is parsed from text (procfs-core's parsers, checked where they are lenient),
//! so the tests run on lines captured from several kernels; reading the live files is only
//! [`Sampler::sample`].

mod cpu;
mod disk;

pub use cpu::{
    parse_meminfo, parse_pressure, parse_stat, CpuCounters, CpuRates, IoPressure, MemInfo,
};
pub use disk::{parse_diskstats, DiskCounters, DiskRates};

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::io;
use std::path::PathBuf;

/// A failure to read or understand one of the sampled files. Nothing is skipped silently: a
/// line the parser does not understand fails the sample, with the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error("reading {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{file}: cannot parse {line:?}: {reason}")]
    Parse {
        file: &'static str,
        line: String,
        reason: String,
    },
}

/// Raw counters at one instant, as stored with a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Monotonic time of the sample, ns, from the caller's clock (the same clock as the
    /// workload's intervals, so the grids line up).
    pub at_ns: u64,
    pub disks: Vec<DiskCounters>,
    pub cpu: CpuCounters,
    pub mem: MemInfo,
    /// `None` when /proc/pressure/io does not exist (kernel < 4.20 or `psi=0`).
    pub psi: Option<IoPressure>,
}

impl Snapshot {
    /// Builds a snapshot from the texts of the four files, keeping the disks `keep` accepts.
    pub fn parse(
        at_ns: u64,
        diskstats: &str,
        stat: &str,
        meminfo: &str,
        pressure_io: Option<&str>,
        keep: impl Fn(&DiskCounters) -> bool,
    ) -> Result<Snapshot, SampleError> {
        let mut disks = parse_diskstats(diskstats)?;
        disks.retain(|d| keep(d));
        Ok(Snapshot {
            at_ns,
            disks,
            cpu: parse_stat(stat)?,
            mem: parse_meminfo(meminfo)?,
            psi: pressure_io.map(parse_pressure).transpose()?,
        })
    }
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
        match &self.devices {
            Some(names) => Snapshot::parse(
                at_ns,
                &diskstats,
                &stat,
                &meminfo,
                pressure.as_deref(),
                |d| names.contains(&d.name),
            ),
            None => {
                let whole = whole_disks()?;
                Snapshot::parse(
                    at_ns,
                    &diskstats,
                    &stat,
                    &meminfo,
                    pressure.as_deref(),
                    |d| whole.contains(&d.name) && !d.never_used(),
                )
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

/// Figures of one interval between two snapshots.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Per device present in both snapshots, by kernel name.
    pub disks: BTreeMap<String, DiskRates>,
    pub cpu: CpuRates,
    /// As of the later snapshot (a gauge, not a rate).
    pub mem: MemInfo,
    /// Percent of the interval during which some task stalled on I/O (Δsome.total µs / Δt).
    pub psi_some_pct: Option<f64>,
}

/// The figures of the interval from `prev` to `cur` (Δt from their `at_ns`). A device in only
/// one of the two appeared or vanished during the interval and is left out of it; with
/// Δt = 0 every rate is 0.
pub fn derive(prev: &Snapshot, cur: &Snapshot) -> Derived {
    let secs = cur.at_ns.saturating_sub(prev.at_ns) as f64 / 1e9;
    let before: BTreeMap<&str, &DiskCounters> =
        prev.disks.iter().map(|d| (d.name.as_str(), d)).collect();
    let disks = cur
        .disks
        .iter()
        .filter_map(|c| {
            let p = before.get(c.name.as_str())?;
            Some((c.name.clone(), DiskRates::between(p, c, secs)))
        })
        .collect();
    let psi_some_pct = match (&prev.psi, &cur.psi) {
        (Some(p), Some(c)) if secs > 0.0 => {
            Some(counter_delta(p.some_total_us, c.some_total_us) as f64 / (secs * 1e6) * 100.0)
        }
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    Derived {
        disks,
        cpu: CpuRates::between(&prev.cpu, &cur.cpu),
        mem: cur.mem.clone(),
        psi_some_pct,
    }
}

/// `cur - prev` for a kernel counter. When `cur < prev` the counter either wrapped or was
/// reset: if `prev` still fits in 32 bits it is taken for a 32-bit counter that wrapped
/// (the diskstats time columns are printed `%u`, and 32-bit kernels keep `unsigned long`
/// counts), so the delta is `cur + 2^32 - prev`; otherwise a 64-bit counter cannot have
/// wrapped within an interval, the device was reset (or replaced under the same name) and
/// the delta is `cur`, counted from zero.
pub fn counter_delta(prev: u64, cur: u64) -> u64 {
    if cur >= prev {
        cur - prev
    } else if prev < 1 << 32 {
        cur + (1 << 32) - prev
    } else {
        cur
    }
}

#[cfg(test)]
mod tests;
