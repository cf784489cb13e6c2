//! The I/O path of a job as data: which memory its buffers are on (`--mem`), whether
//! io_uring gets them and the targets registered (`--fixed-bufs`), which ring setup flags
//! it runs with (`--ring-setup`) and how SQEs are submitted (`--submit-batch`); what was
//! asked (`IoPathOpts`, in the job's options) and what ran (`IoPath`, recorded with every
//! result). The engine decides and builds the path (`iogauge_engine::iopath`).

use iogauge_stats::units::fmt_size;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which backend issues the I/O: io_uring (the default) or psync threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EngineKind {
    #[serde(rename = "io_uring")]
    IoUring,
    #[serde(rename = "psync")]
    Psync,
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "io_uring" | "io-uring" | "uring" => Ok(EngineKind::IoUring),
            "psync" => Ok(EngineKind::Psync),
            _ => Err(format!("unknown engine '{s}': use io_uring or psync")),
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
        })
    }
}

/// Which memory backs the I/O buffers (`--mem`, fio's `mem=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemMode {
    /// 4 KiB pages: each buffer physically scattered page by page (fio's `mem=malloc`).
    Page,
    /// 2 MiB huge pages, no buffer straddling one (fio's `mem=mmaphuge`).
    #[default]
    Hugepage,
}

impl FromStr for MemMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "page" => Ok(MemMode::Page),
            "hugepage" | "huge" => Ok(MemMode::Hugepage),
            _ => Err(format!("unknown memory '{s}': use page or hugepage")),
        }
    }
}

impl fmt::Display for MemMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemMode::Page => "page",
            MemMode::Hugepage => "hugepage",
        })
    }
}

/// Where a pool's huge pages came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HugeSource {
    /// Transparent huge pages (anonymous memory).
    Thp,
    /// The hugetlbfs pool (`vm.nr_hugepages`).
    Hugetlbfs,
}

/// What memory a pool got: recorded with every result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolInfo {
    /// What backs the buffers: `hugepage` only when every buffer is on a huge page.
    pub mem: MemMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge: Option<HugeSource>,
    pub buffers: u32,
    pub buffer_bytes: u64,
    pub pool_bytes: u64,
    /// Bytes of the pool on huge pages, as the kernel reports them.
    pub huge_bytes: u64,
    /// Why the memory is not what `--mem` asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// `--fixed-bufs`: register the buffers with the ring (IORING_OP_READ_FIXED/WRITE_FIXED).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FixedBufs {
    /// Where measured faster: on huge-page memory, and only within RLIMIT_MEMLOCK.
    #[default]
    Auto,
    On,
    Off,
}

impl FromStr for FixedBufs {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(FixedBufs::Auto),
            "on" => Ok(FixedBufs::On),
            "off" => Ok(FixedBufs::Off),
            _ => Err(format!("unknown value '{s}': use auto, on or off")),
        }
    }
}

impl fmt::Display for FixedBufs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FixedBufs::Auto => "auto",
            FixedBufs::On => "on",
            FixedBufs::Off => "off",
        })
    }
}

/// `--ring-setup`: the io_uring setup flags of every worker's ring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RingSetup {
    /// The measured best the kernel accepts: `single`, else `coop`, else `plain`.
    #[default]
    Auto,
    /// No flags: completions run as task work with an IPI (before 5.19).
    Plain,
    /// IORING_SETUP_COOP_TASKRUN (5.19+): no IPI per completion.
    Coop,
    /// SINGLE_ISSUER + COOP_TASKRUN (6.0+).
    Single,
    /// SINGLE_ISSUER + DEFER_TASKRUN (6.1+): completions' task work runs only when the
    /// worker waits.
    Defer,
}

impl RingSetup {
    /// The flag sets to try, in order, and the name of each.
    pub fn attempts(self) -> &'static [RingSetup] {
        match self {
            RingSetup::Auto => &[RingSetup::Single, RingSetup::Coop, RingSetup::Plain],
            RingSetup::Plain => &[RingSetup::Plain],
            RingSetup::Coop => &[RingSetup::Coop],
            RingSetup::Single => &[RingSetup::Single],
            RingSetup::Defer => &[RingSetup::Defer],
        }
    }

    /// The kernel's names of the flags.
    pub fn flags(self) -> &'static str {
        match self {
            RingSetup::Auto => "auto",
            RingSetup::Plain => "none",
            RingSetup::Coop => "COOP_TASKRUN",
            RingSetup::Single => "SINGLE_ISSUER|COOP_TASKRUN",
            RingSetup::Defer => "SINGLE_ISSUER|DEFER_TASKRUN",
        }
    }
}

impl FromStr for RingSetup {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(RingSetup::Auto),
            "plain" => Ok(RingSetup::Plain),
            "coop" => Ok(RingSetup::Coop),
            "single" => Ok(RingSetup::Single),
            "defer" => Ok(RingSetup::Defer),
            _ => Err(format!(
                "unknown ring setup '{s}': use auto, plain, coop, single or defer"
            )),
        }
    }
}

impl fmt::Display for RingSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RingSetup::Auto => "auto",
            RingSetup::Plain => "plain",
            RingSetup::Coop => "coop",
            RingSetup::Single => "single",
            RingSetup::Defer => "defer",
        })
    }
}

