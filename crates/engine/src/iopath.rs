//! The I/O path of a job, chosen in one place before any worker starts: which memory the
//! buffers are on (see [`crate::pool`]), whether io_uring gets them and the targets as
//! registered (fixed) buffers and files, and which ring setup flags it runs with. What was
//! chosen, and why when it differs from what was asked, is recorded with every result
//! (`iogauge_model::iopath::IoPath`).
//!
//! The defaults were chosen by measurement (`bench/vs-fio --variants`, figures in
//! bench/README.md): registered buffers on huge-page memory, plain buffers on 4 KiB pages (where
//! registering cost IOPS at 8k–16k), registered files always, SINGLE_ISSUER + COOP_TASKRUN.

use crate::error::EngineError;
use iogauge_model::iopath::{FixedBufs, MemMode, PoolInfo, RingSetup};
use iogauge_model::spec::{EngineKind, JobSpec};

/// Sets `r`'s flags on a ring builder.
pub(crate) fn apply(r: RingSetup, b: &mut io_uring::Builder) {
    match r {
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

/// The first flag set of `setup` this kernel accepts, found by building a small ring.
pub fn resolve(setup: RingSetup) -> Result<RingSetup, EngineError> {
    let mut last = None;
    for &r in setup.attempts() {
        let mut b = io_uring::IoUring::builder();
        apply(r, &mut b);
        match b.build(2) {
            Ok(_) => return Ok(r),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(EngineError::UringUnavailable(e)),
        }
    }
    let e = last.unwrap_or_else(|| std::io::Error::other("no ring"));
    if setup == RingSetup::Auto {
        return Err(EngineError::UringUnavailable(e));
    }
    Err(EngineError::Unsupported(format!(
        "--ring-setup {setup}: this kernel refuses IORING_SETUP_{} ({e}); use --ring-setup auto",
        setup.flags()
    )))
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
    use iogauge_model::iopath::HugeSource;

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
        let mut spec = JobSpec::new(iogauge_model::spec::RwMode::RandRead);
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
    fn ring_setups_resolve_on_this_kernel() {
        // Kernel 6.18 here: auto is SINGLE_ISSUER|COOP_TASKRUN, and defer is accepted.
        assert_eq!(resolve(RingSetup::Auto).unwrap(), RingSetup::Single);
        assert_eq!(resolve(RingSetup::Defer).unwrap(), RingSetup::Defer);
    }
}
