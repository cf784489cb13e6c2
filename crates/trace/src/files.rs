//! One process's writes and syncs of one file, timed from the syscall tracepoints
//! (`bpf/files.bpf.c`): how long MariaDB's redo log writes and fdatasyncs take, the waits its
//! commits make, where the server itself does not time them.

use crate::error::{one_line, Unavailable};

/// The programs' object, compiled by build.rs; empty when iogauge was built without clang.
static OBJECT_FILES: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/files.bpf.o"));
use aya::maps::PerCpuArray;
use aya::programs::TracePoint;
use aya::{Ebpf, EbpfLoader};

/// `struct totals`: calls, their summed time, and the failed ones.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Totals {
    calls: u64,
    ns: u64,
    failed: u64,
}

// SAFETY: `repr(C)`, three u64 fields, no padding: every bit pattern is a valid value.
unsafe impl aya::Pod for Totals {}

/// The programs and the syscall tracepoint each one is attached to.
const PROGRAMS: [(&str, &str); 6] = [
    ("enter_pwrite", "sys_enter_pwrite64"),
    ("exit_pwrite", "sys_exit_pwrite64"),
    ("enter_fdatasync", "sys_enter_fdatasync"),
    ("exit_fdatasync", "sys_exit_fdatasync"),
    ("enter_fsync", "sys_enter_fsync"),
    ("exit_fsync", "sys_exit_fsync"),
];

/// Cumulative writes and syncs since the probe was attached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileIo {
    pub writes: u64,
    pub write_ns: u64,
    pub syncs: u64,
    pub sync_ns: u64,
}

/// Mounts tracefs at /sys/kernel/tracing when neither it nor /sys/kernel/debug/tracing holds
/// it, as bpftrace does: a syscall tracepoint is attached through it (aya looks once per
/// process), and a machine without systemd has it unmounted. Left mounted afterwards, as
/// bpftrace leaves it. (The block-layer programs attach by BTF and need no tracefs.)
fn ensure_tracefs() -> Result<(), Unavailable> {
    let mounted = |p: &str| std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_some());
    if mounted("/sys/kernel/tracing") || mounted("/sys/kernel/debug/tracing") {
        return Ok(());
    }
    // SAFETY: every pointer is a NUL-terminated literal or null (no data for tracefs).
    let r = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            c"/sys/kernel/tracing".as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(Unavailable::Tracefs(
            std::io::Error::last_os_error().to_string(),
        ))
    }
}

/// The attached programs; dropped = detached.
pub struct FileProbe {
    ebpf: Ebpf,
}

impl FileProbe {
    /// Times `pwrite64` and `fdatasync`/`fsync` on descriptor `fd` of process `tgid`.
    pub fn attach(tgid: u32, fd: u32) -> Result<FileProbe, Unavailable> {
        if OBJECT_FILES.is_empty() {
            return Err(Unavailable::NoClang);
        }
        ensure_tracefs()?;
        let mut ebpf = EbpfLoader::new()
            .set_global("file_tgid", &tgid, true)
            .set_global("file_fd", &fd, true)
            .load(OBJECT_FILES)
            .map_err(|e| Unavailable::Load(one_line(&e)))?;
        for (name, tp) in PROGRAMS {
            let prog: &mut TracePoint = ebpf
                .program_mut(name)
                .ok_or_else(|| Unavailable::Load(format!("no program {name} in the object")))?
                .try_into()
                .map_err(|e| Unavailable::Load(one_line(&e)))?;
            prog.load()
                .map_err(|e| Unavailable::Load(format!("{name}: {}", one_line(&e))))?;
            prog.attach("syscalls", tp)
                .map_err(|e| Unavailable::Attach(tp, one_line(&e)))?;
        }
        Ok(FileProbe { ebpf })
    }

    /// The writes and syncs so far (zero when the map cannot be read).
    pub fn read(&self) -> FileIo {
        let Some(map) = self.ebpf.map("file_totals") else {
            return FileIo::default();
        };
        let Ok(totals) = PerCpuArray::<_, Totals>::try_from(map) else {
            return FileIo::default();
        };
        let sum = |kind: u32| {
            totals.get(&kind, 0).map_or((0, 0), |per_cpu| {
                per_cpu
                    .iter()
                    .fold((0, 0), |(c, n), t| (c + t.calls, n + t.ns))
            })
        };
        let ((writes, write_ns), (syncs, sync_ns)) = (sum(0), sum(1));
        FileIo {
            writes,
            write_ns,
            syncs,
            sync_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;

    /// This process's own writes and fdatasyncs of one file are timed; another file's are not.
    #[test]
    fn times_one_files_writes_and_syncs() {
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        assert_eq!(
            uid, 0,
            "this test loads BPF programs: run it as root (scripts/test does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(dir.path().join("log")).unwrap();
        let mut other = std::fs::File::create(dir.path().join("other")).unwrap();
        let probe = FileProbe::attach(std::process::id(), f.as_raw_fd() as u32).unwrap();
        for i in 0..20u64 {
            f.write_at(&[1u8; 4096], i * 4096).unwrap();
            f.sync_data().unwrap();
            other.write_all(&[2u8; 4096]).unwrap();
            other.sync_data().unwrap();
        }
        let io = probe.read();
        assert_eq!((io.writes, io.syncs), (20, 20), "{io:?}");
        assert!(io.write_ns > 0 && io.sync_ns > 0, "{io:?}");
    }
}
