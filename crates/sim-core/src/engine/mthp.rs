//! Large folios on the fault path (mm/memory.c): `alloc_anon_folio` for anonymous faults
//! and `alloc_swap_folio` for swap-ins on synchronous devices.
//!
//! Both pick the largest order the kernel's conditions allow and fall back order by order
//! when the allocation or the memory cgroup charge fails. A large folio is allocated with
//! the region's THP gfp mask, which for a region without `MADV_HUGEPAGE` under the default
//! `defrag` setting neither reclaims nor wakes kswapd: the charge succeeds only if the
//! cgroup has room for the whole folio below its limit (what the folios, and the page
//! tables charged before them, left), and the allocation only above the low watermark.
//! Order 0 is the caller's ordinary, reclaiming path.
//!
//! Simplified: the `defrag` setting and `MADV_HUGEPAGE`'s direct compaction are not
//! modelled (large allocations never reclaim); the zero map is not modelled, so the
//! same-zero-state condition of a large swap-in always holds; userfaultfd does not exist.

use super::wait::SwapinBy;
use super::World;
use crate::ids::{Pfn, SpaceId, SwapSlot, VirtPage};
use crate::mm::pagetable::{PageId, PteState};
use crate::policy::swapin::SwapinView;
use crate::thp::{OrderMask, MIN_ANON_ORDER, PMD_ORDER};

/// Why a large folio could not be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LargeFail {
    /// The page allocator refused (below the low watermark, or no memory).
    Alloc,
    /// The memory cgroup charge failed (no room below the limit without reclaim), or the
    /// swap-in size policy refused it.
    Charge,
}

/// A large folio taken for a fault: its head frame, order, and first PTE.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LargeFolio {
    pub(crate) head: Pfn,
    pub(crate) order: u8,
    pub(crate) first_page: PageId,
}

/// The orders of `allowed` whose aligned range around the fault was found, highest first,
/// each with its range's start.
fn ranged_orders<T: Copy>(
    ranges: &[Option<T>; PMD_ORDER as usize + 1],
    allowed: OrderMask,
) -> impl Iterator<Item = (u8, T)> + '_ {
    orders_desc(allowed).filter_map(|order| ranges[order as usize].map(|first| (order, first)))
}

/// The orders of `mask` from the highest down.
pub(crate) fn orders_desc(mask: OrderMask) -> impl Iterator<Item = u8> {
    (MIN_ANON_ORDER..=PMD_ORDER).rev().filter(move |o| mask & (1 << o) != 0)
}

impl World {
    /// Takes `2^order` charged frames without reclaiming.
    pub(super) fn alloc_large(&mut self, order: u8) -> Result<Pfn, LargeFail> {
        let nr = 1u64 << order;
        let free = self.mm.frames.free_pages();
        if free < nr || free - nr <= self.mm.wmark.low {
            return Err(LargeFail::Alloc);
        }
        if self.mm.memcg_limit().is_some_and(|limit| self.mm.memcg_usage() + nr > limit) {
            return Err(LargeFail::Charge);
        }
        let pfn = self.mm.frames.alloc_folio(order).ok_or(LargeFail::Alloc)?;
        self.mm.charge(nr);
        Ok(pfn)
    }

    /// `alloc_anon_folio`: for a write fault on an untouched PTE, the largest allowed
    /// order whose aligned range lies in the region with every PTE still none, then the
    /// allocation from that order down (`anon_fault_alloc`, `anon_fault_fallback`,
    /// `anon_fault_fallback_charge`). `None` means order 0.
    pub(super) fn alloc_anon_folio(
        &mut self,
        space: SpaceId,
        region_idx: usize,
        vpage: VirtPage,
    ) -> Option<LargeFolio> {
        let allowed = self.mm.pt.spaces[space.index()].regions[region_idx].orders;
        if allowed == 0 {
            return None;
        }
        let mut mask = 0;
        let mut ranges = [None; PMD_ORDER as usize + 1];
        for order in orders_desc(allowed) {
            let Some((_, first)) = self.mm.pt.folio_range(space, region_idx, vpage, order) else { continue };
            ranges[order as usize] = Some(first);
            if mask == 0
                && (0..1u32 << order).all(|i| self.mm.pt.pte(PageId(first.0 + i)).state() == PteState::None)
            {
                mask = allowed & ((2 << order) - 1);
            }
        }
        // Every order below one whose range fits has a range (aligned ranges nest).
        for (order, first_page) in ranged_orders(&ranges, mask) {
            match self.alloc_large(order) {
                Ok(head) => {
                    self.mm.mthp.at(order).anon_fault_alloc += 1;
                    return Some(LargeFolio { head, order, first_page });
                }
                Err(fail) => {
                    let s = self.mm.mthp.at(order);
                    s.anon_fault_fallback += 1;
                    if fail == LargeFail::Charge {
                        s.anon_fault_fallback_charge += 1;
                    }
                }
            }
        }
        None
    }

