//! The swap-cache bypass of `do_swap_page` for synchronous devices (6.12–6.18): a fault on
//! zram whose entry has one reference reads straight into a new folio, possibly a large
//! one, without readahead or the swap cache, and frees the slots once the folio is mapped.

use super::charge::{Alloc, OnShortage};
use super::wait::Step;
use super::World;
use crate::block::Bio;
use crate::device::IoDir;
use crate::engine::fault::SwapIn;
use crate::ids::Pfn;
use crate::lru::{Origin, Placement};
use crate::mm::pagetable::{PageId, Pte};
use crate::mm::swap::CacheEntry;
use crate::mm::zswap::{Backend, ReadInto};
use crate::policy::zswap::ZswapSwapin;
use crate::policy::Feedback;
use crate::time::SimTime;

impl World {
    /// Swaps in the folio around `f`'s page from a synchronous device, in this context.
    pub(super) fn swapin_bypass(&mut self, f: SwapIn, start: SimTime) -> Step {
        let SwapIn { t, space, page, region_idx, vpage, slot, write, .. } = f;
        let large = self.alloc_swap_folio(space, region_idx, vpage, slot);
        let (head, first_page, first_slot, order) = match large {
            Some((l, first_slot)) => (l.head, l.first_page, first_slot, l.order),
            None => match self.alloc_frame(t, OnShortage::Wait) {
                Alloc::Got(p) => (p, page, slot, 0),
                Alloc::Wait => return Step::WaitWriteback,
                Alloc::Oom => return Step::Oom,
            },
        };
        let nr = 1u32 << order;
        // The allocation's reclaim may have written pages back from zswap: into the swap
        // cache, or (on a disk, which has no bypass of its own) out of zswap altogether.
        let written_back = |s: crate::ids::SwapSlot| {
            self.mm.swap.cached_frame(s).is_some()
                || (!self.mm.block.is_synchronous(s.device) && self.mm.swap.zswap_entry(s).is_none())
        };
        if (0..nr).any(|i| written_back(first_slot.nth(i))) {
            self.mm.free_frame(head);
            return self.swap_fault(f);
        }
        self.mm.vmstat.pgfault += 1;
        self.mm.vmstat.pgmajfault += 1;
        self.mm.spend(self.mm.cfg.cpu.fault_ns);
        let placement = match self.mm.swap.cache_entry(first_slot) {
            CacheEntry::Shadow(shadow) => {
                let placement = self.lru.refault(&mut self.mm, head, shadow, Origin::Fault);
                let activated = placement == Placement::Active;
                let feedback = Feedback::Refault { space, slot: first_slot, activated, order };
                self.policies.readahead.observe(&feedback);
                self.policies.swapin.observe(&feedback);
                placement
            }
            _ => Placement::Inactive,
        };
        // swap_read_folio: the zero map and zswap first. A large folio is read from zswap
        // only when the policy swaps zswap entries in large, and then every page of it is
        // there (alloc_swap_folio checked); otherwise it is never read from either
        // (alloc_swap_folio keeps order 0 once zswap exists, and refuses mixed zero-map
        // ranges). Not in the swap cache, so a zswap entry stays until the slot is freed
        // below.
        let backend = if order == 0 {
            self.mm.swap_read_backend(slot, head, ReadInto::Bypass)
        } else if self.mm.swap.zswap_entry(first_slot).is_some() {
            for i in 0..nr {
                let got = self.mm.swap_read_backend(first_slot.nth(i), Pfn(head.0 + i), ReadInto::Bypass);
                debug_assert_eq!(got, Backend::Zswap, "a large zswap-in reads only from zswap");
            }
            Backend::Zswap
        } else {
            Backend::Device
        };
        if self.mm.zswap_on() {
            self.mm.zswap.knobs_read = true;
            self.mm.zswap.policy.swapin(ZswapSwapin::new(backend == Backend::Device, true));
            if backend == Backend::Device {
                let at = self.mm.now();
                self.mm
                    .zswap
                    .trigger
                    .observe(crate::policy::zswap_writeback::WritebackEvent::DiskSwapin { at });
            }
        }
        if backend == Backend::Device {
            self.mm.vmstat.pswpin += u64::from(nr);
            self.mm.vmstat.pgpgin += 4 * u64::from(nr);
            self.mm.spend(self.mm.cfg.cpu.swapin_submit_ns);
            // One bio for the whole folio; zram decompresses it page by page.
            let bio = Bio { device: slot.device, dir: IoDir::Read, offset: first_slot.offset, pfn: head };
            self.mm.submit_sync(bio, nr);
        }
        for i in 0..nr {
            let (p, pfn) = (PageId(first_page.0 + i), Pfn(head.0 + i));
            let s = first_slot.nth(i);
            *self.mm.pt.pte_mut(p) = Pte::present(pfn, true, write);
            self.mm.frames.set_owner(pfn, Some(p));
            // swap_free_nr with the claim of swapcache_prepare released: the slot is free.
            self.mm.swap.dec_count(s);
        }
        // Mapped, then added to the LRU, as `do_swap_page` does for a folio outside the
        // swap cache (`folio_add_new_anon_rmap`, then `folio_add_lru_vma`): an LRU that
        // looks at the pages a folio holds finds them.
        self.lru.add(&mut self.mm, head, placement, Origin::Fault);
        self.mm.zswap_sync();
        if order > 0 {
            self.mm.mthp.at(order).swpin += 1;
        }
        self.mm.spend(self.mm.cfg.cpu.swapin_map_ns);
        self.lat_major.record(self.mm.now().since(start).0);
        Step::Done
    }
}
