//! Why a target cannot be used, each naming the path and the way out; and the mapping of an
//! OS error on a target to one of them.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("target {path}: directory {dir} does not exist; create it or choose another --target")]
    MissingDir { path: PathBuf, dir: PathBuf },
    #[error("target {path} does not exist; pass --size to create it")]
    NeedSize { path: PathBuf },
    #[error("target {path} is {have} bytes, smaller than --size {want}; use a smaller --size or a new path")]
    TooSmall { path: PathBuf, have: u64, want: u64 },
    #[error(
        "target {path}: no permission to {what}; run as a user who may, or choose another --target"
    )]
    Permission { path: PathBuf, what: &'static str },
    #[error("target {path}: {fs} keeps data in memory, so O_DIRECT I/O would measure RAM, not storage; use a disk-backed path, or --buffered to measure the page cache on purpose")]
    MemoryFs { path: PathBuf, fs: String },
    #[error("target {path}: {fs} is the kernel's interface, not storage: its files are settings and counters, and iogauge neither writes nor measures them; choose a file or device on the storage under test")]
    KernelFs { path: PathBuf, fs: String },
    #[error("target {path}: {fs} does not support O_DIRECT; use a disk-backed path or --buffered")]
    NoDirect { path: PathBuf, fs: String },
    #[error("target {path}: no space left on the device while creating {size} bytes (the partial file was removed); free space or pass a smaller --size")]
    NoSpace { path: PathBuf, size: u64 },
    #[error("target {path}: iogauge did not create this file, so it will not write to it; use a new path (iogauge creates it), or pass --allow-overwrite to hand it over (its contents will be destroyed)")]
    NotOwned { path: PathBuf },
    #[error("target {path}: iogauge writes to a block device only when it is handed over with --allow-overwrite (everything on it will be destroyed)")]
    DeviceNotHandedOver { path: PathBuf },
    #[error("target {path}: it carries {what} (found by libblkid); iogauge writes only to devices without a signature: wipe it first (wipefs -a {path}) if its data is no longer wanted, or pick another device")]
    Signature { path: PathBuf, what: String },
    #[error("target {path} is mounted or held by another device; iogauge will not write to it")]
    InUse { path: PathBuf },
    #[error(
        "target {path} is neither a regular file nor a block device; pass a file path or /dev/…"
    )]
    NotFileOrDevice { path: PathBuf },
    #[error("target {path}: --size must be a multiple of 4 KiB to create a file for O_DIRECT (got {size})")]
    Unaligned { path: PathBuf, size: u64 },
    #[error("target {path}: cannot create a file in {dir} ({fs} filesystem): {err}; choose a path on a filesystem that stores files")]
    CannotCreate {
        path: PathBuf,
        dir: PathBuf,
        fs: String,
        err: io::Error,
    },
    #[error("interrupted while pre-filling {path}; the partial file was removed")]
    Interrupted { path: PathBuf },
    /// The OS error is part of the message, not a `source`: anyhow's `{:#}` would print it
    /// twice ("create: No such file…: No such file…").
    #[error("target {path}: {op}: {err}")]
    Io {
        path: PathBuf,
        op: &'static str,
        err: io::Error,
    },
}

impl TargetError {
    /// True when the command line asked for something impossible as written (exit code 2);
    /// false for failures of the system while doing it (exit code 1).
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            TargetError::Permission { .. }
                | TargetError::NoSpace { .. }
                | TargetError::Interrupted { .. }
                | TargetError::Io { .. }
        )
    }
}

pub(super) fn io_err<'a>(
    path: &'a Path,
    op: &'static str,
) -> impl FnOnce(io::Error) -> TargetError + 'a {
    move |source| match source.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => TargetError::Permission {
            path: path.to_path_buf(),
            what: op,
        },
        _ => TargetError::Io {
            path: path.to_path_buf(),
            op,
            err: source,
        },
    }
}
