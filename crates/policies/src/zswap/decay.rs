//! The decaying protected count of Linux 6.8–6.11 (`nr_zswap_protected`), from the
//! shrinker's introduction ("zswap: shrink zswap pool based on memory pressure", merged
//! for 6.8) until 6.12 replaced it with a referenced bit per entry.
//!
//! Each lruvec keeps an estimate of how many entries at the young end of its zswap LRU
//! are still warm:
//!
//! * a store adds one, then halves the estimate if it now exceeds a quarter of the LRU
//!   (the decay keeps it bounded and lets it follow a changing workload);
//! * a swap-in of the faulting page adds one. This happened in the readahead functions
//!   behind `swapin_readahead`, and (after a fix in February 2024, "mm/swap_state: update
//!   zswap LRU's protection range with the folio locked") only when a new folio was
//!   allocated for the faulting page and read, whether zswap or the disk then supplied
//!   it; readahead neighbours never counted;
//! * the count offers the LRU minus the estimate, scaled by the compression ratio;
//! * a scan stops before any visit when the estimate reaches what the batch would leave
//!   on the LRU, so that concurrent reclaimers do not eat into the protected region;
//! * every visited entry is written back. In 6.9–6.11 the callback first rotated it to
//!   the young end, only so that a racing reclaimer would not visit it again; in 6.8 it
//!   took the entry off the LRU and put it back if the writeback failed.
//!
//! Simplified: the model has one lruvec (one memory cgroup on one node), so one estimate.
//! The kernel's atomic compare-and-exchange loop around the decay is a plain update here,
//! as the simulation is single-threaded. A fault on a `SWP_SYNCHRONOUS_IO` device that
//! skips the swap cache never went through `swapin_readahead` and so did not grow the
//! estimate; this policy cannot tell that path apart and counts whatever swap-in the
//! engine reports as the target.

use swapsim_core::{ZswapLruView, ZswapProtection, ZswapSwapin, ZswapVisit};

/// Protects a decaying number of entries at the young end of the LRU (6.8–6.11).
#[derive(Clone, Copy, Debug, Default)]
pub struct DecayProtection {
    protected: u64,
}

impl DecayProtection {
    /// The current estimate of protected entries (`nr_zswap_protected`).
    pub fn protected(&self) -> u64 {
        self.protected
    }
}

impl ZswapProtection for DecayProtection {
    fn name(&self) -> &'static str {
        "decay"
    }

    /// Grows the estimate by one, then halves it if it exceeds a quarter of `lru_size`
    /// (which counts the new entry). Entries carry no referenced bit in this scheme.
    fn stored(&mut self, lru_size: u64) -> bool {
        self.protected += 1;
        if self.protected > lru_size / 4 {
            self.protected /= 2;
        }
        false
    }

    /// Grows the estimate by one for the faulting page, wherever it was read from.
    fn swapin(&mut self, swapin: ZswapSwapin) {
        if swapin.target {
            self.protected += 1;
        }
    }

    /// The entries beyond the estimate, scaled by the pool's memory per stored page.
    fn count(&mut self, lru: &ZswapLruView) -> u64 {
        let nr_freeable = lru.lru_size.saturating_sub(self.protected);
        lru.scale(nr_freeable)
    }

    /// Stops when the estimate is at least `lru_size - nr_to_scan`. The kernel computes
    /// that difference in unsigned arithmetic, so a batch larger than the LRU wraps it to
    /// a huge value and the scan goes ahead; a batch exactly the LRU's size leaves zero
    /// and always stops. Both are reproduced.
    fn may_scan(&mut self, lru: &ZswapLruView, nr_to_scan: u64) -> bool {
        self.protected < lru.lru_size.wrapping_sub(nr_to_scan)
    }

    /// Always writes back.
    fn visit(&mut self, _referenced: &mut bool) -> ZswapVisit {
        ZswapVisit::Writeback
    }

    /// Grows the estimate by one. In 6.8 an entry whose writeback failed went back on the
    /// LRU through `zswap_lru_putback`, which also added one to the estimate to account
    /// for the rotation. 6.9 dropped that increment ("mm/zswap: fix race between lru
    /// writeback and swapoff"); the model keeps the 6.8 behaviour for the whole range.
    fn writeback_failed(&mut self) {
        self.protected += 1;
    }
}
