//! Targets: files and block devices, opened the way a job needs them.
//!
//! Safety rules (DESIGN principle 7): iogauge creates files itself (and marks them), writes to
//! a file only if it created it or the user handed it over with `--allow-overwrite`, and
//! writes to a block device only when handed over and the device carries no signature that
//! libblkid knows (filesystem, RAID, crypto, partition table; see `signature`) and is not
//! mounted. A file iogauge is creating is removed again if anything fails before it is
//! complete (ENOSPC, Ctrl-C, an I/O error).

mod error;
mod fill;
mod signature;
use error::io_err;
pub use error::TargetError;
use fill::{fill, no_space_or, preallocate};

use crate::marker;
pub use iogauge_model::target::{TargetInfo, TargetKind};
use iogauge_probe::{backing_device, fs_of, FsInfo};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// What the user asked for one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetSpec {
    pub path: PathBuf,
    /// Bytes to test (and to create when missing); `None` = the whole existing file/device.
    pub size: Option<u64>,
}

/// How the job will use its targets.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub direct: bool,
    pub write: bool,
    /// The user handed existing files / devices over for writing.
    pub allow_overwrite: bool,
}

pub struct Target {
    pub info: TargetInfo,
    pub file: File,
}

/// Removes a file being created unless `keep` is called: a failed or interrupted creation
/// leaves nothing behind.
struct Creating<'a> {
    path: &'a Path,
    armed: bool,
}

impl Creating<'_> {
    fn keep(mut self) {
        self.armed = false;
    }
}

impl Drop for Creating<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(self.path);
            marker::remove_sidecar(self.path);
        }
    }
}

/// Opens (creating and pre-filling when missing) one target.
/// `progress(done, total)` is called during pre-fill; `stop` aborts it.
pub fn prepare(
    spec: &TargetSpec,
    access: Access,
    progress: &mut dyn FnMut(u64, u64),
    stop: &AtomicBool,
) -> Result<Target, TargetError> {
    let path = spec.path.as_path();
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => create(spec, access, progress, stop),
        Err(e) => Err(io_err(path, "stat")(e)),
        Ok(m) if m.file_type().is_block_device() => open_device(spec, access),
        Ok(m) if m.is_file() => open_file(spec, access, m.len(), progress, stop),
        Ok(_) => Err(TargetError::NotFileOrDevice { path: path.into() }),
    }
}

