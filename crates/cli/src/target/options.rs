//! The target flags checked as a whole: the target specs (the scratch file when none is
//! given; never one file or device twice), the layout over them and the I/O path. Every
//! error names the flag and the way out.

use super::args::TargetArgs;
use crate::usage::{usage, UsageError};
use iogauge_engine::{Access, TargetSpec};
use iogauge_model::spec::{IoSetup, LayoutOpts, DEFAULT_SEED};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Where `iogauge run` works when no --target is given, and the size it creates there.
pub const SCRATCH_DIR: &str = "iogauge-scratch";
pub const SCRATCH_SIZE: u64 = 1 << 30;

/// The targets of a command, checked: what each is, how they are accessed, and whether they
/// are the default scratch file (whose directory may then be created).
#[derive(Debug)]
pub struct Targets {
    pub specs: Vec<TargetSpec>,
    pub access: Access,
    pub scratch: bool,
}

impl Targets {
    /// `--target`, `--size` and `--allow-overwrite`, for I/O that is `direct` and may `write`.
    pub fn from_args(io: TargetArgs, direct: bool, write: bool) -> Result<Targets, UsageError> {
        let (specs, scratch) = target_specs(io.targets, io.size)?;
        Ok(Targets {
            specs,
            access: Access {
                direct,
                write,
                allow_overwrite: io.allow_overwrite,
            },
            scratch,
        })
    }
}

/// The targets of a command: the scratch file when none is given (then `true`).
fn target_specs(
    targets: Vec<PathBuf>,
    size: Option<u64>,
) -> Result<(Vec<TargetSpec>, bool), UsageError> {
    if targets.is_empty() {
        let dir = Path::new(SCRATCH_DIR);
        if std::fs::symlink_metadata(dir).is_ok() && !dir.is_dir() {
            return usage(format!(
                "./{SCRATCH_DIR} exists and is not a directory; without --target iogauge keeps its scratch file in that directory: move it away, or pass --target PATH"
            ));
        }
        let path = PathBuf::from(SCRATCH_DIR).join("data");
        return Ok((
            vec![TargetSpec {
                path,
                size: Some(size.unwrap_or(SCRATCH_SIZE)),
            }],
            true,
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for t in &targets {
        if t.as_os_str().is_empty() {
            return usage("--target is empty; pass a file or device path");
        }
        if !seen.insert(t) {
            return usage(format!("--target {} is given twice", t.display()));
        }
    }
    check_distinct(&targets)?;
    Ok((
        targets
            .into_iter()
            .map(|path| TargetSpec { path, size })
            .collect(),
        false,
    ))
}

/// What a target path names on this machine: a block device by its device number, a file by
/// its inode, a file still to be created by its directory's inode and its name. Paths are
/// compared by these, not as text, so a symlink, a hard link or `./x` beside `/abs/x` is
/// seen to be the same target.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Identity {
    Device(u64),
    File(u64, u64),
    New(u64, u64, std::ffi::OsString),
}

/// `hops` counts symlinks followed by hand (the kernel's own limit is 40).
fn identity(path: &Path, hops: u32) -> Option<Identity> {
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => Some(Identity::Device(m.rdev())),
        Ok(m) => Some(Identity::File(m.dev(), m.ino())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            // A link to a file not made yet names that file: follow it to where it points.
            if let Ok(to) = std::fs::read_link(path) {
                return (hops < 40).then(|| identity(&dir.join(to), hops + 1))?;
            }
            let name = path.file_name()?;
            let m = std::fs::metadata(dir).ok()?;
            Some(Identity::New(m.dev(), m.ino(), name.to_os_string()))
        }
        // Preparing the target reports this one with its own message.
        Err(_) => None,
    }
}

/// Whether `a` and `b` name one file or device (compared as [`Identity`], not as text).
pub fn same_target(a: &Path, b: &Path) -> bool {
    identity(a, 0).is_some_and(|x| identity(b, 0).is_some_and(|y| x == y))
}

/// Refuses two targets that are one file or one device: a mirror's copies would share an
/// inode and a concat would count the same blocks twice, with or without --layout.
fn check_distinct(targets: &[PathBuf]) -> Result<(), UsageError> {
    let mut seen: std::collections::HashMap<Identity, &Path> = std::collections::HashMap::new();
    for t in targets {
        let Some(id) = identity(t, 0) else { continue };
        let what = match &id {
            Identity::Device(rdev) => format!(
                "the same block device ({}:{})",
                libc::major(*rdev),
                libc::minor(*rdev)
            ),
            _ => "the same file".to_string(),
        };
        if let Some(first) = seen.insert(id, t) {
            return usage(format!(
                "--target {} and --target {} are {what}; give each file or device once",
                first.display(),
                t.display()
            ));
        }
    }
    Ok(())
}

/// The I/O setup `run` and `calibrate` share: engine, O_DIRECT unless `--buffered`, region,
/// seed, then the layout and the I/O path, checked in that order.
pub fn io_setup(io: &TargetArgs) -> Result<IoSetup, UsageError> {
    Ok(IoSetup {
        engine: io.engine,
        direct: !io.buffered,
        region: io.region,
        seed: io.seed.unwrap_or(DEFAULT_SEED),
        layout: layout_opts(io)?,
        io: io_path_opts(io)?,
    })
}

/// `--mem`, `--fixed-bufs`, `--ring-setup` and `--submit-batch`; all but the first are
/// io_uring's.
fn io_path_opts(io: &TargetArgs) -> Result<iogauge_model::iopath::IoPathOpts, UsageError> {
    if io.engine == iogauge_model::spec::EngineKind::Psync {
        if io.fixed_bufs == iogauge_model::iopath::FixedBufs::On {
            return usage(
                "--fixed-bufs on registers buffers with io_uring; drop it or --engine psync",
            );
        }
        if io.ring_setup != iogauge_model::iopath::RingSetup::Auto {
            return usage(format!(
                "--ring-setup {} sets up io_uring; drop it or --engine psync",
                io.ring_setup
            ));
        }
    }
    if io.engine == iogauge_model::spec::EngineKind::Psync && io.submit_batch != 1 {
        return usage("--submit-batch batches io_uring submissions; drop it or --engine psync");
    }
    Ok(iogauge_model::iopath::IoPathOpts {
        mem: io.mem,
        fixed_bufs: io.fixed_bufs,
        ring_setup: io.ring_setup,
        submit_batch: io.submit_batch,
    })
}

/// `--layout` and its companions; any of them alone implies `--layout concat`.
fn layout_opts(io: &TargetArgs) -> Result<Option<LayoutOpts>, UsageError> {
    let any = io.layout.is_some()
        || io.failgroups.is_some()
        || !io.degraded.is_empty()
        || io.read_from.is_some()
        || io.member_iops.is_some();
    if !any {
        return Ok(None);
    }
    if io.engine != iogauge_model::spec::EngineKind::IoUring {
        return Err(UsageError(
            "--layout runs on --engine io_uring only; drop --engine psync".into(),
        ));
    }
    let spec = io.layout.unwrap_or_default();
    if spec.copies < 2 && !io.degraded.is_empty() {
        return Err(UsageError(format!(
            "--degraded needs a mirrored layout (mirror:2 or mirror:3); --layout {spec} keeps one copy, so a failed member loses data"
        )));
    }
    Ok(Some(LayoutOpts {
        spec,
        failgroups: io.failgroups.clone(),
        degraded: io.degraded.clone(),
        read_from: io.read_from.unwrap_or_default(),
        member_iops: io.member_iops,
    }))
}
