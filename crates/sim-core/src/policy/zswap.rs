//! The zswap protection family: which compressed entries the shrinker writes back to the
//! swap device, and how many it offers to write.
//!
//! zswap keeps its entries on an LRU per memory cgroup, oldest first. Two writers take
//! from it: the memory-pressure shrinker (`zswap_shrinker_count` / `zswap_shrinker_scan`,
//! called by reclaim through `shrink_slab` when `shrinker_enabled` is set) and the
//! pool-limit worker (`shrink_worker`). Both visit entries from the old end and hand each
//! one to `shrink_memcg_cb`. How the shrinker protects warm entries changed in 6.12:
//!
//! - 6.8–6.11 protected a number of entries at the young end (`nr_zswap_protected`),
//!   grown by stores and swap-ins and decayed when above a quarter of the LRU;
//! - 6.12+ gives each entry a referenced bit set at store: the first visit clears it and
//!   rotates the entry (its second chance), the second writes it back; swap-ins from the
//!   disk are subtracted from the next count.
//!
//! A policy of this family answers the four questions where the two differ. The core owns
//! the LRU, the entries' referenced bits, the writeback itself and the shrinker's
//! `do_shrink_slab` arithmetic (batches, deferral, priority scaling).

use std::fmt::Debug;

/// What the shrinker knows when it counts or scans one memory cgroup's zswap LRU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ZswapLruView {
    /// Entries on the LRU (`list_lru_shrink_count`).
    pub lru_size: u64,
    /// Pages of pool memory the cgroup's entries take (`MEMCG_ZSWAP_B >> PAGE_SHIFT`).
    pub nr_backing: u64,
    /// Pages stored (`MEMCG_ZSWAPPED`).
    pub nr_stored: u64,
}

impl ZswapLruView {
    /// A view of an LRU of `lru_size` entries whose `nr_stored` pages take `nr_backing`
    /// pages of pool.
    pub fn new(lru_size: u64, nr_backing: u64, nr_stored: u64) -> ZswapLruView {
        ZswapLruView { lru_size, nr_backing, nr_stored }
    }

    /// `mult_frac(n, nr_backing, nr_stored)`: `n` scaled by the pool's memory per stored
    /// page, so that the better zswap compresses, the fewer entries are offered.
    pub fn scale(&self, n: u64) -> u64 {
        if self.nr_stored == 0 {
            return 0;
        }
        (u128::from(n) * u128::from(self.nr_backing) / u128::from(self.nr_stored)) as u64
    }
}

/// What a swap-in read, as zswap's protection hears it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ZswapSwapin {
    /// The page was read from the swap device (neither a zero-map page nor a zswap hit).
    pub from_disk: bool,
    /// The page is the one the fault asked for (the readahead pivot), not a neighbour.
    pub target: bool,
}

impl ZswapSwapin {
    /// A swap-in of the faulting page (`target`) or a neighbour, from the disk or not.
    pub fn new(from_disk: bool, target: bool) -> ZswapSwapin {
        ZswapSwapin { from_disk, target }
    }
}

/// What the shrinker does with one visited entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZswapVisit {
    /// Move it to the young end and leave it in the pool (`LRU_ROTATE`).
    Rotate,
    /// Move it to the young end and write it back to the swap device.
    Writeback,
}

/// A zswap protection policy.
///
/// Implementors are `Clone` (a `#[derive(Clone)]` does): a simulation copies its policies
/// and devices when it is forked ([`crate::Simulation::fork`]).
pub trait ZswapProtection: Debug + Send + dyn_clone::DynClone {
    /// Name for reports.
    fn name(&self) -> &'static str;
    /// An entry was added to the LRU (`zswap_lru_add`); `lru_size` counts it. Returns
    /// the entry's initial referenced bit.
    fn stored(&mut self, lru_size: u64) -> bool;
    /// A page was swapped in (`zswap_folio_swapin`'s call sites differ by version, so the
    /// policy hears every swap-in read and picks).
    fn swapin(&mut self, _swapin: ZswapSwapin) {}
    /// `zswap_shrinker_count`: how many objects the memory-pressure shrinker may scan.
    fn count(&mut self, lru: &ZswapLruView) -> u64;
    /// Whether `zswap_shrinker_scan` may walk `nr_to_scan` entries now; `false` is
    /// `SHRINK_STOP` before any visit. Default yes.
    fn may_scan(&mut self, _lru: &ZswapLruView, _nr_to_scan: u64) -> bool {
        true
    }
    /// `shrink_memcg_cb` for one entry with the given referenced bit, which the policy
    /// may clear.
    fn visit(&mut self, referenced: &mut bool) -> ZswapVisit;
    /// A writeback the policy asked for failed and the entry stayed in the pool.
    fn writeback_failed(&mut self) {}
}

dyn_clone::clone_trait_object!(ZswapProtection);

/// Write back every visited entry, offering the whole LRU scaled by the compression
/// ratio: the built-in policy of the core, with no protection at all.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProtection;

impl ZswapProtection for NoProtection {
    fn name(&self) -> &'static str {
        "none"
    }
    fn stored(&mut self, _lru_size: u64) -> bool {
        false
    }
    fn count(&mut self, lru: &ZswapLruView) -> u64 {
        lru.scale(lru.lru_size)
    }
    fn visit(&mut self, _referenced: &mut bool) -> ZswapVisit {
        ZswapVisit::Writeback
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_is_mult_frac_in_wide_arithmetic() {
        let v = ZswapLruView::new(1000, 5, 10);
        assert_eq!(v.scale(1000), 500);
        assert_eq!(v.scale(7), 3);
        let big = ZswapLruView::new(0, u64::MAX / 4, u64::MAX / 2);
        assert_eq!(big.scale(10), 4);
        assert_eq!(ZswapLruView::new(3, 0, 0).scale(3), 0);
    }

    #[test]
    fn no_protection_writes_back_whatever_it_visits() {
        let mut p = NoProtection;
        let mut r = true;
        assert!(!p.stored(1));
        assert_eq!(p.visit(&mut r), ZswapVisit::Writeback);
        assert_eq!(p.count(&ZswapLruView::new(100, 1, 2)), 50);
    }
}
