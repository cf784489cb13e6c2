//! Where a target lives beyond its device: the mount holding it (its options say `nodatacow`,
//! `data=journal`, `noatime`: what the filesystem study's comments used to explain ext3
//! beating raw and btrfs needing `nodatacow`) and how its files lie on the device, extents per
//! GiB from FIEMAP (the comments' `xfs_bmap` diagnosis of a log writer slowed by a fragmented
//! file).

use iogauge_model::preflight::{FileLayout, MountFacts};
use procfs::process::MountInfos;
use procfs::FromBufRead;
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// The mount holding `path` (absolute, symlinks resolved) in mountinfo's text: the longest
/// mount point above it, the last of equal ones (the one on top).
pub fn mount_facts(mountinfo: &str, path: &Path) -> Option<MountFacts> {
    let infos = MountInfos::from_buf_read(mountinfo.as_bytes()).ok()?;
    let m = infos
        .into_iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.components().count())?;
    let render = |(k, v): (&String, &Option<String>)| match v {
        Some(v) => format!("{k}={v}"),
        None => k.clone(),
    };
    let mut options: Vec<String> = m.mount_options.iter().map(render).collect();
    options.sort();
    let mut own: Vec<String> = m
        .super_options
        .iter()
        .map(render)
        .filter(|o| !options.contains(o))
        .collect();
    own.sort();
    options.extend(own);
    Some(MountFacts {
        point: m.mount_point,
        source: m.mount_source,
        fs_type: m.fs_type,
        options,
    })
}

/// [`mount_facts`] of `path` on this system.
pub fn mount_of(path: &Path) -> Option<MountFacts> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mount_facts(&mountinfo, &std::fs::canonicalize(path).ok()?)
}

/// `FS_IOC_FIEMAP`: `_IOWR('f', 11, struct fiemap)`, the header being 32 bytes.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;

/// `struct fiemap` with no room for extents: the kernel then only counts them.
#[repr(C)]
#[derive(Default)]
struct FiemapCount {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

/// The extents the open file `f` takes (FIEMAP with no extent array: the kernel counts).
pub fn extents_of(f: &std::fs::File) -> io::Result<u64> {
    let mut fm = FiemapCount {
        fm_length: u64::MAX,
        ..Default::default()
    };
    // SAFETY: `fm` is a writable `struct fiemap` header with `fm_extent_count` 0, so the
    // kernel writes only the header; it outlives the call, and the fd is open.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP as _, &mut fm) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(u64::from(fm.fm_mapped_extents))
}

/// The regular files under `path` (itself when a file; no symlinks followed, `pg_wal`
/// skipped, as the WAL is its own target) of at least [`FileLayout::MIN_FILE`], and their
/// extents. `None` when nothing can be mapped (no such path, or a filesystem without FIEMAP,
/// tmpfs among them).
pub fn file_layout(path: &Path) -> Option<FileLayout> {
    let mut out = FileLayout::default();
    let mut mapped = false;
    walk(path, &mut out, &mut mapped, 0);
    mapped.then_some(out)
}

fn walk(path: &Path, out: &mut FileLayout, mapped: &mut bool, depth: usize) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_dir() && depth < 16 {
        if depth > 0 && path.file_name().is_some_and(|n| n == "pg_wal") {
            return;
        }
        let Ok(rd) = std::fs::read_dir(path) else {
            return;
        };
        for e in rd.flatten() {
            walk(&e.path(), out, mapped, depth + 1);
        }
    } else if meta.is_file() && meta.len() >= FileLayout::MIN_FILE {
        let Ok(f) = std::fs::File::open(path) else {
            return;
        };
        if let Ok(n) = extents_of(&f) {
            *mapped = true;
            out.files += 1;
            out.bytes += meta.len();
            out.extents += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Captured here: ext4 on vda, a btrfs with nodatacow over a loop device.
    const MOUNTINFO: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict
60 27 0:45 / /tmp/x rw,noatime - btrfs /dev/loop3 rw,nodatasum,nodatacow,space_cache=v2,subvolid=5,subvol=/
61 27 7:4 / /tmp/x/j rw,relatime - ext4 /dev/loop4 rw,data=journal
";

    #[test]
    fn the_mount_holding_a_path_with_its_options() {
        let m = mount_facts(MOUNTINFO, Path::new("/tmp/x/pg/base")).unwrap();
        assert_eq!(m.point, Path::new("/tmp/x"));
        assert_eq!(m.source.as_deref(), Some("/dev/loop3"));
        assert_eq!(m.fs_type, "btrfs");
        assert_eq!(m.options[..2], ["noatime".to_string(), "rw".into()]);
        assert!(m.options.contains(&"nodatacow".into()), "{:?}", m.options);
        assert_eq!(m.options.iter().filter(|o| *o == "rw").count(), 1);
        let j = mount_facts(MOUNTINFO, Path::new("/tmp/x/j/wal")).unwrap();
        assert!(
            j.options.contains(&"data=journal".into()),
            "{:?}",
            j.options
        );
        let root = mount_facts(MOUNTINFO, Path::new("/var/lib")).unwrap();
        assert_eq!(root.point, Path::new("/"));
        assert!(!root.options.contains(&"nodatacow".into()));
        assert!(mount_facts("not mountinfo", Path::new("/")).is_none());
    }

    /// A file written in one go is a few extents; the same file with every other 64 KiB
    /// punched out is one extent per piece left.
    #[test]
    fn extents_of_a_contiguous_and_a_holed_file() {
        let dir = tempfile::tempdir().unwrap();
        let block = vec![7u8; 64 << 10];
        let write = |name: &str| {
            let p = dir.path().join(name);
            let mut f = std::fs::File::create(&p).unwrap();
            for _ in 0..512 {
                f.write_all(&block).unwrap();
            }
            f.sync_all().unwrap();
            (p, f)
        };
        let (plain, _) = write("plain");
        let (holed, f) = write("holed");
        for i in (1..512).step_by(2) {
            let off = i * block.len() as i64;
            // SAFETY: an open fd; the range lies within the file.
            let rc = unsafe {
                libc::fallocate(
                    f.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    off,
                    block.len() as i64,
                )
            };
            assert_eq!(rc, 0, "{}", io::Error::last_os_error());
        }
        let small = dir.path().join("small");
        std::fs::write(&small, b"1").unwrap();
        let plain = file_layout(&plain).unwrap();
        let holed = file_layout(&holed).unwrap();
        assert_eq!((plain.files, plain.bytes), (1, 32 << 20));
        assert!(!plain.fragmented(), "{plain:?}");
        assert_eq!(holed.extents, 256, "{holed:?}");
        assert!(holed.fragmented(), "{holed:?}");
        let whole = file_layout(dir.path()).unwrap();
        assert_eq!(whole.files, 2, "the small file is not counted");
        assert_eq!(whole.extents, plain.extents + holed.extents);
        assert!(file_layout(&dir.path().join("none")).is_none());
    }
}