/// The bytes `spec` will have once prepared, found without creating or changing anything:
/// `--size` for a file still to be made, an existing file's size (or `--size` over it), a
/// device's size (or `--size` within it). `None` where it cannot be known yet (a missing
/// file without `--size`, a path that cannot be read): [`prepare`] then says why.
pub fn planned_size(spec: &TargetSpec) -> Option<u64> {
    let path = spec.path.as_path();
    match std::fs::metadata(path) {
        Err(_) => spec.size,
        Ok(m) if m.file_type().is_block_device() => {
            let len = File::open(path).and_then(|f| device_size(&f)).ok()?;
            Some(spec.size.unwrap_or(len).min(len))
        }
        Ok(m) if m.is_file() => Some(spec.size.unwrap_or(m.len())),
        Ok(_) => None,
    }
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn check_fs(path: &Path, fs: &FsInfo, direct: bool) -> Result<(), TargetError> {
    // Before any open: even a read of some of these has effects, and a write changes the
    // kernel's settings.
    if fs.is_kernel_interface() {
        return Err(TargetError::KernelFs {
            path: path.into(),
            fs: fs.name.clone(),
        });
    }
    if direct && fs.is_memory() {
        return Err(TargetError::MemoryFs {
            path: path.into(),
            fs: fs.name.clone(),
        });
    }
    Ok(())
}

fn open_with(path: &Path, write: bool, direct: bool, fs: &FsInfo) -> Result<File, TargetError> {
    open_flags(path, write, direct, 0, fs)
}

/// Opens `path`; `extra` adds open(2) flags (O_EXCL on a block device makes the kernel refuse
/// a device that is mounted or held by md/dm/a partition, with EBUSY).
fn open_flags(
    path: &Path,
    write: bool,
    direct: bool,
    extra: i32,
    fs: &FsInfo,
) -> Result<File, TargetError> {
    let mut o = OpenOptions::new();
    o.read(true).write(write);
    o.custom_flags(extra | if direct { libc::O_DIRECT } else { 0 });
    o.open(path).map_err(|e| {
        if extra & libc::O_EXCL != 0 && e.raw_os_error() == Some(libc::EBUSY) {
            TargetError::InUse { path: path.into() }
        } else if direct && e.raw_os_error() == Some(libc::EINVAL) {
            TargetError::NoDirect {
                path: path.into(),
                fs: fs.name.clone(),
            }
        } else {
            io_err(
                path,
                if write {
                    "open for writing"
                } else {
                    "open for reading"
                },
            )(e)
        }
    })
}

fn create(
    spec: &TargetSpec,
    access: Access,
    progress: &mut dyn FnMut(u64, u64),
    stop: &AtomicBool,
) -> Result<Target, TargetError> {
    let path = spec.path.as_path();
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Err(TargetError::MissingDir {
            path: path.into(),
            dir,
        });
    }
    let size = spec
        .size
        .ok_or_else(|| TargetError::NeedSize { path: path.into() })?;
    if size == 0 || !size.is_multiple_of(4096) {
        return Err(TargetError::Unaligned {
            path: path.into(),
            size,
        });
    }
    let fs = fs_of(&dir).map_err(io_err(path, "statfs"))?;
    check_fs(path, &fs, access.direct)?;

    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path)
        .map_err(|e| create_err(e, path, &dir, &fs, size))?;
    let guard = Creating { path, armed: true };
    marker::set(&file, path, 0).map_err(io_err(path, "mark as iogauge's"))?;
    preallocate(&file, size).map_err(|e| no_space_or(e, path, size, "preallocate"))?;
    drop(file);
    let file = open_with(path, true, access.direct, &fs)?;
    fill(&file, path, 0, size, progress, stop)?;
    marker::set(&file, path, size).map_err(io_err(path, "mark as iogauge's"))?;
    guard.keep();
    let file = if access.write {
        file
    } else {
        open_with(path, false, access.direct, &fs)?
    };
    Ok(Target {
        info: file_info(path, &file, &fs, size, true, true, access),
        file,
    })
}

/// Why a file could not be created. Where the OS says one cannot be made there at all
/// (`/proc/x`: ENOENT in an existing directory; a name too long; a filesystem without
/// regular files) the command line asked for the impossible: a usage error. Permission,
/// space and I/O errors keep their own kinds.
fn create_err(e: io::Error, path: &Path, dir: &Path, fs: &FsInfo, size: u64) -> TargetError {
    match e.raw_os_error() {
        Some(
            libc::ENOENT
            | libc::ENOTDIR
            | libc::EISDIR
            | libc::EINVAL
            | libc::ENAMETOOLONG
            | libc::EOPNOTSUPP
            | libc::ELOOP,
        ) => TargetError::CannotCreate {
            path: path.into(),
            dir: dir.into(),
            fs: fs.name.clone(),
            err: e,
        },
        _ => no_space_or(e, path, size, "create"),
    }
}

