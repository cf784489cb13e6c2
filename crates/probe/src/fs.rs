//! Filesystem and backing-device facts for a path.

use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The filesystem holding a path, from statfs(2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsInfo {
    /// `f_type` from statfs(2) (the magic numbers of linux/magic.h).
    pub magic: u64,
    pub name: String,
}

impl FsInfo {
    pub fn from_magic(magic: u64) -> Self {
        // Magic numbers from include/uapi/linux/magic.h.
        let name = match magic {
            0xEF53 => "ext4",
            0x5846_5342 => "xfs",
            0x9123_683E => "btrfs",
            0x0102_1994 => "tmpfs",
            0x8584_58F6 => "ramfs",
            0x2FC1_2FC1 => "zfs",
            0x6969 => "nfs",
            0xFF53_4D42 => "cifs",
            0x6573_5546 => "fuse",
            0x794C_7630 => "overlayfs",
            0x5346_544E => "ntfs",
            0x4d44 => "vfat",
            0xF2F5_2010 => "f2fs",
            0x9FA0 => "proc",
            0x6265_6572 => "sysfs",
            0x1CD1 => "devpts",
            0x6462_6720 => "debugfs",
            0x7472_6163 => "tracefs",
            0x7363_6673 => "securityfs",
            0x0027_E0EB => "cgroup",
            0x6367_7270 => "cgroup2",
            0xCAFE_4A11 => "bpf",
            0x6265_6570 => "configfs",
            0x6165_676C => "pstore",
            0xDE5E_81E4 => "efivarfs",
            0x1980_0202 => "mqueue",
            0x4249_4E4D => "binfmt_misc",
            0xF97C_FF8C => "selinuxfs",
            0x4341_5D53 => "smackfs",
            0x6E73_6673 => "nsfs",
            0x6573_5543 => "fusectl",
            _ => {
                return FsInfo {
                    magic,
                    name: format!("0x{magic:x}"),
                }
            }
        };
        FsInfo {
            magic,
            name: name.to_string(),
        }
    }

    /// Filesystems that keep data in memory: I/O there measures RAM, not storage.
    pub fn is_memory(&self) -> bool {
        matches!(self.name.as_str(), "tmpfs" | "ramfs")
    }

    /// The kernel's own interfaces (procfs, sysfs, debugfs, cgroupfs, tracefs…): their
    /// "files" are settings and counters, and a write there changes the machine (`iogauge run
    /// --target /sys/kernel/mm/transparent_hugepage/enabled` wrote to the attribute, issue
    /// #25 row 20). Nothing iogauge writes or measures belongs there.
    pub fn is_kernel_interface(&self) -> bool {
        matches!(
            self.name.as_str(),
            "proc"
                | "sysfs"
                | "devpts"
                | "debugfs"
                | "tracefs"
                | "securityfs"
                | "cgroup"
                | "cgroup2"
                | "bpf"
                | "configfs"
                | "pstore"
                | "efivarfs"
                | "mqueue"
                | "binfmt_misc"
                | "selinuxfs"
                | "smackfs"
                | "nsfs"
                | "fusectl"
        )
    }
}

/// The filesystem holding `path` (which must exist).
pub fn fs_of(path: &Path) -> io::Result<FsInfo> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated string and `st` a properly sized, writable statfs
    // that statfs(2) fills in; both outlive the call.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FsInfo::from_magic(st.f_type as u64))
}

/// The filesystem `path` is or would be created on: that of `path`, or of its nearest
/// ancestor that exists (`/proc/x` → /proc's), with the path statfs(2) was asked about.
pub fn fs_of_nearest(path: &Path) -> io::Result<(std::path::PathBuf, FsInfo)> {
    let abs = std::path::absolute(path)?;
    let mut at: &Path = &abs;
    loop {
        match fs_of(at) {
            Ok(fs) => return Ok((at.to_path_buf(), fs)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match at.parent() {
                Some(p) => at = p,
                None => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
}

/// The kernel name of the block device behind a `st_dev` (`vda`, `sda1`, `loop3`), from
/// /sys/dev/block/MAJ:MIN/uevent. `None` for filesystems without one (tmpfs, NFS).
pub fn backing_device(dev: u64) -> Option<String> {
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let uevent = std::fs::read_to_string(format!("/sys/dev/block/{maj}:{min}/uevent")).ok()?;
    parse_devname(&uevent)
}

fn parse_devname(uevent: &str) -> Option<String> {
    uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn magic_names() {
        assert_eq!(FsInfo::from_magic(0xEF53).name, "ext4");
        assert!(FsInfo::from_magic(0x0102_1994).is_memory());
        assert!(!FsInfo::from_magic(0x5846_5342).is_memory());
        assert_eq!(FsInfo::from_magic(0x1234).name, "0x1234");
    }

    #[test]
    fn devname_from_captured_uevent() {
        let u = "MAJOR=254\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\nDISKSEQ=1\n";
        assert_eq!(parse_devname(u).as_deref(), Some("vda"));
        assert_eq!(parse_devname("MAJOR=7\n"), None);
    }

    #[test]
    fn real_paths() {
        assert_eq!(fs_of(Path::new("/proc")).unwrap().name, "proc");
        assert!(fs_of(Path::new("/no/such/path")).is_err());
        let sys = fs_of(Path::new("/sys/kernel")).unwrap();
        assert!(sys.is_kernel_interface(), "{sys:?}");
        let (at, proc) = fs_of_nearest(Path::new("/proc/iogauge-none/x")).unwrap();
        assert_eq!(
            (at.as_path(), proc.name.as_str()),
            (Path::new("/proc"), "proc")
        );
        assert!(!fs_of(Path::new("/")).unwrap().is_kernel_interface());
        let root = std::fs::metadata("/").unwrap();
        // The root filesystem of any machine that runs these tests sits on a block device.
        assert!(backing_device(root.dev()).is_some(), "no device behind /");
    }
}
