//! Signatures on a block device, found by libblkid: util-linux's probing library, the one
//! `blkid` and `wipefs` use. It knows every filesystem, RAID, crypto and partition-table
//! format util-linux knows, wherever on the device it sits (md 0.90 and 1.0 superblocks and
//! GPT's backup header live at the end). A hand-written table of magic numbers missed
//! those; libblkid is kept up to date by the people who write the formats' tools.
//!
//! The probe follows `wipefs` (misc-utils/wipefs.c): superblocks with bad checksums too,
//! partition tables with GPT forced (a GPT whose protective MBR was overwritten still
//! counts), and after each find the signature is hidden and its prober run again, so every
//! signature is listed, not just the first. Only reads: nothing is written to the device.
//!
//! The eleven libblkid calls are declared below and linked against the runtime library
//! `libblkid.so.1` itself (on every Linux system: util-linux and mount depend on it), so
//! building iogauge needs no headers, pkg-config or libclang (the `libblkid-rs` crates run
//! bindgen at build time, which would break the README's `cargo run` on a fresh machine,
//! and their safe wrapper cannot set the partition flags `wipefs` relies on).

/// libblkid's C API as declared in `<blkid/blkid.h>` (util-linux 2.38), the calls used here.
#[allow(non_camel_case_types)]
mod sys {
    use libc::{c_char, c_int, size_t};

    /// `typedef struct blkid_struct_probe *blkid_probe;`
    pub type blkid_probe = *mut libc::c_void;

    pub const BLKID_SUBLKS_TYPE: c_int = 1 << 5;
    pub const BLKID_SUBLKS_USAGE: c_int = 1 << 7;
    pub const BLKID_SUBLKS_VERSION: c_int = 1 << 8;
    pub const BLKID_SUBLKS_MAGIC: c_int = 1 << 9;
    pub const BLKID_SUBLKS_BADCSUM: c_int = 1 << 10;
    pub const BLKID_PARTS_FORCE_GPT: c_int = 1 << 1;
    pub const BLKID_PARTS_MAGIC: c_int = 1 << 3;

    #[link(name = "libblkid.so.1", kind = "dylib", modifiers = "+verbatim")]
    extern "C" {
        pub fn blkid_new_probe() -> blkid_probe;
        pub fn blkid_free_probe(pr: blkid_probe);
        pub fn blkid_probe_set_device(pr: blkid_probe, fd: c_int, off: i64, size: i64) -> c_int;
        pub fn blkid_probe_enable_superblocks(pr: blkid_probe, enable: c_int) -> c_int;
        pub fn blkid_probe_set_superblocks_flags(pr: blkid_probe, flags: c_int) -> c_int;
        pub fn blkid_probe_enable_partitions(pr: blkid_probe, enable: c_int) -> c_int;
        pub fn blkid_probe_set_partitions_flags(pr: blkid_probe, flags: c_int) -> c_int;
        pub fn blkid_do_probe(pr: blkid_probe) -> c_int;
        pub fn blkid_probe_lookup_value(
            pr: blkid_probe,
            name: *const c_char,
            data: *mut *const c_char,
            len: *mut size_t,
        ) -> c_int;
        pub fn blkid_probe_hide_range(pr: blkid_probe, off: u64, len: u64) -> c_int;
        pub fn blkid_probe_step_back(pr: blkid_probe) -> c_int;
    }
}
use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

/// One signature libblkid found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// libblkid's TYPE or PTTYPE (`vfat`, `linux_raid_member`, `gpt`).
    pub kind: String,
    /// libblkid's USAGE (`filesystem`, `raid`, `crypto`, `other`), or `partition table`.
    pub usage: String,
    /// libblkid's VERSION, when the format has one (`1.0` for md).
    pub version: Option<String>,
    /// Byte offset of the signature's magic on the device.
    pub offset: Option<u64>,
}

impl Found {
    /// In words: "vfat filesystem", "md raid member v1.0", "gpt partition table".
    pub fn what(&self) -> String {
        let version = self.version.as_deref().map(|v| format!(" v{v}"));
        match (self.kind.as_str(), self.usage.as_str()) {
            ("linux_raid_member", _) => {
                format!("md raid member{}", version.unwrap_or_default())
            }
            ("dos", "partition table") => "dos (MBR) partition table".to_string(),
            (k, "partition table") => format!("{k} partition table"),
            (k, "filesystem") => format!("{k} filesystem"),
            (k, "raid") => format!("{k} raid member{}", version.unwrap_or_default()),
            (k, "crypto") => format!("{k} encrypted volume{}", version.unwrap_or_default()),
            (k, _) => format!("{k} signature"),
        }
    }
}