fn open_file(
    spec: &TargetSpec,
    access: Access,
    len: u64,
    progress: &mut dyn FnMut(u64, u64),
    stop: &AtomicBool,
) -> Result<Target, TargetError> {
    let path = spec.path.as_path();
    let fs = fs_of(path).map_err(io_err(path, "statfs"))?;
    check_fs(path, &fs, access.direct)?;
    let probe = File::open(path).map_err(io_err(path, "open for reading"))?;
    let filled = marker::get(&probe, path);
    drop(probe);
    let size = spec.size.unwrap_or(len);
    match filled {
        // Ours, but smaller than asked or not completely filled (a killed run): finish the fill.
        Some(filled) if filled < size => {
            if !size.is_multiple_of(4096) {
                return Err(TargetError::Unaligned {
                    path: path.into(),
                    size,
                });
            }
            let file = open_with(path, true, access.direct, &fs)?;
            if size > len {
                preallocate(&file, size).map_err(|e| no_space_or(e, path, size, "extend"))?;
            }
            fill(
                &file,
                path,
                filled.min(len) / 4096 * 4096,
                size,
                progress,
                stop,
            )?;
            marker::set(&file, path, size).map_err(io_err(path, "mark as iogauge's"))?;
        }
        Some(_) => {}
        None if size > len => {
            return Err(TargetError::TooSmall {
                path: path.into(),
                have: len,
                want: size,
            });
        }
        None if access.write && !access.allow_overwrite => {
            return Err(TargetError::NotOwned { path: path.into() });
        }
        None => {}
    }
    let file = open_with(path, access.write, access.direct, &fs)?;
    Ok(Target {
        info: file_info(path, &file, &fs, size, false, filled.is_some(), access),
        file,
    })
}

fn file_info(
    path: &Path,
    file: &File,
    fs: &FsInfo,
    size: u64,
    created: bool,
    owned: bool,
    a: Access,
) -> TargetInfo {
    let device = file.metadata().ok().and_then(|m| backing_device(m.dev()));
    TargetInfo {
        path: path.into(),
        kind: TargetKind::File,
        fs: Some(fs.name.clone()),
        device,
        size,
        created,
        owned,
        direct: a.direct,
        writable: a.write,
    }
}

fn open_device(spec: &TargetSpec, access: Access) -> Result<Target, TargetError> {
    let path = spec.path.as_path();
    let ro = File::open(path).map_err(io_err(path, "open for reading"))?;
    let len = device_size(&ro).map_err(io_err(path, "read the device size"))?;
    if access.write && !access.allow_overwrite {
        return Err(TargetError::DeviceNotHandedOver { path: path.into() });
    }
    let size = spec.size.unwrap_or(len);
    if size > len {
        return Err(TargetError::TooSmall {
            path: path.into(),
            have: len,
            want: size,
        });
    }
    let fs = FsInfo::from_magic(0);
    let excl = if access.write { libc::O_EXCL } else { 0 };
    let file = open_flags(path, access.write, access.direct, excl, &fs)?;
    if access.write {
        // Probed while the O_EXCL open holds the device, so nothing can mount or assemble
        // it between the check and the writes; through the buffered read-only fd, since
        // libblkid's reads are not O_DIRECT-aligned. Nothing has been written yet.
        check_unused(path, &ro)?;
    }
    drop(ro);
    // The kernel's name (`loop1`, `dm-0`), what /proc/diskstats calls it: through symlinks
    // such as /dev/disk/by-id/… or /dev/mapper/….
    let device = std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.into())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    Ok(Target {
        info: TargetInfo {
            path: path.into(),
            kind: TargetKind::Block,
            fs: None,
            device,
            size,
            created: false,
            owned: false,
            direct: access.direct,
            writable: access.write,
        },
        file,
    })
}

fn device_size(f: &File) -> io::Result<u64> {
    let mut size: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t) from linux/fs.h.
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: the fd is open for the call's duration and `size` is a writable u64, which is
    // what BLKGETSIZE64 stores into.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Refuses a device that carries any signature libblkid knows, naming all it found.
fn check_unused(path: &Path, ro: &File) -> Result<(), TargetError> {
    let found = signature::probe(ro).map_err(io_err(path, "probe for signatures"))?;
    if found.is_empty() {
        return Ok(());
    }
    Err(TargetError::Signature {
        path: path.into(),
        what: signature::summary(&found),
    })
}
