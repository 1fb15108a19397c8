//! The binary's memory allocator: the system's, with large blocks on transparent huge pages.
//!
//! The simulator's state is a few large arrays (page-table entries, frame metadata, swap
//! slots) that a workload touches at random. In 4 KiB pages, an 8 GiB simulated memory's
//! arrays span thousands of pages, more than the host's TLB maps, so most random accesses
//! also miss the TLB (in a virtual machine, a two-dimensional page walk). Blocks of 2 MiB
//! and more are therefore aligned to 2 MiB and advised `MADV_HUGEPAGE` before anything
//! touches them, so that a kernel whose transparent huge pages are in `madvise` mode (the
//! common default) backs them with huge pages. Where the kernel refuses, nothing changes
//! but the alignment. Smaller blocks go to the system allocator unchanged.

use std::alloc::{GlobalAlloc, Layout, System};

/// The size from which a block is put on huge pages, and their alignment.
const HUGE: usize = 2 << 20;

/// The system allocator, with blocks of [`HUGE`] bytes and more aligned and advised.
pub(crate) struct HugePageAlloc;

/// The layout a block of `layout` is really allocated with.
fn actual(layout: Layout) -> Layout {
    if layout.size() < HUGE {
        return layout;
    }
    Layout::from_size_align(layout.size(), layout.align().max(HUGE)).unwrap_or(layout)
}

/// Asks the kernel for huge pages under `[ptr, ptr + size)`; only a hint.
fn advise(ptr: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: madvise with MADV_HUGEPAGE changes how the kernel backs this range, never its
    // contents or validity; the range is a live allocation of ours, aligned to 2 MiB.
    unsafe {
        libc::madvise(ptr.cast(), size, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, size);
}

// SAFETY: every block comes from `System` with the layout `actual` computes, and goes back
// to it with the same layout, which depends only on the caller's layout.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let actual = actual(layout);
        // SAFETY: the caller's layout has a non-zero size, and `actual` keeps it.
        let ptr = unsafe { System.alloc(actual) };
        if !ptr.is_null() && actual.size() >= HUGE {
            advise(ptr, actual.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let actual = actual(layout);
        if actual.size() < HUGE {
            // SAFETY: as for `alloc`.
            return unsafe { System.alloc_zeroed(actual) };
        }
        // Advise first, then zero: the writes fault the block in on huge pages.
        // SAFETY: as for `alloc`; the block is `actual.size()` bytes long.
        unsafe {
            let ptr = System.alloc(actual);
            if !ptr.is_null() {
                advise(ptr, actual.size());
                std::ptr::write_bytes(ptr, 0, actual.size());
            }
            ptr
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `alloc` or `alloc_zeroed` with `actual(layout)`.
        unsafe { System.dealloc(ptr, actual(layout)) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.size() < HUGE && new_size < HUGE {
            // SAFETY: both layouts are the caller's own, as `System` expects them.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: a fresh block, the overlap copied, the old block freed with its layout.
        unsafe {
            let new = self.alloc(new_layout);
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_are_aligned_and_keep_their_contents_across_growth() {
        let mut v: Vec<u64> = Vec::with_capacity(16);
        for i in 0..(3 * HUGE as u64 / 8) {
            v.push(i);
        }
        assert_eq!(v.as_ptr() as usize % HUGE, 0, "a block of {} bytes", v.capacity() * 8);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        v.truncate(10);
        v.shrink_to_fit();
        assert_eq!(v, (0..10).collect::<Vec<u64>>());
        let zeros = vec![0u32; HUGE];
        assert_eq!(zeros.as_ptr() as usize % HUGE, 0);
        assert!(zeros.iter().all(|&x| x == 0));
    }
}
