//! Folio-level operations of `mm/swapfile.c`: dropping a folio's swap-cache copy
//! (`folio_free_swap`) and swapoff's `unuse_pte`.

use super::frames::flag;
use super::pagetable::{PageId, Pte, PteState};
use super::Mm;
use crate::ids::{Pfn, SwapSlot};

impl Mm {
    /// `folio_free_swap`: drops the swap-cache copy of a mapped folio whose slot no PTE
    /// references; the folio becomes dirty since no other copy exists.
    pub(crate) fn folio_free_swap(&mut self, pfn: Pfn) -> bool {
        let Some(slot) = self.frames.swap_slot(pfn) else { return false };
        let nr = self.frames.nr_pages(pfn);
        if self.frames.test(pfn, flag::LOCKED) || self.folio_writeback(pfn) {
            return false;
        }
        if (0..nr).any(|i| self.swap.count(slot.nth(i)) != 0) {
            return false;
        }
        for i in 0..nr {
            self.swap.cache_delete(slot.nth(i), None);
            self.frames.set_swap_slot(Pfn(pfn.0 + i), None);
        }
        self.frames.set(pfn, flag::DIRTY);
        true
    }

    /// Swapoff's `unuse_pte`: map the folio with an old (not young) PTE, drop the PTE's
    /// reference to the slot and free the slot; the folio is dirty from then on.
    pub(crate) fn unuse_pte(&mut self, page: PageId, pfn: Pfn, slot: SwapSlot) {
        debug_assert_eq!(self.pt.pte(page).state(), PteState::Swap(slot));
        *self.pt.pte_mut(page) = Pte::present(pfn, false, false);
        self.frames.set_owner(pfn, Some(page));
        self.frames.clear(pfn, flag::READAHEAD);
        let busy = self.frames.flags(pfn) & (flag::LOCKED | flag::WRITEBACK) != 0;
        if !busy && self.frames.order(pfn) == 0 && self.frames.swap_slot(pfn) == Some(slot) {
            // The common case, in one step: the folio is the slot's order-0 copy.
            if self.swap.put_cached_order0(slot) {
                self.frames.set_swap_slot(pfn, None);
                self.frames.set(pfn, flag::DIRTY);
            }
        } else {
            self.swap.dec_count(slot);
            self.folio_free_swap(pfn);
        }
        self.spend(self.cfg.cpu.swapin_map_ns);
    }
}
