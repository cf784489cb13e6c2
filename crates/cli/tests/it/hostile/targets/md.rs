//! Row 2 of issue #14: md RAID members, whose superblocks v1.0 and v0.90 sit at the END of
//! the device. There is no md driver (and so no `mdadm --create`) in the test kernel, so the
//! superblocks are built here from the on-disk format, and `blkid -p` confirms in each test
//! that the real libblkid sees a linux_raid_member of the right version.

use super::{image, refused_untouched};
use crate::common::{shared, workdir};
use std::path::Path;

/// md's magic (include/uapi/linux/raid/md_p.h, MD_SB_MAGIC).
const MD_SB_MAGIC: u32 = 0xa92b_4efc;

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// A version-1 superblock (struct mdp_superblock_1 in md_p.h, little-endian) of a member of a
/// two-disk RAID 1, with `sb_csum` computed as the kernel's calc_sb_1_csum does.
fn md_sb1(super_offset: u64, data_offset: u64, data_size: u64) -> Vec<u8> {
    let max_dev: u32 = 2;
    let mut sb = vec![0u8; 1024];
    put32(&mut sb, 0, MD_SB_MAGIC);
    put32(&mut sb, 4, 1); // major_version
    sb[16..32].copy_from_slice(b"iogauge-test-set"); // set_uuid
    sb[32..44].copy_from_slice(b"iogauge:test"); // set_name
    put64(&mut sb, 64, 1_700_000_000); // ctime
    put32(&mut sb, 72, 1); // level: raid1
    put64(&mut sb, 80, data_size); // size, sectors
    put32(&mut sb, 92, 2); // raid_disks
    put64(&mut sb, 128, data_offset); // data_offset, sectors
    put64(&mut sb, 136, data_size); // data_size, sectors
    put64(&mut sb, 144, super_offset); // super_offset, sectors
    sb[168..184].copy_from_slice(b"iogauge-test-dev"); // device_uuid
    put64(&mut sb, 192, 1_700_000_000); // utime
    put64(&mut sb, 200, 1); // events
    put64(&mut sb, 208, u64::MAX); // resync_offset: in sync
    put32(&mut sb, 220, max_dev);
    sb[256..258].copy_from_slice(&0u16.to_le_bytes()); // dev_roles[0]: this disk, role 0
    sb[258..260].copy_from_slice(&1u16.to_le_bytes());
    // calc_sb_1_csum: 32-bit words over 256 + 2 * max_dev bytes with sb_csum (216) as 0,
    // the 64-bit sum folded once.
    let size = 256 + 2 * max_dev as usize;
    let sum: u64 = sb[..size]
        .chunks(4)
        .map(|w| u64::from(u32::from_le_bytes(w.try_into().unwrap())))
        .sum();
    put32(&mut sb, 216, ((sum & 0xffff_ffff) + (sum >> 32)) as u32);
    sb
}

/// A version-0.90 superblock (mdp_super_t in md_p.h, 4 KiB, host order: little-endian here)
/// with the data before it, and `sb_csum` (word 38) as the kernel's calc_sb_csum computes it.
fn md_sb090(data_kib: u32) -> Vec<u8> {
    let mut sb = vec![0u8; 4096];
    let words: [(usize, u32); 11] = [
        (0, MD_SB_MAGIC),
        (1, 0),              // major_version
        (2, 90),             // minor_version
        (5, 0x1234_5678),    // set_uuid0
        (6, 1_700_000_000),  // ctime
        (7, 1),              // level: raid1
        (8, data_kib),       // size, KiB
        (9, 2),              // nr_disks
        (10, 2),             // raid_disks
        (32, 1_700_000_000), // utime
        (34, 2),             // active_disks
    ];
    for (w, v) in words {
        put32(&mut sb, 4 * w, v);
    }
    let sum: u64 = sb
        .chunks(4)
        .map(|w| u64::from(u32::from_le_bytes(w.try_into().unwrap())))
        .sum();
    put32(&mut sb, 4 * 38, ((sum & 0xffff_ffff) + (sum >> 32)) as u32);
    sb
}

fn write_at(img: &Path, at: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(img).unwrap();
    f.write_all_at(bytes, at).unwrap();
}

// Row 2: md v1.0 keeps its superblock at the end: (sectors - 16) & ~7, as mdadm places it.
#[test]
fn md_v1_0_member_is_refused_and_untouched() {
    let _g = shared();
    let d = workdir();
    let img = image(d.path(), "md10.img", 64);
    let sectors = (64u64 << 20) / 512;
    let sb_at = (sectors - 16) & !7;
    write_at(&img, sb_at * 512, &md_sb1(sb_at, 0, sb_at - 8));
    refused_untouched(
        &img,
        &["TYPE=linux_raid_member", "VERSION=1.0"],
        &format!("an md raid member v1.0 (at byte {})", sb_at * 512),
    );
}

// Row 2: md v0.90 sits 64 KiB below the device's size rounded down to 64 KiB.
#[test]
fn md_v0_90_member_is_refused_and_untouched() {
    let _g = shared();
    let d = workdir();
    // Not a multiple of 64 KiB, so the rounding matters.
    let img = d.path().join("md090.img");
    let size = (64u64 << 20) + 40 * 1024;
    std::fs::File::create(&img).unwrap().set_len(size).unwrap();
    let sb_at = (size & !0xffff) - 0x10000;
    write_at(&img, sb_at, &md_sb090((sb_at / 1024) as u32));
    refused_untouched(
        &img,
        &["TYPE=linux_raid_member", "VERSION=0.90.0"],
        &format!("an md raid member v0.90.0 (at byte {sb_at})"),
    );
}

// Row 2: md v1.2 at 4 KiB from the start (the old table knew this one; libblkid must too).
#[test]
fn md_v1_2_member_is_refused_and_untouched() {
    let _g = shared();
    let d = workdir();
    let img = image(d.path(), "md12.img", 64);
    let sectors = (64u64 << 20) / 512;
    write_at(&img, 4096, &md_sb1(8, 2048, sectors - 2048));
    refused_untouched(
        &img,
        &["TYPE=linux_raid_member", "VERSION=1.2"],
        "an md raid member v1.2 (at byte 4096)",
    );
}