/// How a job should run its I/O (`--mem`, `--fixed-bufs`, `--ring-setup`,
/// `--submit-batch`): what was asked, flattened into the job's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoPathOpts {
    #[serde(default)]
    pub mem: MemMode,
    #[serde(default)]
    pub fixed_bufs: FixedBufs,
    #[serde(default)]
    pub ring_setup: RingSetup,
    /// SQEs per submission (fio's `iodepth_batch_submit`); 0 = all queued with the wait.
    #[serde(default = "one")]
    pub submit_batch: u32,
}

fn one() -> u32 {
    1
}

impl Default for IoPathOpts {
    fn default() -> Self {
        IoPathOpts {
            mem: MemMode::default(),
            fixed_bufs: FixedBufs::default(),
            ring_setup: RingSetup::default(),
            // Measured (bench/vs-fio --variants): on a virtio disk with mq-deadline, batches
            // submitted together are plugged and dispatched at once, and cost 11-17% IOPS
            // at QD 32 against submitting every SQE as it is queued (what fio does too).
            submit_batch: 1,
        }
    }
}

/// What a job ran on: recorded in the result's `options.io_path`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoPath {
    pub engine: EngineKind,
    #[serde(flatten)]
    pub memory: PoolInfo,
    /// Buffers registered with the ring (READ_FIXED/WRITE_FIXED).
    pub fixed_bufs: bool,
    /// Targets registered with the ring (IOSQE_FIXED_FILE).
    pub fixed_files: bool,
    /// io_uring setup flags, as the kernel names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring: Option<String>,
    /// io_uring: SQEs per submission (0: all with the wait).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_batch: Option<u32>,
    /// Why buffers are not registered although `--fixed-bufs auto` would have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_bufs_note: Option<String>,
}

impl IoPath {
    /// One line for the text summary: `io_uring, 32 × 8k buffers on 2 MiB huge pages (THP),
    /// registered buffers and files, ring SINGLE_ISSUER|COOP_TASKRUN`.
    pub fn line(&self) -> String {
        let m = &self.memory;
        let mem = match (m.mem, m.huge) {
            (MemMode::Hugepage, Some(src)) => format!(
                "on 2 MiB huge pages ({})",
                match src {
                    HugeSource::Thp => "THP",
                    HugeSource::Hugetlbfs => "hugetlbfs",
                }
            ),
            (MemMode::Hugepage, None) => "on 2 MiB huge pages".into(),
            (MemMode::Page, _) if m.huge_bytes > 0 => format!(
                "on 4 KiB pages ({} of {} MiB huge)",
                m.huge_bytes >> 20,
                m.pool_bytes >> 20
            ),
            (MemMode::Page, _) => "on 4 KiB pages".into(),
        };
        let mut s = format!(
            "{}, {} × {} buffers {mem}",
            self.engine,
            m.buffers,
            fmt_size(m.buffer_bytes)
        );
        if self.engine == EngineKind::IoUring {
            s += match (self.fixed_bufs, self.fixed_files) {
                (true, true) => ", registered buffers and files",
                (true, false) => ", registered buffers",
                (false, true) => ", registered files",
                (false, false) => "",
            };
            if let Some(r) = &self.ring {
                s += &format!(", ring {r}");
            }
            match self.submit_batch {
                Some(1) => s += ", each I/O submitted at once",
                Some(0) => s += ", I/Os submitted in batches",
                Some(n) => s += &format!(", I/Os submitted {n} at a time"),
                None => {}
            }
        }
        s
    }

    /// Warnings a result should carry: memory or registration not as asked.
    pub fn warnings(&self) -> Vec<String> {
        let mut w: Vec<String> = self.memory.fallback.iter().cloned().collect();
        w.extend(self.fixed_bufs_note.iter().cloned());
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn info(mem: MemMode) -> PoolInfo {
        PoolInfo {
            mem,
            huge: (mem == MemMode::Hugepage).then_some(HugeSource::Thp),
            buffers: 32,
            buffer_bytes: 8192,
            pool_bytes: 2 << 20,
            huge_bytes: if mem == MemMode::Hugepage { 2 << 20 } else { 0 },
            fallback: None,
        }
    }

    #[test]
    fn ring_setups_parse_and_show() {
        for s in ["auto", "plain", "coop", "single", "defer"] {
            let r: RingSetup = s.parse().unwrap();
            assert_eq!(r.to_string(), s);
        }
        assert!("sqpoll".parse::<RingSetup>().is_err());
    }

    #[test]
    fn the_summary_line_says_memory_and_path() {
        let p = IoPath {
            engine: EngineKind::IoUring,
            memory: info(MemMode::Hugepage),
            fixed_bufs: true,
            fixed_files: true,
            ring: Some("SINGLE_ISSUER|COOP_TASKRUN".into()),
            submit_batch: Some(1),
            fixed_bufs_note: None,
        };
        assert_eq!(
            p.line(),
            "io_uring, 32 × 8k buffers on 2 MiB huge pages (THP), registered buffers and files, ring SINGLE_ISSUER|COOP_TASKRUN, each I/O submitted at once"
        );
        let q = IoPath {
            engine: EngineKind::Psync,
            memory: info(MemMode::Page),
            fixed_bufs: false,
            fixed_files: false,
            ring: None,
            submit_batch: None,
            fixed_bufs_note: None,
        };
        assert_eq!(q.line(), "psync, 32 × 8k buffers on 4 KiB pages");
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["mem"], "hugepage");
        assert_eq!(json["huge"], "thp");
        assert_eq!(json["fixed_bufs"], true);
    }
}
