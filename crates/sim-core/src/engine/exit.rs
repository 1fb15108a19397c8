//! Process exit: `exit_mm` and `exit_mmap`, tearing down an address space when the last
//! task using it ends or is OOM-killed.
//!
//! `exit_mmap` walks every PTE of the space, as `unmap_vmas` → `zap_pte_range` does, and
//! releases what each one holds:
//!
//! - a present page: the mapping goes (`folio_remove_rmap_pte`), and the folio is freed
//!   with its swap-cache copy, if it kept one, unless I/O holds it;
//! - a swap entry: the slot loses its reference (`free_swap_and_cache`); a folio that
//!   only the swap cache still holds is dropped with the slot, unless I/O holds it;
//! - the zero page or nothing: nothing to release.
//!
//! Then the space's page tables are freed and uncharged (`free_pgtables`).
//!
//! A folio under writeback or locked for a read in flight cannot be freed now, in the
//! kernel as here (`__try_to_reclaim_swap` needs the folio lock and no writeback): it stays
//! in the swap cache, on the LRU, mapped by nobody, and reclaim frees it when it next
//! reaches it.
//!
//! Simplified: the teardown costs no simulated CPU time. Every frame holds one order-0
//! folio at this commit, so the walk releases one page at a time.
//!
//! FIXME: the page-table chunks of an exited space stay allocated, zeroed, because the
//! dense PTE store (mm/pagetable.rs) has no free list yet; a long job queue therefore
//! costs the host 8 bytes per page any job ever touched.

use super::task::TaskState;
use super::World;
use crate::ids::{Pfn, SpaceId, TaskId};
use crate::lru::{Origin, Placement};
use crate::mm::frames::flag;
use crate::mm::pagetable::{Pte, PteState};

impl World {
    /// `exit_mm`: task `t` has ended and drops its use of its address space; the last
    /// user tears the space down. A task that has not started yet still counts as a user,
    /// as a thread created by the process would. Returns the PTEs the teardown released
    /// (0 when another task still uses the space).
    pub(super) fn exit_mm(&mut self, t: TaskId) -> u64 {
        let space = self.tasks[t].space;
        let in_use = self.tasks.iter().enumerate().any(|(u, task)| {
            u != t.index()
                && task.space == space
                && task.is_user()
                && !matches!(task.state, TaskState::Done | TaskState::Killed)
        });
        if in_use {
            return 0;
        }
        self.exit_mmap(space)
    }

    /// `exit_mmap`: releases every page of address space `space`. Its PTEs are left
    /// empty; frames, swap references and swap-cache-only folios are released as the
    /// module documentation describes. Returns how many PTEs mapped a page or held a swap
    /// entry.
    pub(super) fn exit_mmap(&mut self, space: SpaceId) -> u64 {
        let mut released = 0;
        for page in self.mm.pt.space_pages(space) {
            match self.mm.pt.pte(page).state() {
                PteState::Present(pfn) => {
                    self.mm.frames.set_owner(pfn, None);
                    self.drop_unmapped(pfn);
                    released += 1;
                }
                PteState::Swap(slot) => {
                    self.mm.swap.dec_count(slot);
                    if let Some(pfn) = self.mm.swap.cached_frame(slot) {
                        self.drop_unmapped(pfn);
                    }
                    released += 1;
                }
                PteState::None | PteState::Zero => {}
            }
            *self.mm.pt.pte_mut(page) = Pte::default();
        }
        // free_pgtables: the space's page tables go, and their charge with them.
        let tables = self.mm.pt.take_table_pages(space);
        self.mm.uncharge(tables);
        released
    }

    /// Frees an unmapped folio unless I/O holds it; reclaim drops the rest later.
    pub(super) fn drop_unmapped(&mut self, pfn: Pfn) {
        // A page of a large folio is dropped with its folio, once none of its pages is mapped.
        let head = self.mm.frames.head(pfn);
        let nr = self.mm.frames.nr_pages(head);
        if (0..nr).any(|i| self.mm.frames.owner(Pfn(head.0 + i)).is_some()) {
            return;
        }
        if self.mm.frames.test(head, flag::LOCKED) || self.mm.folio_writeback(head) {
            return;
        }
        self.lru.remove(&mut self.mm, head);
        if let Some(slot) = self.mm.frames.swap_slot(head) {
            if (0..nr).any(|i| self.mm.swap.count(slot.nth(i)) > 0) {
                // Another reference keeps a slot; leave the folio cached.
                self.lru.add(&mut self.mm, head, Placement::Inactive, Origin::Other);
                return;
            }
            for i in 0..nr {
                self.mm.swap.cache_delete(slot.nth(i), None);
                self.mm.frames.set_swap_slot(Pfn(head.0 + i), None);
            }
        }
        self.mm.free_frame(head);
    }
}
