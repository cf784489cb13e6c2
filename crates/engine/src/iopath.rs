//! The I/O path of a job, chosen in one place before any worker starts: which memory the
//! buffers are on (see [`crate::pool`]), whether io_uring gets them and the targets as
//! registered (fixed) buffers and files, and which ring setup flags it runs with. What was
//! chosen, and why when it differs from what was asked, is recorded with every result.
//!
//! The defaults were chosen by measurement (`bench/vs-fio --variants`, figures in the
//! README): registered buffers on huge-page memory, plain buffers on 4 KiB pages (where
//! registering cost IOPS at 8k–16k), registered files always, SINGLE_ISSUER + COOP_TASKRUN.

use crate::error::EngineError;
use crate::pool::{MemMode, PoolInfo};
use crate::spec::{EngineKind, JobSpec};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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
    fn attempts(self) -> &'static [RingSetup] {
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

    pub(crate) fn apply(self, b: &mut io_uring::Builder) {
        match self {
            RingSetup::Auto | RingSetup::Plain => {}
            RingSetup::Coop => {
                b.setup_coop_taskrun();
            }
            RingSetup::Single => {
                b.setup_single_issuer().setup_coop_taskrun();
            }
            RingSetup::Defer => {
                b.setup_single_issuer().setup_defer_taskrun();
            }
        }
    }

    /// The first flag set of `self` this kernel accepts, found by building a small ring.
    pub fn resolve(self) -> Result<RingSetup, EngineError> {
        let mut last = None;
        for &r in self.attempts() {
            let mut b = io_uring::IoUring::builder();
            r.apply(&mut b);
            match b.build(2) {
                Ok(_) => return Ok(r),
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
                Err(e) => return Err(EngineError::UringUnavailable(e)),
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::other("no ring"));
        if self == RingSetup::Auto {
            return Err(EngineError::UringUnavailable(e));
        }
        Err(EngineError::Unsupported(format!(
            "--ring-setup {self}: this kernel refuses IORING_SETUP_{} ({e}); use --ring-setup auto",
            self.flags()
        )))
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
                    crate::pool::HugeSource::Thp => "THP",
                    crate::pool::HugeSource::Hugetlbfs => "hugetlbfs",
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
            crate::spec::fmt_size(m.buffer_bytes)
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

/// Whether to register `pool_bytes` of buffers under `--fixed-bufs`: `Ok(false, note)` when
/// auto decides against it; an error when `on` cannot work.
pub(crate) fn fixed_bufs(
    spec: &JobSpec,
    pool: &PoolInfo,
) -> Result<(bool, Option<String>), EngineError> {
    if spec.engine != EngineKind::IoUring {
        return Ok((false, None));
    }
    let room = memlock_room();
    let fits = room.is_none_or(|r| pool.pool_bytes <= r);
    match spec.io.fixed_bufs {
        FixedBufs::Off => Ok((false, None)),
        FixedBufs::On if fits => Ok((true, None)),
        FixedBufs::On => Err(EngineError::Unsupported(format!(
            "--fixed-bufs on: registering {} MiB of buffers needs that much locked memory, and RLIMIT_MEMLOCK leaves {} KiB; raise it (ulimit -l) or use --fixed-bufs auto",
            pool.pool_bytes >> 20,
            room.unwrap_or(0) >> 10
        ))),
        // Measured: registering 4 KiB-page buffers costs IOPS at 8k–16k; on huge pages it
        // is as fast or faster.
        FixedBufs::Auto if pool.mem == MemMode::Page => Ok((false, None)),
        FixedBufs::Auto if fits => Ok((true, None)),
        FixedBufs::Auto => Ok((
            false,
            Some(format!(
                "buffers not registered: {} MiB exceed what RLIMIT_MEMLOCK leaves ({} KiB); raise it (ulimit -l) for registered buffers",
                pool.pool_bytes >> 20,
                room.unwrap_or(0) >> 10
            )),
        )),
    }
}

/// Bytes this process may still lock, or `None` when unlimited (RLIMIT_MEMLOCK infinite, or
/// CAP_IPC_LOCK, which io_uring checks before charging registered buffers).
fn memlock_room() -> Option<u64> {
    if has_cap_ipc_lock() {
        return None;
    }
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } != 0 {
        return Some(0);
    }
    if r.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    let locked = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| status_kb(&s, "VmLck:"))
        .unwrap_or(0);
    Some(r.rlim_cur.saturating_sub(locked * 1024))
}

fn has_cap_ipc_lock() -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps >> CAP_IPC_LOCK & 1 == 1)
}

/// A `Name:   123 kB` field of /proc/self/status.
fn status_kb(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::HugeSource;

    fn info(mem: MemMode) -> PoolInfo {
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
    fn auto_registers_huge_page_buffers_only() {
        let mut spec = JobSpec::new(crate::RwMode::RandRead);
        // Tests run as root (CAP_IPC_LOCK): memlock never limits here.
        assert_eq!(
            fixed_bufs(&spec, &info(MemMode::Hugepage)).unwrap(),
            (true, None)
        );
        assert_eq!(
            fixed_bufs(&spec, &info(MemMode::Page)).unwrap(),
            (false, None)
        );
        spec.io.fixed_bufs = FixedBufs::On;
        assert!(fixed_bufs(&spec, &info(MemMode::Page)).unwrap().0);
        spec.io.fixed_bufs = FixedBufs::Off;
        assert!(!fixed_bufs(&spec, &info(MemMode::Hugepage)).unwrap().0);
        spec.io.fixed_bufs = FixedBufs::On;
        spec.engine = EngineKind::Psync;
        assert!(!fixed_bufs(&spec, &info(MemMode::Hugepage)).unwrap().0);
    }

    #[test]
    fn status_fields() {
        let s = "Name:\tx\nVmLck:\t     128 kB\nCapEff:\t000001ffffffffff\n";
        assert_eq!(status_kb(s, "VmLck:"), Some(128));
        assert_eq!(status_kb(s, "VmPin:"), None);
    }

    #[test]
    fn ring_setups_parse_and_resolve() {
        for s in ["auto", "plain", "coop", "single", "defer"] {
            let r: RingSetup = s.parse().unwrap();
            assert_eq!(r.to_string(), s);
        }
        assert!("sqpoll".parse::<RingSetup>().is_err());
        // Kernel 6.18 here: auto is SINGLE_ISSUER|COOP_TASKRUN, and defer is accepted.
        assert_eq!(RingSetup::Auto.resolve().unwrap(), RingSetup::Single);
        assert_eq!(RingSetup::Defer.resolve().unwrap(), RingSetup::Defer);
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
