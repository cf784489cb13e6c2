//! Block device facts from sysfs, and the chain of devices under one: a partition sits on its
//! disk, md and dm devices on their `slaves/`, a loop device on the device holding its backing
//! file. Preflight reports the top (its size is the tested span's denominator) and the whole
//! disks at the bottom (rotational or not: what a calibration really measures; a VM's disk
//! says so, and its rotational flag is then no medium's: `virt`).
//!
//! The sysfs root is a parameter so that tests build fake trees; they use symlinks the way
//! the kernel does (`class/block/sda1 -> ../../devices/.../block/sda/sda1`). Attribute layout
//! from Documentation/ABI/stable/sysfs-block: `size` counts 512-byte sectors whatever the
//! logical block size, `queue/` exists only on whole disks (and on md, dm, loop).

use iogauge_model::preflight::{BlockDev, DevKind, QueueFacts};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Deeper chains than this are treated as broken (real stacks are 2–4 levels).
pub const MAX_DEPTH: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum SysfsError {
    #[error("no block device {what} in {path}")]
    NotFound { what: String, path: PathBuf },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}: cannot read {text:?} as {what}")]
    Parse {
        path: PathBuf,
        text: String,
        what: &'static str,
    },
    #[error("the device chain through {name} is deeper than {MAX_DEPTH} levels")]
    TooDeep { name: String },
    #[error("the device chain loops back to {name}")]
    Cycle { name: String },
}

/// `(major, minor)` of the filesystem holding `path` (its `st_dev`), for [`Sysfs::by_devnum`]'s
/// `file_dev`. `None` when the path cannot be stat'ed.
pub fn file_dev(path: &Path) -> Option<(u32, u32)> {
    let dev = std::fs::metadata(path).ok()?.dev();
    Some((libc::major(dev), libc::minor(dev)))
}

/// A sysfs tree: `/sys`, or a fixture.
#[derive(Clone, Debug)]
pub struct Sysfs {
    root: PathBuf,
}

impl Sysfs {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Sysfs { root: root.into() }
    }

    pub fn system() -> Self {
        Sysfs::new("/sys")
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The device `major:minor` and everything below it, via `<root>/dev/block/MAJ:MIN`.
    /// `file_dev` gives the `(major, minor)` of the filesystem holding a loop device's backing
    /// file ([`file_dev`] in production).
    pub fn by_devnum(
        &self,
        major: u32,
        minor: u32,
        file_dev: &dyn Fn(&Path) -> Option<(u32, u32)>,
    ) -> Result<BlockDev, SysfsError> {
        let link = self.root.join(format!("dev/block/{major}:{minor}"));
        self.resolve(
            &link,
            &format!("{major}:{minor}"),
            file_dev,
            &mut Vec::new(),
        )
    }

    /// The device named `name` (`sda1`) and everything below it, via `<root>/class/block/NAME`.
    pub fn by_name(
        &self,
        name: &str,
        file_dev: &dyn Fn(&Path) -> Option<(u32, u32)>,
    ) -> Result<BlockDev, SysfsError> {
        let link = self.root.join("class/block").join(name);
        self.resolve(&link, name, file_dev, &mut Vec::new())
    }

    /// Follows a sysfs link to its device directory and builds from there. `stack` holds the
    /// directories of the devices above, to catch cycles.
    fn resolve(
        &self,
        link: &Path,
        what: &str,
        file_dev: &dyn Fn(&Path) -> Option<(u32, u32)>,
        stack: &mut Vec<PathBuf>,
    ) -> Result<BlockDev, SysfsError> {
        let dir = std::fs::canonicalize(link).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => SysfsError::NotFound {
                what: what.to_string(),
                path: link.to_path_buf(),
            },
            _ => io_err(link, e),
        })?;
        self.build(&dir, file_dev, stack)
    }

    fn build(
        &self,
        dir: &Path,
        file_dev: &dyn Fn(&Path) -> Option<(u32, u32)>,
        stack: &mut Vec<PathBuf>,
    ) -> Result<BlockDev, SysfsError> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if stack.iter().any(|d| d == dir) {
            return Err(SysfsError::Cycle { name });
        }
        if stack.len() >= MAX_DEPTH {
            return Err(SysfsError::TooDeep { name });
        }
        stack.push(dir.to_path_buf());
        let result = self.build_unchecked(dir, name, file_dev, stack);
        stack.pop();
        result
    }

    fn build_unchecked(
        &self,
        dir: &Path,
        name: String,
        file_dev: &dyn Fn(&Path) -> Option<(u32, u32)>,
        stack: &mut Vec<PathBuf>,
    ) -> Result<BlockDev, SysfsError> {
        let kind = if dir.join("partition").exists() {
            DevKind::Partition
        } else if dir.join("md").is_dir() {
            DevKind::Md
        } else if dir.join("dm").is_dir() {
            DevKind::Dm
        } else if dir.join("loop").is_dir() || name.starts_with("loop") {
            DevKind::Loop
        } else if dir.join("device").exists() {
            DevKind::Disk
        } else {
            DevKind::Other
        };
        let size_path = dir.join("size");
        let size_bytes = match read_attr(&size_path)? {
            Some(s) => Some(
                s.parse::<u64>()
                    .ok()
                    .and_then(|sectors| sectors.checked_mul(512))
                    .ok_or_else(|| parse_err(&size_path, &s, "a number of 512-byte sectors"))?,
            ),
            None => None,
        };
        let mut dev = BlockDev {
            name,
            kind,
            size_bytes,
            rotational: None,
            scheduler: None,
            model: read_attr(&dir.join("device/model"))?.filter(|m| !m.is_empty()),
            dm_name: read_attr(&dir.join("dm/name"))?,
            md_level: read_attr(&dir.join("md/level"))?.filter(|l| !l.is_empty()),
            loop_backing_file: read_attr(&dir.join("loop/backing_file"))?.map(PathBuf::from),
            virtual_disk: match kind {
                DevKind::Disk => virt::virtual_disk(&self.root, dir)?,
                _ => None,
            },
            queue: QueueFacts::default(),
            below: Vec::new(),
        };
        match kind {
            DevKind::Partition => {
                // The disk is the parent directory; queue/ lives there.
                let disk_dir = dir.parent().unwrap_or(dir);
                let disk = self.build(disk_dir, file_dev, stack)?;
                dev.rotational = disk.rotational;
                dev.virtual_disk = disk.virtual_disk.clone();
                dev.scheduler = disk.scheduler.clone();
                dev.queue = disk.queue.clone();
                dev.below.push(disk);
            }
            _ => {
                let (rotational, scheduler) = queue_attrs(dir)?;
                dev.rotational = rotational;
                dev.scheduler = scheduler;
                dev.queue = queue_facts(&dir.join("queue"));
                for slave in list_dir(&dir.join("slaves"))? {
                    let what = slave.file_name().unwrap_or_default().to_string_lossy();
                    dev.below
                        .push(self.resolve(&slave, &what, file_dev, stack)?);
                }
            }
        }
        if let Some((major, minor)) = dev.loop_backing_file.as_deref().and_then(file_dev) {
            // A backing file on tmpfs, NFS or btrfs subvolumes has an anonymous st_dev with no
            // sysfs entry: nothing below, which is the truth rather than an error.
            let link = self.root.join(format!("dev/block/{major}:{minor}"));
            if link.exists() {
                let what = format!("{major}:{minor}");
                dev.below.push(self.resolve(&link, &what, file_dev, stack)?);
            }
        }
        Ok(dev)
    }
}

