//! The I/O buffer pool: every buffer any I/O uses (io_uring or psync, plain or under a
//! layout, the pre-fill too) comes from one pool per job, laid out so that each buffer is
//! physically contiguous whatever the block size and queue depth.
//!
//! Why: on a virtio disk (and behind any IOMMU or a device with few DMA segments) an I/O
//! costs per physically separate page it touches. Buffers on 4 KiB pages made the measured
//! figures follow how iogauge's memory happened to be allocated: 16k random reads ran at
//! half of what the same device did for huge-page buffers, and a calibration's 1 MiB curve
//! jumped where its buffers crossed 2 MiB (`../shared/notes/buffer-memory.md`). A database
//! keeps its buffer cache on huge pages (Oracle's SGA, PostgreSQL's `huge_pages`), so that
//! is also the memory whose I/O iogauge should measure.
//!
//! `--mem hugepage` (the default): the pool is 2 MiB-aligned anonymous memory on
//! transparent huge pages (`MADV_HUGEPAGE`, then `MADV_COLLAPSE` if the fault did not get
//! them), else the hugetlbfs pool (`MAP_HUGETLB`, when `vm.nr_hugepages` has free pages);
//! buffers of up to 2 MiB are packed so that none straddles a huge page, larger ones start
//! on a huge page. What the pool really got is read back from `/proc/self/smaps`
//! (`AnonHugePages`), and a pool that could not get huge pages falls back to 4 KiB pages and
//! says so in [`PoolInfo::fallback`]. `--mem page`: 4 KiB pages (`MADV_NOHUGEPAGE`), buffers
//! back to back, physically wherever the kernel put them: fio's default `mem=malloc`.

use iogauge_model::iopath::{HugeSource, MemMode, PoolInfo};
use std::io;

/// A base page.
pub const PAGE: usize = 4096;
/// A huge page (x86-64 and arm64 with 4 KiB base pages).
pub const HUGE: usize = 2 << 20;

/// Where each buffer sits in the pool: pure arithmetic, so it is tested on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Bytes of one buffer (a whole number of pages; of huge pages above 2 MiB).
    pub slot: usize,
    /// Buffers per unit, a unit being the memory one buffer group may not straddle.
    per_unit: usize,
    unit: usize,
    /// Bytes of the whole pool.
    pub len: usize,
}

impl Geometry {
    pub fn new(slots: usize, bytes: usize, mode: MemMode) -> Geometry {
        let slots = slots.max(1);
        let page_rounded = bytes.max(1).div_ceil(PAGE) * PAGE;
        let (slot, per_unit, unit) = match mode {
            MemMode::Page => (page_rounded, 1, page_rounded),
            MemMode::Hugepage if page_rounded <= HUGE => (page_rounded, HUGE / page_rounded, HUGE),
            MemMode::Hugepage => {
                let s = page_rounded.div_ceil(HUGE) * HUGE;
                (s, 1, s)
            }
        };
        Geometry {
            slot,
            per_unit,
            unit,
            len: slots.div_ceil(per_unit) * unit,
        }
    }

    /// Byte offset of buffer `i` from the pool's start.
    pub fn offset(&self, i: usize) -> usize {
        (i / self.per_unit) * self.unit + (i % self.per_unit) * self.slot
    }
}

/// One job's buffers. Freed (unmapped) on drop; a ring that registered them must be dropped
/// first.
pub struct BufPool {
    /// The mapping as made (its start and length, for munmap).
    map: *mut u8,
    map_len: usize,
    /// The aligned start of the buffers.
    base: *mut u8,
    geo: Geometry,
    slots: usize,
    info: PoolInfo,
}

// SAFETY: the pool is plain owned memory with no thread affinity. Workers each use a
// disjoint set of its buffers (`Slots`), and the kernel only touches a buffer while the
// worker that owns it has an I/O in flight on it.
unsafe impl Send for BufPool {}
// SAFETY: as above; shared references only hand out raw pointers to disjoint buffers.
unsafe impl Sync for BufPool {}

