//! Asking the host CPU to start loading memory the simulator will read soon.
//!
//! The simulator's per-page state is dense arrays indexed by page, frame and swap slot,
//! and the workloads it replays touch them at random: much of its host time goes to
//! cache misses rather than to instructions. Where the next indices are known in advance
//! (accesses read ahead of the one simulated), a prefetch lets those misses overlap the
//! work in between. A prefetch changes nothing the program computes.

/// Hints that `item` will be read soon. A no-op on hosts without a prefetch instruction.
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is a hint: it never faults and has no effect the program can
    // observe; the address comes from a live reference besides.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            (item as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}