    /// `alloc_swap_folio` for a swap fault taking the synchronous-device bypass: the orders
    /// allowed for the region, whose aligned range lies in it, where the virtual page and
    /// the swap offset agree modulo the folio size (`thp_swap_suitable_orders`); the
    /// highest whose PTEs are consecutive swap entries of one device, none of them in the
    /// swap cache (`can_swapin_thp`); then the swap-in size policy's choice, allocated from
    /// the highest down with the fallback counters. Never when zswap's pool was ever
    /// created in this boot, unless the policy swaps zswap entries in large
    /// ([`crate::SwapinSize::zswap_large`]), and then only ranges wholly in zswap.
    /// `None` means order 0; otherwise the folio and its first slot.
    pub(super) fn alloc_swap_folio(
        &mut self,
        space: SpaceId,
        region_idx: usize,
        vpage: VirtPage,
        slot: SwapSlot,
    ) -> Option<(LargeFolio, SwapSlot)> {
        let allowed = self.mm.pt.spaces[space.index()].regions[region_idx].orders;
        let zswap = self.mm.cfg.zswap.pool_created();
        if allowed == 0 || (zswap && !self.policies.swapin.zswap_large()) {
            return None;
        }
        let mut candidates = 0;
        let mut ranges = [None; PMD_ORDER as usize + 1];
        for order in orders_desc(allowed) {
            let nr = 1u64 << order;
            if vpage.0 % nr != u64::from(slot.offset) % nr {
                continue;
            }
            let Some((first_v, first)) = self.mm.pt.folio_range(space, region_idx, vpage, order) else {
                continue;
            };
            let first_off = slot.offset - (vpage.0 - first_v.0) as u32;
            ranges[order as usize] = Some((first, first_off));
            if candidates == 0
                && self.can_swapin_thp(first, slot, first_off, order)
                && (!zswap || self.all_in_zswap(slot, first_off, order))
            {
                candidates = allowed & ((2 << order) - 1);
            }
        }
        if candidates == 0 {
            return None;
        }
        let mask = self.policies.swapin.orders(&SwapinView::new(candidates)) & candidates;
        for (order, (first_page, first_off)) in ranged_orders(&ranges, mask) {
            let got = if self.policies.swapin.may_charge(order) {
                self.alloc_large(order)
            } else {
                Err(LargeFail::Charge)
            };
            match got {
                Ok(head) => {
                    let first_slot = SwapSlot { device: slot.device, offset: first_off };
                    return Some((LargeFolio { head, order, first_page }, first_slot));
                }
                Err(fail) => {
                    let s = self.mm.mthp.at(order);
                    s.swpin_fallback += 1;
                    if fail == LargeFail::Charge {
                        s.swpin_fallback_charge += 1;
                    }
                }
            }
        }
        None
    }

    /// `zswap_present_test` of the RFC: every slot of the range has a zswap entry.
    fn all_in_zswap(&self, target: SwapSlot, first_off: u32, order: u8) -> bool {
        (0..1u32 << order).all(|i| {
            let s = SwapSlot { device: target.device, offset: first_off }.nth(i);
            self.mm.swap.zswap_entry(s).is_some()
        })
    }

    /// `can_swapin_thp`: the `2^order` PTEs from `first` hold consecutive swap entries of
    /// `target`'s device starting at `first_off`, each referenced once and none cached.
    fn can_swapin_thp(&self, first: PageId, target: SwapSlot, first_off: u32, order: u8) -> bool {
        (0..1u32 << order).all(|i| {
            let s = SwapSlot { device: target.device, offset: first_off }.nth(i);
            self.mm.pt.pte(PageId(first.0 + i)).state() == PteState::Swap(s)
                && self.mm.swap.count(s) == 1
                && self.mm.swap.cached_frame(s).is_none()
        })
    }
}

impl World {
    /// A swap-cache hit on `pfn`, the frame caching `slot` for the PTE `page`: for a page
    /// of a large folio, the folio is mapped whole when every PTE of its range still names
    /// its slots (do_swap_page maps an entire large folio found in the swap cache);
    /// otherwise, and always for swapoff, it is split first. Returns the frame, PTE and
    /// slot the mapping starts at.
    pub(super) fn prepare_cached_large(
        &mut self,
        pfn: Pfn,
        page: PageId,
        slot: SwapSlot,
        by: SwapinBy,
    ) -> (Pfn, PageId, SwapSlot) {
        let order = self.mm.frames.order(pfn);
        if order == 0 {
            return (pfn, page, slot);
        }
        let head = self.mm.frames.head(pfn);
        let idx = pfn.0 - head.0;
        let nr = 1u32 << order;
        let chunk_pos = page.0 % crate::mm::pagetable::CHUNK_PAGES as u32;
        if by == SwapinBy::Fault
            && chunk_pos >= idx
            && chunk_pos - idx + nr <= crate::mm::pagetable::CHUNK_PAGES as u32
        {
            let first = PageId(page.0 - idx);
            let whole = (0..nr).all(|i| {
                let s = self.mm.frames.swap_slot(Pfn(head.0 + i));
                s.is_some_and(|s| self.mm.pt.pte(PageId(first.0 + i)).state() == PteState::Swap(s))
            });
            if let Some(first_slot) = self.mm.frames.swap_slot(head).filter(|_| whole) {
                return (head, first, first_slot);
            }
        }
        self.split_folio(head);
        (pfn, page, slot)
    }

    /// `split_folio`: a large folio becomes `2^order` order-0 folios that keep their frames,
    /// PTEs, swap slots and per-page writeback state; on an LRU list they sit next to the
    /// head. Counts the size's `split`.
    pub(super) fn split_folio(&mut self, head: Pfn) {
        let on_lru = self.mm.frames.test(head, crate::mm::frames::flag::LRU);
        let nr = self.mm.split_folio(head);
        if on_lru {
            self.lru.split(&mut self.mm, head, nr);
        }
    }
}