/// `madvise(2)` advice to collapse a range into huge pages now (Linux 6.1+; the libc crate
/// has it for glibc targets only).
const MADV_COLLAPSE: i32 = 25;

impl BufPool {
    /// `slots` buffers of `bytes` each (rounded up to whole pages), zeroed.
    pub fn new(slots: usize, bytes: usize, mode: MemMode) -> io::Result<BufPool> {
        let geo = Geometry::new(slots, bytes, mode);
        let slots = slots.max(1);
        let mut info = PoolInfo {
            mem: mode,
            huge: None,
            buffers: slots as u32,
            buffer_bytes: bytes as u64,
            pool_bytes: geo.len as u64,
            huge_bytes: 0,
            fallback: None,
        };
        if mode == MemMode::Page {
            let (map, map_len, base) = anon(geo.len, PAGE, libc::MADV_NOHUGEPAGE)?;
            return Ok(BufPool {
                map,
                map_len,
                base,
                geo,
                slots,
                info,
            });
        }
        let (map, map_len, base) = anon(geo.len, HUGE, libc::MADV_HUGEPAGE)?;
        let mut pool = BufPool {
            map,
            map_len,
            base,
            geo,
            slots,
            info: info.clone(),
        };
        let mut huge = pool.huge_bytes_now();
        if huge < geo.len as u64 {
            // The fault found no free huge page at once (or THP is off): ask the kernel to
            // compact and collapse now. Independent of the THP sysfs mode.
            // SAFETY: the range is this pool's own mapping; madvise only changes its backing.
            unsafe { libc::madvise(base.cast(), geo.len, MADV_COLLAPSE) };
            huge = pool.huge_bytes_now();
        }
        if huge >= geo.len as u64 {
            pool.info.huge = Some(HugeSource::Thp);
            pool.info.huge_bytes = geo.len as u64;
            return Ok(pool);
        }
        if let Ok((map, map_len)) = hugetlb(geo.len) {
            drop(pool);
            info.huge = Some(HugeSource::Hugetlbfs);
            info.huge_bytes = geo.len as u64;
            return Ok(BufPool {
                map,
                map_len,
                base: map,
                geo,
                slots,
                info,
            });
        }
        // Not every buffer is contiguous: `mem` says hugepage only for a whole pool, so a
        // partly huge pool is recorded as page memory with its huge share in huge_bytes.
        pool.info.mem = MemMode::Page;
        pool.info.huge = (huge > 0).then_some(HugeSource::Thp);
        pool.info.huge_bytes = huge;
        pool.info.fallback = Some(fallback_reason(huge, geo.len as u64));
        Ok(pool)
    }

    /// Huge-page bytes of the pool's range right now, from /proc/self/smaps.
    fn huge_bytes_now(&self) -> u64 {
        std::fs::read_to_string("/proc/self/smaps")
            .map(|s| anon_huge_bytes(&s, self.base as usize, self.geo.len))
            .unwrap_or(0)
    }

    pub fn info(&self) -> &PoolInfo {
        &self.info
    }

    /// How many buffers the pool holds.
    pub fn count(&self) -> usize {
        self.slots
    }

    /// Bytes of each buffer.
    pub fn buf_len(&self) -> usize {
        self.geo.slot
    }

    /// Buffer `i`.
    pub fn ptr(&self, i: usize) -> *mut u8 {
        assert!(i < self.slots, "buffer {i} of {}", self.slots);
        // SAFETY: offset(i) + slot <= geo.len for i < slots, inside the mapping.
        unsafe { self.base.add(self.geo.offset(i)) }
    }

    /// Buffers `first .. first + n` for one worker.
    pub fn slots(&self, first: usize, n: usize) -> Slots<'_> {
        assert!(
            first + n <= self.slots,
            "buffers {first}+{n} of {}",
            self.slots
        );
        Slots {
            pool: self,
            first,
            n,
        }
    }
}

/// A worker's share of the pool: buffers it alone uses.
pub struct Slots<'a> {
    pool: &'a BufPool,
    first: usize,
    n: usize,
}

