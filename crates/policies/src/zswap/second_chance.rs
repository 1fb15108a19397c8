//! The second-chance scheme of Linux 6.12 and later: Nhat Pham's 2024 commits "zswap:
//! implement a second chance algorithm for dynamic zswap shrinker" and "zswap: track
//! swapins from disk more accurately", which replaced the decaying protected count.
//!
//! * Every stored entry starts with its referenced bit set.
//! * A visit to a referenced entry clears the bit and rotates the entry to the young end
//!   (its second chance); a visit to an unreferenced one writes it back. So an entry
//!   survives at least one full pass of the shrinker over the LRU.
//! * Each page read from the swap device counts as a disk swap-in (`nr_disk_swapins`):
//!   `zswap_folio_swapin` moved into `swap_read_folio`, after the zero-map and zswap
//!   lookups have missed, so readahead neighbours count and zswap hits do not. A swap-in
//!   from the disk is a sign that the shrinker wrote back too eagerly.
//! * The count subtracts the disk swap-ins seen since the previous count from the LRU
//!   size and consumes them; what exceeds the LRU carries over to the next count. The
//!   rest is scaled by the compression ratio.
//! * The scan has no protection check of its own.
//!
//! Simplified: the model has one lruvec (one memory cgroup on one node), so one swap-in
//! counter. The kernel consumes it with a compare-and-exchange loop so that concurrent
//! counts share it; the single-threaded simulation updates it directly.

use swapsim_core::{ZswapLruView, ZswapProtection, ZswapSwapin, ZswapVisit};

/// Gives each entry one rotation and holds back one count's worth of entries per disk
/// swap-in (6.12+).
#[derive(Clone, Copy, Debug, Default)]
pub struct SecondChanceProtection {
    nr_disk_swapins: u64,
}

impl SecondChanceProtection {
    /// Disk swap-ins not yet consumed by a count (`nr_disk_swapins`).
    pub fn disk_swapins(&self) -> u64 {
        self.nr_disk_swapins
    }
}

impl ZswapProtection for SecondChanceProtection {
    fn name(&self) -> &'static str {
        "second-chance"
    }

    /// New entries start referenced.
    fn stored(&mut self, _lru_size: u64) -> bool {
        true
    }

    /// Counts a page read from the swap device, target or neighbour.
    fn swapin(&mut self, swapin: ZswapSwapin) {
        if swapin.from_disk {
            self.nr_disk_swapins += 1;
        }
    }

    /// The LRU less the pending disk swap-ins (which this consumes, up to the LRU's size),
    /// scaled by the pool's memory per stored page. An empty LRU consumes nothing.
    fn count(&mut self, lru: &ZswapLruView) -> u64 {
        if lru.lru_size == 0 {
            return 0;
        }
        let used = self.nr_disk_swapins.min(lru.lru_size);
        self.nr_disk_swapins -= used;
        let nr_freeable = lru.lru_size - used;
        if nr_freeable == 0 {
            return 0;
        }
        lru.scale(nr_freeable)
    }

    /// Rotates and clears a referenced entry; writes back an unreferenced one.
    fn visit(&mut self, referenced: &mut bool) -> ZswapVisit {
        if *referenced {
            *referenced = false;
            ZswapVisit::Rotate
        } else {
            ZswapVisit::Writeback
        }
    }
}
