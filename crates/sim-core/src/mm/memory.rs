//! The end of `do_swap_page` (`mm/memory.c`): mapping a swapped-in folio.

use super::frames::flag;
use super::pagetable::{PageId, Pte, PteState};
use super::Mm;
use crate::ids::{Pfn, SwapSlot};

impl Mm {
    /// Maps a swap-cache folio at `page` after its read completed (end of
    /// `do_swap_page`), freeing the slot when the kernel would.
    pub(crate) fn map_swapped(&mut self, page: PageId, pfn: Pfn, slot: SwapSlot, write: bool) {
        debug_assert_eq!(self.pt.pte(page).state(), PteState::Swap(slot));
        *self.pt.pte_mut(page) = Pte::present(pfn, true, write);
        self.frames.set_owner(pfn, Some(page));
        self.frames.clear(pfn, flag::READAHEAD);
        self.swap.dec_count(slot);
        // should_try_to_free_swap: swap is getting full, or a write fault on an exclusive
        // folio (its slot copy is about to be stale).
        if self.swap.vm_swap_full() || write {
            self.folio_free_swap(pfn);
        }
        self.spend(self.cfg.cpu.swapin_map_ns);
    }
}
