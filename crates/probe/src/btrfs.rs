//! The devices of a btrfs filesystem. btrfs gives its files an anonymous `st_dev` (`0:N`) with
//! no block device behind it in sysfs (each subvolume its own, the top one included, none of
//! them the mount's in mountinfo), so the chain is found another way: the mount holding the
//! path (in /proc/self/mountinfo, the longest mount point above it) names one member as its
//! source, and
//! `/sys/fs/btrfs/FSID/devices/` lists every member of the filesystem that member belongs to.
//! One member is the filesystem's device, as ext4's is; several (btrfs's own `raid0`, `raid1`,
//! `raid1c3`… over them) become one [`DevKind::Btrfs`] node with the members' chains below it,
//! as an md array's are.

use crate::layout::mount_of;
use crate::sysfs::{Sysfs, SysfsError};
use iogauge_model::preflight::{BlockDev, DevKind, MountFacts};
use std::path::{Path, PathBuf};

/// The source of `mount` (`/dev/loop3`, one of the filesystem's members) when it is btrfs.
pub fn member_source(mount: &MountFacts) -> Option<&str> {
    (mount.fs_type == "btrfs")
        .then_some(mount.source.as_deref())
        .flatten()
}

/// The kernel name of a mount source: `/dev/loop3` → `loop3`, a symlink (`/dev/mapper/vg-x`,
/// `/dev/disk/by-uuid/…`) followed to its device node first.
pub fn kernel_name(source: &str) -> Option<String> {
    let path = std::fs::canonicalize(source).unwrap_or_else(|_| PathBuf::from(source));
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// The members (kernel names, sorted) of the btrfs filesystem holding `path`; none when it is
/// not on a btrfs sysfs lists.
pub fn btrfs_members_of(path: &Path) -> Vec<String> {
    mount_of(path)
        .as_ref()
        .and_then(member_source)
        .and_then(kernel_name)
        .and_then(|name| Sysfs::system().btrfs_members(&name).ok().flatten())
        .map(|m| m.members)
        .unwrap_or_default()
}

/// btrfs's block group profiles, as `allocation/data/` names their directories.
const PROFILES: [&str; 9] = [
    "single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5", "raid6",
];

/// A mounted btrfs filesystem's members (kernel names, sorted) and data profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Members {
    pub fsid: String,
    pub members: Vec<String>,
    pub profile: Option<String>,
}

impl Sysfs {
    /// The filesystem `member` (a kernel name) belongs to, from `<root>/fs/btrfs/FSID/`:
    /// `devices/` and the profile directory in `allocation/data/`. `None` when no mounted
    /// btrfs has it.
    pub fn btrfs_members(&self, member: &str) -> Result<Option<Members>, SysfsError> {
        for fs in crate::sysfs::list_dir(&self.root().join("fs/btrfs"))? {
            let devices = fs.join("devices");
            if !devices.join(member).exists() {
                continue;
            }
            let fsid = fs
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let names = |dir: &Path| -> Result<Vec<String>, SysfsError> {
                Ok(crate::sysfs::list_dir(dir)?
                    .iter()
                    .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect())
            };
            let profile = names(&fs.join("allocation/data"))?
                .into_iter()
                .find(|n| PROFILES.contains(&n.as_str()));
            return Ok(Some(Members {
                fsid,
                members: names(&devices)?,
                profile,
            }));
        }
        Ok(None)
    }

