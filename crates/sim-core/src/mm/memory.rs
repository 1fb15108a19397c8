//! The end of `do_swap_page` (`mm/memory.c`): mapping a swapped-in folio.

use super::frames::flag;
use super::pagetable::{PageId, Pte, PteState};
use super::Mm;
use crate::ids::{Pfn, SwapSlot};

impl Mm {
    /// Maps a swap-cache folio from `page` after its read completed (end of
    /// `do_swap_page`), freeing the slot when the kernel would. A large folio is mapped
    /// whole: its pages from `page` on, its slots from `slot` on.
    pub(crate) fn map_swapped(&mut self, page: PageId, pfn: Pfn, slot: SwapSlot, write: bool) {
        let nr = self.frames.nr_pages(pfn);
        for i in 0..nr {
            let (p, f) = (PageId(page.0 + i), Pfn(pfn.0 + i));
            let s = slot.nth(i);
            debug_assert_eq!(self.pt.pte(p).state(), PteState::Swap(s));
            *self.pt.pte_mut(p) = Pte::present(f, true, write);
            self.frames.set_owner(f, Some(p));
            self.swap.dec_count(s);
        }
        self.frames.clear(pfn, flag::READAHEAD);
        // should_try_to_free_swap: swap is getting full, or a write fault on an exclusive
        // folio (its slot copy is about to be stale).
        if self.swap.vm_swap_full() || write {
            self.folio_free_swap(pfn);
        }
        self.spend(self.cfg.cpu.swapin_map_ns);
    }
}
