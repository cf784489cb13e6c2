//! Making a file's blocks real: preallocation, and the pre-fill with incompressible data in
//! large sequential direct writes (so reads hit allocated, non-zero blocks and writes are
//! in place), removed again by the caller when it fails.

use super::error::{io_err, TargetError};
use crate::pool::BufPool;
use iogauge_model::iopath::MemMode;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Pre-fill chunk: large sequential writes.
const FILL_CHUNK: usize = 4 << 20;

pub(super) fn preallocate(file: &File, size: u64) -> io::Result<()> {
    // SAFETY: plain syscall on an fd we own for the duration of the call.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size as libc::off_t) };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        // Filesystems without fallocate: the fill allocates as it writes.
        Some(libc::EOPNOTSUPP) => file.set_len(size),
        _ => Err(e),
    }
}

pub(super) fn no_space_or(e: io::Error, path: &Path, size: u64, op: &'static str) -> TargetError {
    if e.raw_os_error() == Some(libc::ENOSPC) || e.raw_os_error() == Some(libc::EDQUOT) {
        TargetError::NoSpace {
            path: path.into(),
            size,
        }
    } else {
        io_err(path, op)(e)
    }
}

/// Writes incompressible data over `[from, to)` in large sequential writes, then syncs.
pub(super) fn fill(
    file: &File,
    path: &Path,
    from: u64,
    to: u64,
    progress: &mut dyn FnMut(u64, u64),
    stop: &AtomicBool,
) -> Result<(), TargetError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(from ^ to ^ 0x5eed);
    // On huge pages like every I/O buffer: a 4 MiB write is two segments, not 1,024.
    let pool = BufPool::new(1, FILL_CHUNK, MemMode::Hugepage)
        .map_err(io_err(path, "allocate the pre-fill buffer"))?;
    // SAFETY: the pool's one buffer is FILL_CHUNK bytes, used only here.
    let buf = unsafe { std::slice::from_raw_parts_mut(pool.ptr(0), FILL_CHUNK) };
    let mut off = from;
    while off < to {
        if stop.load(Ordering::Relaxed) {
            return Err(TargetError::Interrupted { path: path.into() });
        }
        let n = (to - off).min(FILL_CHUNK as u64) as usize;
        rand_core::RngCore::fill_bytes(&mut rng, buf);
        file.write_all_at(&buf[..n], off)
            .map_err(|e| no_space_or(e, path, to, "pre-fill"))?;
        off += n as u64;
        progress(off - from, to - from);
    }
    file.sync_data()
        .map_err(|e| no_space_or(e, path, to, "sync"))?;
    Ok(())
}
