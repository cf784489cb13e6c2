//! What the OS says about the targets before any I/O, as a calibration stores it: each
//! target's filesystem, block device chain (partitions, loop, md, dm down to the disks),
//! size, tested span and rotational flag; the md arrays of /proc/mdstat; and the warnings.
//! Reading sysfs and /proc/mdstat into these types is `iogauge_probe`'s.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub mod facts;
pub mod limits;

/// What the OS says about one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetFacts {
    pub path: PathBuf,
    /// Filesystem name (`ext4`); `None` for a block device target or when statfs failed.
    pub fs: Option<String>,
    /// The block device holding the target (or the target itself), with its chain.
    pub device: Option<BlockDev>,
    /// Bytes the run addresses on this target.
    pub tested_bytes: u64,
    /// Size of the top block device of `device`.
    pub device_bytes: Option<u64>,
    /// `tested_bytes` as a percentage of `device_bytes`.
    pub span_pct: Option<f64>,
    /// True if any disk at the bottom of the chain rotates, false if none does; unknown
    /// when a disk's medium is (a VM's disk: [`BlockDev::rotates`]).
    pub rotational: Option<bool>,
    /// What the target holds, for a database run: `data`, `tablespace` or `wal` (the WAL's
    /// span of its device says nothing, so it draws no short-stroking warning); `None` for a
    /// calibration's targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The mount holding the target (absent for a block device target, and in results from
    /// before iogauge recorded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<MountFacts>,
    /// How the target's files lie on their device (a file target, a database's data
    /// directory and tablespaces); absent when nothing was there yet to map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<FileLayout>,
}

impl TargetFacts {
    /// A target of which nothing is known yet but its path and the bytes the run addresses.
    pub fn new(path: PathBuf, tested_bytes: u64) -> TargetFacts {
        TargetFacts {
            path,
            fs: None,
            device: None,
            tested_bytes,
            device_bytes: None,
            span_pct: None,
            rotational: None,
            role: None,
            mount: None,
            layout: None,
        }
    }
}

/// The mount holding a target, from /proc/self/mountinfo.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MountFacts {
    /// Where it is mounted, `/srv/pg`.
    pub point: PathBuf,
    /// What is mounted, `/dev/sdb1`.
    pub source: Option<String>,
    /// The filesystem as the kernel names it, `ext4`.
    pub fs_type: String,
    /// The mount's options, then the filesystem's own, each once (`rw`, `noatime`,
    /// `data=journal`, `nodatacow`): what explains ext3 beating raw or btrfs needing
    /// `nodatacow`.
    pub options: Vec<String>,
}

/// Files under a target and the extents they take on the device (FIEMAP), counted over
/// files of at least [`FileLayout::MIN_FILE`] (a small file is one extent however it was
/// written, and would say nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileLayout {
    pub files: u64,
    pub bytes: u64,
    pub extents: u64,
}

impl FileLayout {
    /// Files smaller than this are not counted.
    pub const MIN_FILE: u64 = 1 << 20;
    /// Above this many extents per GiB (an average extent under 4 MiB) the files count as
    /// fragmented: one logical run of blocks becomes many device requests.
    pub const FRAGMENTED_PER_GIB: f64 = 256.0;
    /// Fewer counted bytes than this say nothing about fragmentation.
    pub const MIN_BYTES: u64 = 32 << 20;

    /// Extents per GiB of the counted files.
    pub fn extents_per_gib(&self) -> Option<f64> {
        (self.bytes > 0).then(|| self.extents as f64 / (self.bytes as f64 / f64::from(1u32 << 30)))
    }

    /// Enough bytes to judge, and more extents per GiB than [`Self::FRAGMENTED_PER_GIB`].
    pub fn fragmented(&self) -> bool {
        self.bytes >= Self::MIN_BYTES
            && self
                .extents_per_gib()
                .is_some_and(|e| e > Self::FRAGMENTED_PER_GIB)
    }
}

/// A request queue's settings that change what a measurement means
/// (Documentation/ABI/stable/sysfs-block, `queue/`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueFacts {
    /// `queue/write_cache`: `write back` (the device acknowledges writes from its cache;
    /// a flush makes them stable) or `write through` (every write is stable when done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<String>,
    /// `queue/logical_block_size`, bytes: the smallest I/O the device addresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_block: Option<u32>,
    /// `queue/physical_block_size`, bytes: smaller writes are read-modify-write inside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_block: Option<u32>,
    /// `queue/discard_max_bytes`: 0 when the device takes no discard (TRIM/UNMAP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard_max_bytes: Option<u64>,
    /// `queue/nr_requests`: the requests the queue holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u32>,
    /// `queue/read_ahead_kb`: what a buffered read past a miss may read ahead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u32>,
    /// `queue/wbt_lat_usec`: writeback throttling's target latency, µs (0: off); absent on
    /// queues without it and in results from before iogauge read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wbt_lat_usec: Option<u64>,
}