impl Slots<'_> {
    /// How many buffers this worker has.
    pub fn count(&self) -> usize {
        self.n
    }

    pub fn buf_len(&self) -> usize {
        self.pool.buf_len()
    }

    /// This worker's buffer `i`.
    #[inline]
    pub fn ptr(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.n);
        self.pool.ptr(self.first + i)
    }

    /// Fills every buffer with pseudo-random bytes: incompressible and not deduplicable.
    pub fn fill_random(&self, rng: &mut impl rand_core::RngCore) {
        for i in 0..self.n {
            // SAFETY: the buffer is inside the pool and only this worker uses it; no I/O is
            // in flight on it yet (called before the worker's first I/O).
            let b = unsafe { std::slice::from_raw_parts_mut(self.ptr(i), self.buf_len()) };
            rng.fill_bytes(b);
        }
    }

    /// One iovec per buffer, for `io_uring_register(2)` IORING_REGISTER_BUFFERS.
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.n)
            .map(|i| libc::iovec {
                iov_base: self.ptr(i).cast(),
                iov_len: self.buf_len(),
            })
            .collect()
    }
}

impl Drop for BufPool {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in `new` with exactly this start and length.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// Anonymous memory of `len` bytes starting on an `align` boundary, advised with `advice`
/// and touched (zeroed) so its pages exist: returns (mapping, mapping length, aligned start).
fn anon(len: usize, align: usize, advice: i32) -> io::Result<(*mut u8, usize, *mut u8)> {
    let map_len = len + align - PAGE;
    // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let map = map.cast::<u8>();
    let base = (map as usize).div_ceil(align) * align;
    // SAFETY: base - map < align, so [base, base + len) lies inside the mapping.
    let base = unsafe { map.add(base - map as usize) };
    // SAFETY: the range is inside our mapping; advice only changes how it is backed, and
    // failure (THP compiled out) leaves ordinary pages, which the caller detects.
    unsafe { libc::madvise(base.cast(), len, advice) };
    // SAFETY: [base, base + len) is writable memory we own.
    unsafe { std::ptr::write_bytes(base, 0, len) };
    Ok((map, map_len, base))
}

/// `len` bytes from the hugetlbfs pool, touched; fails when it has too few free pages.
fn hugetlb(len: usize) -> io::Result<(*mut u8, usize)> {
    // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | libc::MAP_POPULATE,
            -1,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok((map.cast(), len))
}

/// Why a pool asked for huge pages got fewer.
fn fallback_reason(huge: u64, len: u64) -> String {
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "not built into this kernel".into());
    let why = format!(
        "transparent huge pages gave {} of {} MiB (THP: {thp}; memory may be too fragmented for free 2 MiB pages) and the hugetlbfs pool had too few free pages (vm.nr_hugepages)",
        huge >> 20,
        len >> 20
    );
    format!("{why}: buffers on 4 KiB pages, so results depend on where memory happened to be; free some memory or reserve huge pages (`echo N > /proc/sys/vm/nr_hugepages`), or choose this with --mem page")
}

/// `AnonHugePages` of the mappings in an smaps text that overlap `[addr, addr + len)`,
/// capped at `len` (a mapping that reaches past the range may hold huge pages elsewhere).
pub(crate) fn anon_huge_bytes(smaps: &str, addr: usize, len: usize) -> u64 {
    let end = addr + len;
    let mut inside = false;
    let mut total = 0u64;
    for line in smaps.lines() {
        if let Some((lo, hi)) = mapping_range(line) {
            inside = lo < end && addr < hi;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(v) = line.strip_prefix("AnonHugePages:") {
            let kb: u64 = v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            total += kb * 1024;
        }
    }
    total.min(len as u64)
}

/// The address range of an smaps mapping header line (`7f..-7f.. rw-p 00000000 00:00 0`).
fn mapping_range(line: &str) -> Option<(usize, usize)> {
    let (range, _) = line.split_once(' ')?;
    let (a, b) = range.split_once('-')?;
    Some((
        usize::from_str_radix(a, 16).ok()?,
        usize::from_str_radix(b, 16).ok()?,
    ))
}

#[cfg(test)]
mod tests;