/// All that was found, in words, each kind once with the bytes where its magic sits:
/// "a vfat filesystem (at bytes 0, 82, 510)", "an md raid member v1.0 (at byte 67100672)".
pub fn summary(found: &[Found]) -> String {
    let mut kinds: Vec<(String, Vec<u64>)> = Vec::new();
    for f in found {
        let what = f.what();
        let i = match kinds.iter().position(|(w, _)| *w == what) {
            Some(i) => i,
            None => {
                kinds.push((what, Vec::new()));
                kinds.len() - 1
            }
        };
        kinds[i].1.extend(f.offset);
    }
    let parts: Vec<String> = kinds
        .into_iter()
        .map(|(what, mut at)| {
            let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) || what.starts_with("md ")
            {
                "an"
            } else {
                "a"
            };
            at.sort_unstable();
            at.dedup();
            let at: Vec<String> = at.iter().map(u64::to_string).collect();
            match at.len() {
                0 => format!("{article} {what}"),
                1 => format!("{article} {what} (at byte {})", at[0]),
                _ => format!("{article} {what} (at bytes {})", at.join(", ")),
            }
        })
        .collect();
    match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => parts.join(""),
    }
}

/// A libblkid probe, freed on drop.
struct Probe(sys::blkid_probe);

impl Drop for Probe {
    fn drop(&mut self) {
        // SAFETY: the probe came from blkid_new_probe and is freed exactly once, here.
        unsafe { sys::blkid_free_probe(self.0) }
    }
}

/// libblkid reports failures as negative return codes and sets errno on most of them.
fn check(rc: i32, what: &str) -> io::Result<i32> {
    if rc < 0 {
        let os = io::Error::last_os_error();
        let detail = match os.raw_os_error() {
            Some(0) | None => format!("libblkid: {what} failed"),
            _ => format!("libblkid: {what}: {os}"),
        };
        return Err(io::Error::new(os.kind(), detail));
    }
    Ok(rc)
}

impl Probe {
    /// A probe on `file`'s whole device, set up as `wipefs` sets up its own.
    fn new(file: &File) -> io::Result<Probe> {
        // SAFETY: blkid_new_probe has no preconditions; a null result is checked below.
        let raw = unsafe { sys::blkid_new_probe() };
        if raw.is_null() {
            return Err(io::Error::other("libblkid: cannot allocate a probe"));
        }
        let p = Probe(raw);
        let sublks = sys::BLKID_SUBLKS_TYPE
            | sys::BLKID_SUBLKS_USAGE
            | sys::BLKID_SUBLKS_VERSION
            | sys::BLKID_SUBLKS_MAGIC
            | sys::BLKID_SUBLKS_BADCSUM;
        let parts = sys::BLKID_PARTS_MAGIC | sys::BLKID_PARTS_FORCE_GPT;
        // SAFETY: `p.0` is a live probe; `file`'s fd stays open for the probe's whole life
        // (the probe is dropped in `probe` before `file` can be), and offset 0 / size 0
        // mean "the whole device". The flag setters take plain ints.
        unsafe {
            check(
                sys::blkid_probe_set_device(p.0, file.as_raw_fd(), 0, 0),
                "attach the device",
            )?;
            check(
                sys::blkid_probe_enable_superblocks(p.0, 1),
                "enable superblocks",
            )?;
            check(
                sys::blkid_probe_set_superblocks_flags(p.0, sublks),
                "set superblock flags",
            )?;
            check(
                sys::blkid_probe_enable_partitions(p.0, 1),
                "enable partitions",
            )?;
            check(
                sys::blkid_probe_set_partitions_flags(p.0, parts),
                "set partition flags",
            )?;
        }
        Ok(p)
    }

    /// A value of the current match, with its length in bytes (strings count their NUL).
    fn value(&self, name: &str) -> Option<(*const libc::c_char, usize)> {
        let name = CString::new(name).ok()?;
        let mut data: *const libc::c_char = std::ptr::null();
        let mut len: usize = 0;
        // SAFETY: `self.0` is a live probe, `name` is NUL-terminated, and `data`/`len` are
        // writable; libblkid points `data` into the probe's own storage, valid until the
        // next probing call (every caller copies it out before that).
        let rc =
            unsafe { sys::blkid_probe_lookup_value(self.0, name.as_ptr(), &mut data, &mut len) };
        (rc == 0 && !data.is_null()).then_some((data, len))
    }

    fn string(&self, name: &str) -> Option<String> {
        let (data, _) = self.value(name)?;
        // SAFETY: libblkid stores string values NUL-terminated (see `value`).
        let s = unsafe { CStr::from_ptr(data) };
        Some(s.to_string_lossy().into_owned())
    }