impl QueueFacts {
    pub fn is_empty(&self) -> bool {
        *self == QueueFacts::default()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preflight {
    pub targets: Vec<TargetFacts>,
    /// Every md array of the system, involved in a target or not.
    pub md_arrays: Vec<MdArray>,
    /// One line each: what could not be found out, then `iogauge_probe::warnings_for`.
    pub warnings: Vec<String>,
    /// The cgroup I/O limits that apply to the job (`run`, `calibrate`: iogauge's own
    /// process); `None` where they were not read (a database's server, results from before
    /// iogauge read them): unknown, not absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_limits: Option<limits::IoLimits>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DevKind {
    Disk,
    Partition,
    Loop,
    Md,
    Dm,
    /// A btrfs filesystem over several devices (its own `raid0`, `raid1`, `raid1c3`…): not a
    /// block device, named `btrfs:` + its fsid's first 8 characters, its members below.
    Btrfs,
    /// Neither of the above: zram, nbd without a device link, ...
    Other,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockDev {
    /// Kernel name, `sda1`, `nvme0n1`, `dm-0`.
    pub name: String,
    pub kind: DevKind,
    /// `size` × 512.
    pub size_bytes: Option<u64>,
    /// `queue/rotational`; a partition reports its disk's.
    pub rotational: Option<bool>,
    /// The `[bracketed]` entry of `queue/scheduler` (`none` on queues without a choice); a
    /// partition reports its disk's.
    pub scheduler: Option<String>,
    /// `device/model`, trimmed (SCSI, ATA and NVMe disks; virtio has none).
    pub model: Option<String>,
    /// `dm/name`, the mapper name (`vg0-data`).
    pub dm_name: Option<String>,
    /// `md/level`, `raid1`; for a [`DevKind::Btrfs`] node, its data profile (`raid1c3`).
    pub md_level: Option<String>,
    /// `loop/backing_file`, as the kernel prints it.
    pub loop_backing_file: Option<PathBuf>,
    /// A VM's disk (paravirtual or emulated), with what said so in sysfs: `driver
    /// virtio_blk, on the virtio bus`, `ATA QEMU HARDDISK`. Its `rotational` is then the
    /// hypervisor's choice, not the medium's ([`BlockDev::rotates`]). `None` for a disk with
    /// no such sign, and in results from before iogauge looked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_disk: Option<String>,
    /// The queue's settings (a partition reports its disk's); empty in results from before
    /// iogauge recorded them.
    #[serde(default, skip_serializing_if = "QueueFacts::is_empty")]
    pub queue: QueueFacts,
    /// What this device is built on: a partition's disk, md/dm slaves, the device holding a
    /// loop device's backing file (empty when that file is not on a block device).
    pub below: Vec<BlockDev>,
}

impl BlockDev {
    /// Whether the medium rotates: `queue/rotational`, unknown on a VM's disk
    /// ([`BlockDev::virtual_disk`]: virtio_blk says rotational whatever lies behind it).
    pub fn rotates(&self) -> Option<bool> {
        match self.virtual_disk {
            Some(_) => None,
            None => self.rotational,
        }
    }
}

/// The block devices under the whole disks at the bottom of `dev`'s chain (`dev` itself when
/// nothing is below it), in order, each once.
pub fn leaves(dev: &BlockDev) -> Vec<&BlockDev> {
    fn walk<'a>(d: &'a BlockDev, out: &mut Vec<&'a BlockDev>) {
        if d.below.is_empty() {
            if !out.iter().any(|o| o.name == d.name) {
                out.push(d);
            }
        } else {
            d.below.iter().for_each(|b| walk(b, out));
        }
    }
    let mut out = Vec::new();
    walk(dev, &mut out);
    out
}

/// One md array (one `mdN : ...` paragraph).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdArray {
    /// Kernel name, `md0`.
    pub name: String,
    /// `active` (also `active (read-only)`, `active (auto-read-only)`) rather than `inactive`.
    pub active: bool,
    /// Personality, `raid1`; absent for inactive arrays.
    pub level: Option<String>,
    pub members: Vec<MdMember>,
    /// `n` of the `[n/m]` status: slots in the array. Absent for raid0, linear, inactive.
    pub raid_disks: Option<u32>,
    /// `m` of `[n/m]`: slots holding an in-sync disk.
    pub active_disks: Option<u32>,
    /// Per-slot state, `UU` or `U_` (`_` = missing or failed).
    pub status: Option<String>,
    /// Fewer working disks than slots, a `_` in the status, or a faulty member.
    pub degraded: bool,
    pub sync: Option<MdSync>,
}

/// A member device, `sdb1[1](F)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdMember {
    /// Kernel name, `sdb1`.
    pub name: String,
    /// The descriptor number in brackets (not the slot).
    pub index: u32,
    /// `(F)`: failed.
    pub faulty: bool,
    /// `(S)`: spare (every member of an inactive array shows as one).
    pub spare: bool,
    /// `(W)`: write-mostly, reads avoid it.
    pub write_mostly: bool,
}

/// A sync in progress or waiting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MdSync {
    /// `resync`, `recovery`, `reshape`, `check` or `repair`.
    pub action: String,
    /// Done so far, 0–100; `None` when delayed or pending.
    pub percent: Option<f64>,
    /// `resync=DELAYED` (waits for another array on the same disks), `resync=PENDING`
    /// (waits for the array's first write) or `resync=REMOTE` (md-cluster).
    pub delayed_or_pending: bool,
}
