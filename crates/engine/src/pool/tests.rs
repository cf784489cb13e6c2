//! The pool's geometry, its smaps reading, and (as root) the physical contiguity of every
//! buffer, read back from /proc/self/pagemap.

use super::*;
use std::os::unix::fs::FileExt;

#[test]
fn geometry_packs_buffers_inside_huge_pages() {
    // 8k × 64: 256 per huge page, one huge page.
    let g = Geometry::new(64, 8192, MemMode::Hugepage);
    assert_eq!((g.slot, g.len), (8192, HUGE));
    assert_eq!(g.offset(63), 63 * 8192);
    // 768k: two per huge page, the third starts on the next one (never straddles).
    let g = Geometry::new(3, 768 << 10, MemMode::Hugepage);
    assert_eq!(g.offset(1), 768 << 10);
    assert_eq!(g.offset(2), HUGE);
    assert_eq!(g.len, 2 * HUGE);
    // 3 MiB: rounded to two huge pages each, each starting on one.
    let g = Geometry::new(2, 3 << 20, MemMode::Hugepage);
    assert_eq!((g.slot, g.offset(1), g.len), (4 << 20, 4 << 20, 8 << 20));
    // Odd sizes round up to pages; page mode packs back to back.
    let g = Geometry::new(3, 5000, MemMode::Page);
    assert_eq!((g.slot, g.offset(2), g.len), (8192, 16384, 24576));
    for (n, bs) in [
        (1, 512),
        (32, 4096),
        (64, 16384),
        (7, 1 << 20),
        (5, 2 << 20),
    ] {
        let g = Geometry::new(n, bs, MemMode::Hugepage);
        for i in 0..n {
            let (a, b) = (g.offset(i), g.offset(i) + g.slot - 1);
            assert_eq!(a / HUGE, b / HUGE, "{n} × {bs}: buffer {i} straddles");
            assert!(b < g.len);
        }
    }
}

const SMAPS: &str = "\
55d1c8a00000-55d1c8a21000 rw-p 00000000 00:00 0                          [heap]
Size:                132 kB
AnonHugePages:         0 kB
7f1200000000-7f1200800000 rw-p 00000000 00:00 0 
Size:               8192 kB
Rss:                8192 kB
AnonHugePages:      6144 kB
THPeligible:    1
VmFlags: rd wr mr mw me ac sd hg 
7f1200800000-7f1200a00000 rw-p 00000000 00:00 0 
AnonHugePages:      2048 kB
";

#[test]
fn smaps_huge_bytes_of_a_range() {
    assert_eq!(anon_huge_bytes(SMAPS, 0x7f12_0000_0000, 8 << 20), 6 << 20);
    // Overlapping two mappings: both count, capped at the range.
    assert_eq!(anon_huge_bytes(SMAPS, 0x7f12_0000_0000, 9 << 20), 8 << 20);
    assert_eq!(anon_huge_bytes(SMAPS, 0x7f12_0000_0000, 2 << 20), 2 << 20);
    assert_eq!(anon_huge_bytes(SMAPS, 0x1000, 4096), 0, "no mapping there");
    assert_eq!(anon_huge_bytes("", 0x1000, 4096), 0);
}

/// Physical frame numbers of the pages of `[addr, addr + len)`; needs CAP_SYS_ADMIN (root)
/// for the kernel to show them (others read zeros).
fn frames(addr: usize, len: usize) -> Vec<u64> {
    let f = std::fs::File::open("/proc/self/pagemap").expect("open /proc/self/pagemap");
    (addr..addr + len)
        .step_by(PAGE)
        .map(|p| {
            let mut b = [0u8; 8];
            f.read_exact_at(&mut b, (p / PAGE * 8) as u64)
                .expect("read pagemap");
            let v = u64::from_ne_bytes(b);
            assert!(v >> 63 == 1, "page {p:#x} not present");
            v & ((1 << 55) - 1)
        })
        .collect()
}

#[test]
fn every_buffer_is_physically_contiguous() {
    assert_eq!(
        // SAFETY: geteuid(2) has no preconditions.
        unsafe { libc::geteuid() },
        0,
        "this test reads physical addresses from /proc/self/pagemap: run the tests as root"
    );
    for (n, bs) in [
        (32, 4096),
        (64, 8192),
        (32, 16384),
        (64, 65536),
        (8, 1 << 20),
        (2, 4 << 20),
    ] {
        let pool = BufPool::new(n, bs, MemMode::Hugepage).expect("pool");
        let info = pool.info();
        assert_eq!(info.mem, MemMode::Hugepage, "{n} × {bs}: {info:?}");
        assert_eq!(info.huge_bytes, info.pool_bytes, "{n} × {bs}");
        for i in 0..n {
            let f = frames(pool.ptr(i) as usize, pool.buf_len());
            assert!(f[0] != 0, "physical addresses hidden: not root?");
            let breaks = f.windows(2).filter(|w| w[1] != w[0] + 1).count();
            // A buffer above 2 MiB spans whole huge pages; each of them is contiguous.
            let allowed = pool.buf_len().div_ceil(HUGE) - 1;
            assert!(
                breaks <= allowed,
                "{n} × {bs}: buffer {i} has {breaks} breaks"
            );
            if pool.buf_len() <= HUGE {
                assert_eq!(breaks, 0, "{n} × {bs}: buffer {i}");
            }
        }
    }
}

#[test]
fn page_mode_stays_on_small_pages() {
    let pool = BufPool::new(16, 65536, MemMode::Page).expect("pool");
    let info = pool.info();
    assert_eq!(
        (info.mem, info.huge, info.huge_bytes),
        (MemMode::Page, None, 0)
    );
    assert_eq!(info.fallback, None);
    assert_eq!(pool.huge_bytes_now(), 0, "MADV_NOHUGEPAGE honoured");
    assert_eq!(pool.ptr(1) as usize - pool.ptr(0) as usize, 65536);
}

#[test]
fn slots_fill_and_register_only_their_own_buffers() {
    use rand::SeedableRng;
    let pool = BufPool::new(4, 8192, MemMode::Hugepage).expect("pool");
    let mine = pool.slots(2, 2);
    mine.fill_random(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1));
    // SAFETY: slot i's buffer is 8192 bytes of the pool, alive for the whole test.
    let bytes = |i: usize| unsafe { std::slice::from_raw_parts(pool.ptr(i), 8192) };
    assert!(
        bytes(0).iter().all(|&b| b == 0),
        "another worker's buffer untouched"
    );
    let zeros = bytes(3).iter().filter(|&&b| b == 0).count();
    assert!(zeros < 200, "random fill left {zeros} zero bytes");
    let iov = mine.iovecs();
    assert_eq!(iov.len(), 2);
    assert_eq!(iov[0].iov_base as usize, pool.ptr(2) as usize);
    assert_eq!(iov[1].iov_len, 8192);
}