    /// The current match, with the byte range of its magic (to hide before probing again).
    fn current(&self) -> Option<(Found, Option<(u64, u64)>)> {
        let (kind, usage, off, magic) = if let Some(t) = self.string("TYPE") {
            let usage = self.string("USAGE").unwrap_or_else(|| "other".into());
            (t, usage, "SBMAGIC_OFFSET", "SBMAGIC")
        } else {
            let t = self.string("PTTYPE")?;
            (t, "partition table".into(), "PTMAGIC_OFFSET", "PTMAGIC")
        };
        let offset = self.string(off).and_then(|o| o.parse::<u64>().ok());
        let len = self.value(magic).map(|(_, l)| l as u64);
        let found = Found {
            kind,
            usage,
            version: self.string("VERSION").filter(|v| !v.is_empty()),
            offset,
        };
        Some((found, offset.zip(len).filter(|(_, l)| *l > 0)))
    }
}

/// Every signature libblkid finds on the device open as `file` (read only).
pub fn probe(file: &File) -> io::Result<Vec<Found>> {
    let p = Probe::new(file)?;
    let mut found: Vec<Found> = Vec::new();
    // Each round finds one signature; a device carries a handful at most. The bound only
    // guards against a probe that keeps reporting the same thing.
    for _ in 0..64 {
        // SAFETY: `p.0` is a live probe attached to an open fd.
        let rc = check(unsafe { sys::blkid_do_probe(p.0) }, "probe")?;
        if rc == 1 {
            break;
        }
        let Some((f, magic)) = p.current() else {
            continue;
        };
        if !found.contains(&f) {
            found.push(f);
        }
        if let Some((off, len)) = magic {
            // As wipefs does: hide this signature and run its prober again, so a second
            // copy (GPT's backup header, another md superblock) is found too.
            // SAFETY: `p.0` is a live probe; the range is plain numbers.
            unsafe {
                check(
                    sys::blkid_probe_hide_range(p.0, off, len),
                    "hide a signature",
                )?;
                check(sys::blkid_probe_step_back(p.0), "step back")?;
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(kind: &str, usage: &str, version: Option<&str>, offset: Option<u64>) -> Found {
        Found {
            kind: kind.into(),
            usage: usage.into(),
            version: version.map(Into::into),
            offset,
        }
    }

    #[test]
    fn summaries_name_what_was_found_and_where() {
        let md = found("linux_raid_member", "raid", Some("1.0"), Some(67100672));
        assert_eq!(summary(&[md]), "an md raid member v1.0 (at byte 67100672)");
        // wipefs lists vfat three times (its magic, the boot jump, 0x55AA): said once.
        let vfat = |o| found("vfat", "filesystem", Some("FAT32"), Some(o));
        assert_eq!(
            summary(&[vfat(82), vfat(0), vfat(510)]),
            "a vfat filesystem (at bytes 0, 82, 510)"
        );
        let gpt = |o| found("gpt", "partition table", None, Some(o));
        let pmbr = found("PMBR", "partition table", None, Some(510));
        let dos = found("dos", "partition table", None, None);
        assert_eq!(
            summary(&[gpt(512), gpt(67108352), pmbr, dos]),
            "a gpt partition table (at bytes 512, 67108352), a PMBR partition table (at byte 510) and a dos (MBR) partition table"
        );
        let luks = found("crypto_LUKS", "crypto", Some("2"), None);
        assert_eq!(summary(&[luks]), "a crypto_LUKS encrypted volume v2");
        let swap = found("swap", "other", Some("1"), None);
        assert_eq!(summary(&[swap]), "a swap signature");
        let ext4 = found("ext4", "filesystem", Some("1.0"), None);
        assert_eq!(summary(&[ext4]), "an ext4 filesystem");
        assert_eq!(summary(&[]), "");
    }

    #[test]
    fn a_zeroed_file_carries_nothing_and_an_ext4_image_does() {
        // libblkid probes regular files as well as devices: real probing, no device needed.
        let d = tempfile::tempdir().unwrap();
        let img = d.path().join("img");
        std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
        assert_eq!(probe(&File::open(&img).unwrap()).unwrap(), vec![]);
        let st = std::process::Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&img)
            .status()
            .expect("mkfs.ext4 (e2fsprogs) is installed");
        assert!(st.success());
        let found = probe(&File::open(&img).unwrap()).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].kind.as_str(), found[0].usage.as_str()),
            ("ext4", "filesystem")
        );
        assert_eq!(
            found[0].offset,
            Some(0x438),
            "ext4's magic sits at 1024 + 0x38"
        );
    }
}
