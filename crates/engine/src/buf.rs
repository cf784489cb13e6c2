//! Page-aligned I/O buffers (O_DIRECT needs the buffer aligned to the logical block size;
//! 4 KiB covers every device iogauge meets).

use rand_core::RngCore;
use std::alloc::{alloc, dealloc, Layout};

pub const BUF_ALIGN: usize = 4096;
/// Size (and alignment) of a transparent huge page on x86-64.
const HUGE: usize = 2 << 20;

/// A heap buffer aligned to 4 KiB, owned and freed by this type.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is plain owned memory with no thread affinity; access goes through
// `&`/`&mut` borrows, so the usual aliasing rules apply.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (rounded up to the alignment).
    ///
    /// Buffers of 2 MiB and more are aligned to 2 MiB and asked to be backed by transparent
    /// huge pages before they are touched. Why: a 1 MiB I/O into 4 KiB pages needs 256
    /// segments, and a device with fewer (virtio-blk here allows 254) splits every such
    /// I/O in two, which cost 20-30% of 1 MiB sequential throughput against fio.
    pub fn new(len: usize) -> Self {
        let len = len.max(1).div_ceil(BUF_ALIGN) * BUF_ALIGN;
        let align = if len >= HUGE { HUGE } else { BUF_ALIGN };
        let layout = Layout::from_size_align(len, align).expect("valid buffer layout");
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        if align == HUGE {
            // SAFETY: the range is the allocation just made; madvise only sets a hint on it.
            // Failure (THP disabled) leaves ordinary pages, which is fine.
            unsafe { libc::madvise(ptr.cast(), len, libc::MADV_HUGEPAGE) };
        }
        // SAFETY: `ptr` is valid for `len` writable bytes.
        unsafe { std::ptr::write_bytes(ptr, 0, len) };
        AlignedBuf { ptr, layout }
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len()` initialised (zeroed at allocation) bytes we own.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len()) }
    }

    /// Fills the buffer with pseudo-random bytes: incompressible and not deduplicable.
    pub fn fill_random(&mut self, rng: &mut impl RngCore) {
        rng.fill_bytes(self.as_mut_slice());
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with exactly this layout and not freed elsewhere.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn aligned_and_random() {
        let mut b = AlignedBuf::new(10_000);
        assert_eq!(b.as_slice().as_ptr() as usize % BUF_ALIGN, 0);
        assert_eq!(b.len(), 12_288);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.fill_random(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1));
        let zeros = b.as_slice().iter().filter(|&&x| x == 0).count();
        assert!(zeros < 200, "random fill left {zeros} zero bytes");
    }
}
