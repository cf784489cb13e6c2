//! Validated options: the raw command line checked as a whole and turned into plain data
//! (a `JobSpec` and target specs). Every error names the flag and the way out.

use crate::args::{CalibrateArgs, RunArgs, TargetArgs};
use iogauge_engine::{Access, TargetSpec};
use iogauge_model::calib::CalibrateSpec;
use iogauge_model::spec::LayoutOpts;
use iogauge_model::spec::{JobSpec, RwMode};
use iogauge_model::units::fmt_size;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where `iogauge run` works when no --target is given, and the size it creates there.
pub const SCRATCH_DIR: &str = "iogauge-scratch";
pub const SCRATCH_SIZE: u64 = 1 << 30;

/// A command line that cannot work as written (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

fn usage<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

#[derive(Debug)]
pub struct RunOptions {
    pub spec: JobSpec,
    pub targets: Vec<TargetSpec>,
    pub access: Access,
    /// The default scratch target is used: its directory may be created.
    pub scratch: bool,
    pub json: bool,
    pub store: Option<PathBuf>,
}

impl RunOptions {
    pub fn from_args(a: RunArgs) -> Result<RunOptions, UsageError> {
        let mut spec = JobSpec::new(a.rw);
        if let Some(p) = a.read_pct {
            if a.rw != RwMode::RandRw {
                return usage(format!(
                    "--read-pct applies to --rw randrw only (got --rw {})",
                    a.rw
                ));
            }
            spec.read_pct = p;
        }
        spec.bs = a.bs;
        spec.qd = a.qd;
        spec.workers = a.workers;
        spec.time = match (a.time, a.ios) {
            (Some(t), _) if t.is_zero() => {
                return usage("--time must be above 0, as in --time 30s")
            }
            (Some(t), _) => Some(t),
            (None, Some(_)) => None,
            (None, None) => Some(Duration::from_secs(10)),
        };
        spec.ios = a.ios;
        spec.ramp = a.ramp;
        spec.rate_iops = a.rate_iops;
        spec.region = a.io.region;
        spec.dist = a.dist;
        spec.engine = a.io.engine;
        spec.direct = !a.io.buffered;
        if a.interval < Duration::from_millis(100) || a.interval > Duration::from_secs(3600) {
            return usage("--interval must be between 100ms and 1h");
        }
        spec.interval = a.interval;
        if let Some(criterion) = a.steady {
            if a.steady_window < a.interval * 2 {
                return usage(format!(
                    "--steady-window must hold at least two intervals of {:?} (a slope needs two points); raise it or lower --interval",
                    a.interval
                ));
            }
            if a.steady_timeout <= a.steady_window.max(a.ramp) {
                return usage(
                    "--steady-timeout must be longer than --steady-window and --ramp; raise it, e.g. --steady-timeout 2m",
                );
            }
            spec.steady = Some(iogauge_model::spec::SteadyWait {
                criterion,
                window: a.steady_window,
                timeout: a.steady_timeout,
            });
        }
        if let Some(s) = a.io.seed {
            spec.seed = s;
        }
        spec.layout = layout_opts(&a.io)?;
        spec.io = io_path_opts(&a.io)?;
        if !spec.rw.is_random() && spec.dist != iogauge_model::spec::Dist::Uniform {
            return usage(format!(
                "--dist applies to random modes only (got --rw {})",
                spec.rw
            ));
        }
        if let Some(size) = a.io.size {
            if size < spec.bs.max() {
                return usage(format!(
                    "--size {} is smaller than the block size {}; use a larger --size",
                    fmt_size(size),
                    fmt_size(spec.bs.max())
                ));
            }
        }
        let (targets, scratch) = target_specs(a.io.targets, a.io.size)?;
        Ok(RunOptions {
            access: Access {
                direct: spec.direct,
                write: spec.rw.writes(),
                allow_overwrite: a.io.allow_overwrite,
            },
            spec,
            targets,
            scratch,
            json: a.json,
            store: a.store.store,
        })
    }
}

/// The matrix files iogauge writes with --csv; it never replaces a file it did not create.
pub const CSV_FILES: [&str; 3] = ["iops.csv", "mbps.csv", "lat.csv"];

fn check_csv_dir(dir: &std::path::Path, matrix: bool) -> Result<(), UsageError> {
    if !matrix {
        return usage("--csv writes the matrix files: add --matrix");
    }
    // An existing file (or a link to one) would only fail after the whole measurement.
    if std::fs::symlink_metadata(dir).is_ok() && !dir.is_dir() {
        return usage(format!(
            "--csv {} exists and is not a directory; --csv names a directory for the matrix files (created when missing): choose a directory or a new path",
            dir.display()
        ));
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() && !parent.is_dir() {
        return usage(format!(
            "--csv {}: directory {} does not exist; create it or choose another --csv",
            dir.display(),
            parent.display()
        ));
    }
    if let Some(f) = CSV_FILES.iter().find(|f| dir.join(f).exists()) {
        return usage(format!(
            "--csv {}: {f} already exists and iogauge does not overwrite files; choose an empty directory",
            dir.display()
        ));
    }
    Ok(())
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

#[derive(Debug)]
pub struct CalibrateOptions {
    pub spec: CalibrateSpec,
    pub targets: Vec<TargetSpec>,
    pub access: Access,
    pub scratch: bool,
    pub json: bool,
    pub store: Option<PathBuf>,
    pub csv: Option<PathBuf>,
}

impl CalibrateOptions {
    pub fn from_args(a: CalibrateArgs) -> Result<CalibrateOptions, UsageError> {
        if a.max_latency.is_zero() {
            return usage("--max-latency must be above 0, as in --max-latency 10ms");
        }
        if a.point_time < Duration::from_millis(500) {
            return usage("--point-time must be at least 500ms (shorter points are mostly noise)");
        }
        if a.large_block < a.block {
            return usage("--large-block must not be smaller than --block");
        }
        if let Some(size) = a.io.size {
            if size < a.large_block {
                return usage(format!(
                    "--size {} is smaller than the large block {}; use a larger --size",
                    fmt_size(size),
                    fmt_size(a.large_block)
                ));
            }
        }
        if a.cache_size == Some(0) {
            return usage("--cache-size must be above 0");
        }
        if let Some(dir) = &a.csv {
            check_csv_dir(dir, a.matrix)?;
        }
        let spec = CalibrateSpec {
            small_bs: a.block,
            large_bs: a.large_block,
            point_time: a.point_time,
            point_ramp: a.point_time / 4,
            max_latency_us: a.max_latency.as_secs_f64() * 1e6,
            criterion: a.criterion,
            disks: a.disks,
            max_outstanding: CalibrateSpec::ceiling(a.disks),
            write_pct: a.write_pct,
            cache_size: a.cache_size,
            matrix: a.matrix,
            engine: a.io.engine,
            direct: !a.io.buffered,
            region: a.io.region,
            seed: a.io.seed.unwrap_or(0x0106_a06e),
            layout: layout_opts(&a.io)?,
            io: io_path_opts(&a.io)?,
            io_path: None,
        };
        let (targets, scratch) = target_specs(a.io.targets, a.io.size)?;
        Ok(CalibrateOptions {
            access: Access {
                direct: spec.direct,
                write: spec.write_pct > 0,
                allow_overwrite: a.io.allow_overwrite,
            },
            spec,
            targets,
            scratch,
            json: a.json,
            store: a.store.store,
            csv: a.csv,
        })
    }
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