    /// The chain under the btrfs filesystem whose mount source is `source`: its one member's,
    /// or a [`DevKind::Btrfs`] node named `btrfs:` + the fsid's first 8 characters, its size the
    /// members' sum, with each member's chain below. `None` when sysfs does not list it.
    pub fn btrfs(
        &self,
        source: &str,
        file_dev: &dyn Fn(&Path) -> Option<(u32, u32)>,
    ) -> Result<Option<BlockDev>, SysfsError> {
        let Some(name) = kernel_name(source) else {
            return Ok(None);
        };
        let Some(fs) = self.btrfs_members(&name)? else {
            return Ok(None);
        };
        let mut below = fs
            .members
            .iter()
            .map(|m| self.by_name(m, file_dev))
            .collect::<Result<Vec<_>, _>>()?;
        if below.len() == 1 {
            return Ok(below.pop());
        }
        let size_bytes = below.iter().map(|d| d.size_bytes).sum();
        Ok(Some(BlockDev {
            name: format!("btrfs:{}", fs.fsid.chars().take(8).collect::<String>()),
            kind: DevKind::Btrfs,
            size_bytes,
            rotational: None,
            scheduler: None,
            model: None,
            dm_name: None,
            md_level: fs.profile,
            loop_backing_file: None,
            virtual_disk: None,
            queue: Default::default(),
            below,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured on this machine: a btrfs over three loop devices (mountinfo says 0:42, its
    /// files' st_dev is 0:43), the tmpfs holding their images, and one mounted over it.
    const MOUNTINFO: &str = "\
26 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
45 27 0:41 / /tmp/rx/mem rw,relatime - tmpfs tmpfs rw,size=6291456k
48 27 0:42 / /tmp/rx/fs rw,relatime - btrfs /dev/loop3 rw,nodatasum,nodatacow,ssd,discard=async,space_cache=v2,subvolid=5,subvol=/
50 48 0:44 / /tmp/rx/fs/t rw,relatime - tmpfs tmpfs rw
";

    #[test]
    fn the_mount_holding_a_path_names_a_member() {
        let at = |p: &str| {
            let mount = crate::layout::mount_facts(MOUNTINFO, Path::new(p))?;
            member_source(&mount).map(str::to_string)
        };
        assert_eq!(at("/tmp/rx/fs/pg/data").as_deref(), Some("/dev/loop3"));
        assert_eq!(at("/tmp/rx/fs").as_deref(), Some("/dev/loop3"));
        assert_eq!(at("/tmp/rx/fs/t/x"), None, "a tmpfs mounted inside it");
        assert_eq!(
            at("/tmp/rx/fsx"),
            None,
            "a prefix of the name is not a parent"
        );
        assert_eq!(at("/tmp/rx/mem/m1.img"), None, "tmpfs is not btrfs");
        assert_eq!(
            crate::layout::mount_facts("not mountinfo", Path::new("/tmp/rx/fs")),
            None
        );
    }

    fn tree(fsids: &[(&str, &[&str])]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for (fsid, members) in fsids {
            std::fs::create_dir_all(r.join("fs/btrfs").join(fsid).join("devices")).unwrap();
            let data = r.join("fs/btrfs").join(fsid).join("allocation/data");
            std::fs::create_dir_all(data.join("raid1c3")).unwrap();
            std::fs::write(data.join("chunk_size"), "1073741824\n").unwrap();
            for m in *members {
                let dev = r.join("devices/virtual/block").join(m);
                std::fs::create_dir_all(dev.join("queue")).unwrap();
                std::fs::create_dir_all(dev.join("loop")).unwrap();
                std::fs::write(dev.join("size"), "2097152\n").unwrap();
                std::fs::write(dev.join("queue/rotational"), "0\n").unwrap();
                std::fs::create_dir_all(r.join("class/block")).unwrap();
                let _ = std::os::unix::fs::symlink(&dev, r.join("class/block").join(m));
                std::os::unix::fs::symlink(
                    &dev,
                    r.join("fs/btrfs").join(fsid).join("devices").join(m),
                )
                .unwrap();
            }
        }
        t
    }

    #[test]
    fn several_members_become_one_node_over_their_chains() {
        let t = tree(&[
            ("34ab6bb6-6b3f-44d5-aa16-4d495bf36e02", &["loop2"]),
            (
                "c37cbc50-f27d-4940-b431-5e828bfe6519",
                &["loop3", "loop4", "loop5"],
            ),
        ]);
        let sys = Sysfs::new(t.path());
        let none = |_: &Path| None;
        let fs = sys.btrfs("/dev/loop4", &none).unwrap().unwrap();
        assert_eq!(
            (fs.name.as_str(), fs.kind),
            ("btrfs:c37cbc50", DevKind::Btrfs)
        );
        let names: Vec<&str> = fs.below.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["loop3", "loop4", "loop5"]);
        assert_eq!(fs.size_bytes, Some(3 << 30));
        assert_eq!(fs.md_level.as_deref(), Some("raid1c3"), "the data profile");
        // One member is the filesystem's device itself.
        let one = sys.btrfs("/dev/loop2", &none).unwrap().unwrap();
        assert_eq!((one.name.as_str(), one.kind), ("loop2", DevKind::Loop));
        assert_eq!(sys.btrfs("/dev/loop9", &none).unwrap(), None);
    }
}