/// `queue/rotational` and the selected `queue/scheduler`.
fn queue_attrs(dir: &Path) -> Result<(Option<bool>, Option<String>), SysfsError> {
    let rot_path = dir.join("queue/rotational");
    let rotational = match read_attr(&rot_path)?.as_deref() {
        None => None,
        Some("0") => Some(false),
        Some("1") => Some(true),
        Some(other) => return Err(parse_err(&rot_path, other, "0 or 1")),
    };
    let sched_path = dir.join("queue/scheduler");
    let scheduler = match read_attr(&sched_path)? {
        None => None,
        Some(text) => Some(
            parse_scheduler(&text).ok_or_else(|| parse_err(&sched_path, &text, "a scheduler"))?,
        ),
    };
    Ok((rotational, scheduler))
}

/// The queue's settings under `queue/` (each absent when its file is, or does not parse:
/// they are facts to show, not to build on).
fn queue_facts(queue: &Path) -> QueueFacts {
    fn num<T: std::str::FromStr>(queue: &Path, name: &str) -> Option<T> {
        read_attr(&queue.join(name)).ok()??.parse().ok()
    }
    QueueFacts {
        write_cache: read_attr(&queue.join("write_cache"))
            .ok()
            .flatten()
            .filter(|w| !w.is_empty()),
        logical_block: num(queue, "logical_block_size"),
        physical_block: num(queue, "physical_block_size"),
        discard_max_bytes: num(queue, "discard_max_bytes"),
        nr_requests: num(queue, "nr_requests"),
        read_ahead_kb: num(queue, "read_ahead_kb"),
        wbt_lat_usec: num(queue, "wbt_lat_usec"),
    }
}

/// `none [mq-deadline] kyber bfq` → `mq-deadline`; a queue without a choice prints `none`.
pub fn parse_scheduler(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    if let Some(w) = words
        .clone()
        .find(|w| w.starts_with('[') && w.ends_with(']'))
    {
        return Some(w[1..w.len() - 1].to_string()).filter(|s| !s.is_empty());
    }
    match (words.next(), words.next()) {
        (Some(only), None) => Some(only.to_string()),
        _ => None,
    }
}

/// A sysfs attribute, trimmed; `None` when the file does not exist (older kernel, other
/// device type).
fn read_attr(path: &Path) -> Result<Option<String>, SysfsError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s.trim().to_string())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path, e)),
    }
}

/// Entries of a directory (sorted, for stable output); none when it does not exist.
pub(crate) fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, SysfsError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(dir, e)),
    };
    let mut out = entries
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| io_err(dir, e))?;
    out.sort();
    Ok(out)
}

fn parse_err(path: &Path, text: &str, what: &'static str) -> SysfsError {
    SysfsError::Parse {
        path: path.to_path_buf(),
        text: text.to_string(),
        what,
    }
}

fn io_err(path: &Path, source: io::Error) -> SysfsError {
    SysfsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

mod virt;

// The fake sysfs trees take more lines than the code they test.
#[cfg(test)]
mod tests;
