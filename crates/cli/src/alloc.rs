//! The binary's memory allocator: the system's, with large blocks on transparent huge pages.
//!
//! The simulator's state is a few large arrays (page-table entries, frame metadata, list
//! links, swap slots) that a workload touches at random. In 4 KiB pages, an 8 GiB simulated
//! memory's arrays span thousands of pages, more than the host's TLB maps, so most random
//! accesses also miss the TLB (in a virtual machine, a two-dimensional page walk). Blocks
//! of 2 MiB and more are therefore advised `MADV_HUGEPAGE` as soon as they are allocated,
//! before they are touched, so that a kernel whose transparent huge pages are in `madvise`
//! mode (the common default) backs them with huge pages when they are first written:
//!
//! - a plain block is aligned to 2 MiB (`posix_memalign`), so all of it can be huge;
//! - a zeroed block comes from `calloc`, which maps fresh zero pages without writing them,
//!   and only its 2 MiB-aligned interior is advised: aligning it would mean zeroing it by
//!   hand, touching memory a sparse array (a large swap device's slots) never uses;
//! - a growing block moves to a fresh one instead of being remapped, so that the copy
//!   lands on huge pages;
//! - glibc's threshold for mapping blocks afresh is pinned at 2 MiB, so that they never
//!   come from its heap, whose pages were touched before and stay small.
//!
//! Smaller blocks, and every block on other systems, go to the system allocator unchanged.
//! The hint costs nothing where the kernel ignores it.
//!
//! All this happens only once [`use_huge_pages`] was called, which `swapsim run` does, and
//! `swapsim validate` with one `--case`: one long run keeps its arrays and reads them at
//! random to the end (the B-swapoff case alone: 4,900 minor faults instead of 9,400, a
//! peak of 31 MiB instead of 44, about 3% less time). Commands that run many
//! short simulations side by side (experiments, sweeps, validation) fill fresh arrays run
//! after run, and there fresh mappings and huge-page faults (2 MiB zeroed at a time,
//! compaction) cost more than the TLB saves: an experiment of 32 runs of an 8 GiB guest
//! took 10–15% longer with them.
//!
//! Those commands call [`keep_freed_memory`] instead: a simulation's arrays, freed when it
//! ends, are then kept by glibc for the next one rather than handed back to the kernel and
//! faulted in again (the same experiment: 500,000 minor faults and 1.3 s of system time
//! without, 122,000 and 0.4 s with).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// The size of a huge page: blocks from this size on are put on huge pages.
const HUGE: usize = 2 << 20;

/// Whether large blocks go on huge pages.
static ADVISE: AtomicBool = AtomicBool::new(false);

/// Puts the large blocks allocated from now on on huge pages, and pins glibc's mapping
/// threshold at [`HUGE`].
pub(crate) fn use_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a glibc malloc parameter, and any value is valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, HUGE as libc::c_int);
    }
    ADVISE.store(true, Ordering::Relaxed);
}

/// Keeps memory that is freed for reuse: glibc's trim threshold raised out of reach, so
/// that its heaps never give pages back, and its mapping threshold pinned at its largest
/// (32 MiB), so that blocks below it come from the heaps and return to them when freed.
/// For commands that run many simulations one after another.
pub(crate) fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a glibc malloc parameter, and any value is valid.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

/// The system allocator, with blocks of [`HUGE`] bytes and more on huge pages once
/// [`use_huge_pages`] was called.
pub(crate) struct HugePageAlloc;

/// Whether a block of `layout` goes on huge pages: large, aligned at most to a huge page,
/// on glibc, once [`use_huge_pages`] was called.
fn ours(layout: Layout) -> bool {
    cfg!(all(target_os = "linux", target_env = "gnu"))
        && layout.size() >= HUGE
        && layout.align() <= HUGE
        && ADVISE.load(Ordering::Relaxed)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod huge {
    use super::HUGE;

    /// Advises huge pages for the 2 MiB-aligned part of `[ptr, ptr + size)`.
    fn advise(ptr: *mut u8, size: usize) {
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + size) / HUGE * HUGE;
        if start < end {
            // SAFETY: MADV_HUGEPAGE changes how the kernel backs the range, never its
            // contents; the range lies inside a live block of ours and is page-aligned.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }

    /// A block of `size` bytes aligned to 2 MiB, advised; null on failure.
    pub(super) fn alloc(size: usize) -> *mut u8 {
        let mut ptr: *mut libc::c_void = std::ptr::null_mut();
        // SAFETY: `ptr` is a valid out-pointer; HUGE is a power of two and a multiple of
        // the pointer size, as posix_memalign requires.
        if unsafe { libc::posix_memalign(&mut ptr, HUGE, size) } != 0 {
            return std::ptr::null_mut();
        }
        advise(ptr.cast(), size);
        ptr.cast()
    }

    /// A zeroed block of `size` bytes (calloc's alignment, at least 16), advised; null on
    /// failure.
    pub(super) fn alloc_zeroed(size: usize) -> *mut u8 {
        // SAFETY: calloc has no precondition.
        let ptr: *mut u8 = unsafe { libc::calloc(1, size) }.cast();
        if !ptr.is_null() {
            advise(ptr, size);
        }
        ptr
    }

    /// Frees a large block, allocated here or by `System`: on glibc both are blocks of the
    /// malloc family (malloc, calloc, posix_memalign), which `free` releases whatever their
    /// alignment.
    pub(super) fn free(ptr: *mut u8) {
        // SAFETY: the block came from the malloc family and is freed once.
        unsafe { libc::free(ptr.cast()) }
    }
}

// SAFETY: large blocks (2 MiB and more, alignment at most 2 MiB) come from the malloc
// family, here or through `System`, and go back through `free`; every other block goes to
// `System` and back with the caller's own layout.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if ours(layout) {
            return huge::alloc(layout.size());
        }
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // calloc aligns to 16 bytes; a block aligned more strictly goes to `System`, whose
        // blocks `dealloc` frees alike.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if ours(layout) && layout.align() <= 16 {
            return huge::alloc_zeroed(layout.size());
        }
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Whether or not huge pages were on when it was allocated.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if layout.size() >= HUGE && layout.align() <= HUGE {
            return huge::free(ptr);
        }
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        if !ours(layout) && !ours(new_layout) {
            // SAFETY: the caller's contract is `System`'s.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: a fresh block of the new layout, the overlap copied, the old block freed
        // with its own layout, each through the side its layout names.
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
    fn large_blocks_keep_their_contents_across_growth_and_shrinking() {
        use_huge_pages();
        let mut v: Vec<u64> = Vec::with_capacity(16);
        for i in 0..(3 * HUGE as u64 / 8) {
            v.push(i);
        }
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        if cfg!(all(target_os = "linux", target_env = "gnu")) {
            assert_eq!(v.as_ptr() as usize % HUGE, 0, "a block of {} bytes", v.capacity() * 8);
        }
        v.truncate(10);
        v.shrink_to_fit();
        assert_eq!(v, (0..10).collect::<Vec<u64>>());
        let zeros = vec![0u32; HUGE];
        assert!(zeros.iter().all(|&x| x == 0));
        #[repr(align(64))]
        #[derive(Clone, Copy)]
        struct Line([u8; 64]);
        let lines = vec![Line([0; 64]); HUGE / 32];
        assert!(lines.iter().all(|l| l.0 == [0; 64]));
        assert_eq!(lines.as_ptr() as usize % 64, 0);
    }
}
