//! Belady's optimal replacement (`lru = "opt"`): evict the resident page whose next use
//! lies furthest in the future.
//!
//! A reference model, not a kernel policy: it reads the future from the workload. Like the
//! exact LRU (`classic.rs` in its exact mode) it evicts one page per memory-cgroup miss
//! (`Lru::charge_batch` 1), gives no second chance and takes no notice of young bits, so
//! that with `readahead = "none"` its page faults are exactly a textbook Belady cache's
//! misses on the same page sequence and capacity. Eviction still goes through
//! `shrink_folio_list`: swap slots, writeback, shadows and counters are the kernel's.
//!
//! The engine tells the policy, before it handles each access by a task, which page is
//! accessed and when that page is accessed next ([`Lru::next_use`]); the numbers come from
//! the task's access stream ([`crate::AccessSource::next_use`]). The policy remembers the
//! latest next use of every page it has heard of (by `PageId`), of every page held in a
//! frame (by frame), and of every page whose data sits in a swap slot (saved when the
//! page is evicted), because a frame the swap cache adds before it is mapped has no owner
//! page to look up. A page read by swap readahead without being accessed thus keeps the
//! next use of its last access, which is still exact: nothing touched it since.
//!
//! A folio's key is the soonest next use among its pages ("never" counts as the furthest
//! of all). The victim comes from a max-heap of `(key, frame)` with lazy deletion: an
//! entry is current while its frame heads a folio on the list whose key it still equals;
//! other entries are dropped when they reach the top, and the heap is rebuilt from its
//! current entries once it holds more than twice as many entries as there are folios on
//! the list (plus a fixed slack). Each access and each eviction cost O(log n), amortised.
//! Among folios no page of which is used again, the highest frame goes first. A victim
//! that `shrink_folio_list` leaves under writeback goes back under the same key, so the
//! next reclaim takes it again and frees it once its write has completed, as one eviction.
//!
//! Simplified: pages of a large folio never accessed yet count as never used (their first
//! use is not known), so with large folios the policy is not Belady's; a frame added
//! with neither an owner page nor a swap slot (none is today: the swap-cache bypass of a
//! synchronous device maps its folio before adding it) would take the next use of the
//! access being handled. Frames a reclaim meets locked (a read in flight) are
//! passed over for the next candidate, as the kernel's trylock would skip them. With
//! several tasks, next uses count in the trace's order while the engine interleaves the
//! tasks by simulated time, so the policy is then optimal for the trace's order only.

use std::collections::BinaryHeap;

use super::{Fate, Lru, LruSizes, Origin, Placement, ScanControl};
use crate::ids::{Pfn, SwapSlot};
use crate::mm::frames::flag;
use crate::mm::pagetable::{PageId, PteState};
use crate::mm::swap::Shadow;
use crate::mm::vmscan::{FolioReferences, ReclaimHooks};
use crate::mm::Mm;

/// The key of a page that is never used again: the furthest of all.
const NEVER: u64 = u64::MAX;

/// Stale heap entries tolerated beyond twice the folios on the list before a rebuild.
const HEAP_SLACK: usize = 1024;

/// Belady's OPT over the one memory cgroup of the model.
#[derive(Clone, Debug, Default)]
pub(crate) struct OptLru {
    /// Next use of each page, by `PageId`, as of its latest access (`NEVER` before any).
    page_next: Vec<u64>,
    /// Next use of the page held in each frame (tail frames included).
    frame_next: Vec<u64>,
    /// Key of each folio, by head frame: the soonest next use of its pages. Current for
    /// folios on the list and for isolated ones.
    folio_key: Vec<u64>,
    /// Next use of the page whose data is in each swap slot, by device then offset,
    /// saved when the page was evicted (or accessed while swapped out).
    slot_next: Vec<Vec<u64>>,
    /// The next use the engine gave with the access being handled.
    current_next: u64,
    /// `(key, head frame)` of the folios on the list, with stale entries.
    heap: BinaryHeap<(u64, u32)>,
    /// Pages on the list.
    n_pages: u64,
    /// Folios on the list.
    n_folios: u64,
    scratch: Vec<Pfn>,
    skipped: Vec<(u64, u32)>,
    fates: Vec<Fate>,
}

/// Reads `v[i]`, `NEVER` past the end.
fn get(v: &[u64], i: usize) -> u64 {
    v.get(i).copied().unwrap_or(NEVER)
}

/// Writes `v[i]`, growing `v` with `NEVER`.
fn put(v: &mut Vec<u64>, i: usize, value: u64) {
    if i >= v.len() {
        v.resize(i + 1, NEVER);
    }
    v[i] = value;
}

fn key_of(next_use: Option<u64>) -> u64 {
    next_use.unwrap_or(NEVER)
}

impl OptLru {
    fn slot_next(&self, slot: SwapSlot) -> u64 {
        self.slot_next.get(slot.device.0 as usize).map_or(NEVER, |v| get(v, slot.offset as usize))
    }

    fn set_slot_next(&mut self, slot: SwapSlot, value: u64) {
        let dev = slot.device.0 as usize;
        if dev >= self.slot_next.len() {
            self.slot_next.resize_with(dev + 1, Vec::new);
        }
        put(&mut self.slot_next[dev], slot.offset as usize, value);
    }

    /// The next use of the page a frame joining the list holds: its owner's, else its
    /// swap slot's, else the access being handled's (see the module doc).
    fn joining_next(&self, mm: &Mm, pfn: Pfn) -> u64 {
        if let Some(page) = mm.frames.owner(pfn) {
            get(&self.page_next, page.0 as usize)
        } else if let Some(slot) = mm.frames.swap_slot(pfn) {
            self.slot_next(slot)
        } else {
            self.current_next
        }
    }

    /// Copies the next uses of the folio at `head`'s pages to their swap slots, once
    /// reclaim has unmapped them: the slots are what finds the pages again.
    fn save_to_slots(&mut self, mm: &Mm, head: Pfn) {
        if let Some(first) = mm.frames.swap_slot(head) {
            for i in 0..mm.frames.nr_pages(head) {
                let next = get(&self.frame_next, (head.0 + i) as usize);
                self.set_slot_next(first.nth(i), next);
            }
        }
    }

    /// Recomputes the key of the folio at `head` from its pages, and queues it on the
    /// heap if the folio is on the list.
    fn rekey(&mut self, mm: &Mm, head: Pfn) {
        let nr = mm.frames.nr_pages(head);
        let h = head.0 as usize;
        let key = (h..h + nr as usize).map(|i| get(&self.frame_next, i)).min().unwrap_or(NEVER);
        put(&mut self.folio_key, h, key);
        if mm.frames.test(head, flag::LRU) {
            self.heap.push((key, head.0));
            if self.heap.len() > 2 * self.n_folios as usize + HEAP_SLACK {
                self.rebuild(mm);
            }
        }
    }

    /// Whether a heap entry still describes a folio on the list.
    fn is_current(&self, mm: &Mm, (key, pfn): (u64, u32)) -> bool {
        let pfn = Pfn(pfn);
        mm.frames.test(pfn, flag::LRU)
            && mm.frames.is_head(pfn)
            && get(&self.folio_key, pfn.0 as usize) == key
    }

    /// Keeps only the current entries, one per folio.
    fn rebuild(&mut self, mm: &Mm) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.retain(|&e| self.is_current(mm, e));
        entries.sort_unstable();
        entries.dedup();
        self.heap = BinaryHeap::from(entries);
    }

    /// Puts the folio at `pfn` on the list under its current key.
    fn link(&mut self, mm: &mut Mm, pfn: Pfn) {
        debug_assert!(!mm.frames.test(pfn, flag::LRU));
        mm.frames.set(pfn, flag::LRU);
        self.n_pages += u64::from(mm.frames.nr_pages(pfn));
        self.n_folios += 1;
        self.rekey(mm, pfn);
    }

    fn unlink(&mut self, mm: &mut Mm, pfn: Pfn) {
        mm.frames.clear(pfn, flag::LRU);
        self.n_pages -= u64::from(mm.frames.nr_pages(pfn));
        self.n_folios -= 1;
    }

    /// Takes the folios used furthest in the future off the list until `n` pages are
    /// taken, passing over locked ones; returns the pages.
    fn isolate(&mut self, mm: &mut Mm, n: u64) -> u64 {
        self.scratch.clear();
        let mut pages = 0;
        while pages < n {
            let Some(entry) = self.heap.pop() else { break };
            if !self.is_current(mm, entry) {
                continue;
            }
            let pfn = Pfn(entry.1);
            if mm.frames.test(pfn, flag::LOCKED) {
                self.skipped.push(entry);
                continue;
            }
            self.unlink(mm, pfn);
            self.scratch.push(pfn);
            pages += u64::from(mm.frames.nr_pages(pfn));
        }
        self.heap.extend(self.skipped.drain(..));
        pages
    }
}

#[cfg(test)]
impl OptLru {
    /// The next use of the page held in frame `pfn`.
    pub(crate) fn frame_next_use(&self, pfn: Pfn) -> Option<u64> {
        Some(get(&self.frame_next, pfn.0 as usize)).filter(|&n| n != NEVER)
    }

    /// Entries on the heap, stale ones included.
    pub(crate) fn heap_len(&self) -> usize {
        self.heap.len()
    }
}

/// OPT's answers to `shrink_folio_list`: every isolated folio is evicted, whatever its
/// young bits say, and it leaves the classic shadow; its pages' next uses stay with
/// their swap slots, for a later readahead of them.
struct OptReclaimHooks<'a> {
    lru: &'a mut OptLru,
}

impl ReclaimHooks for OptReclaimHooks<'_> {
    fn folio_check_references(&mut self, mm: &mut Mm, pfn: Pfn) -> FolioReferences {
        mm.frames.clear(pfn, flag::REFERENCED);
        FolioReferences::Reclaim
    }

    fn eviction_shadow(&mut self, mm: &mut Mm, pfn: Pfn) -> Shadow {
        self.lru.save_to_slots(mm, pfn);
        mm.workingset_eviction(pfn)
    }
}

impl Lru for OptLru {
    fn add(&mut self, mm: &mut Mm, pfn: Pfn, _placement: Placement, _origin: Origin) {
        for i in 0..mm.frames.nr_pages(pfn) {
            let frame = Pfn(pfn.0 + i);
            let next = self.joining_next(mm, frame);
            put(&mut self.frame_next, frame.0 as usize, next);
        }
        mm.frames.clear(pfn, flag::ACTIVE);
        self.link(mm, pfn);
    }

    fn remove(&mut self, mm: &mut Mm, pfn: Pfn) {
        if mm.frames.test(pfn, flag::LRU) {
            self.unlink(mm, pfn);
        }
    }

    fn split(&mut self, mm: &mut Mm, head: Pfn, nr: u32) {
        // The frames kept their pages' next uses; each page is a folio of its own now,
        // and `Frames::split` gave every one the head's flags, LRU included.
        self.n_folios += u64::from(nr - 1);
        for i in 0..nr {
            self.rekey(mm, Pfn(head.0 + i));
        }
    }

    fn rotate_reclaimable(&mut self, _mm: &mut Mm, _pfn: Pfn) {
        // A written folio stays where its key puts it: the next reclaim finds it first
        // again, now clean, and frees it.
    }

    fn shrink(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        // As in the exact LRU: every folio isolated leaves (freed now, or written and freed
        // by a later pass once clean), so what was scanned counts as evicted.
        let want = sc.nr_to_reclaim.saturating_sub(sc.nr_reclaimed.max(sc.nr_scanned));
        if want == 0 || !mm.can_reclaim_anon() {
            return;
        }
        self.rotate_completed(mm, sc.cpu);
        let scanned = self.isolate(mm, want);
        let mut batch = std::mem::take(&mut self.scratch);
        let mut fates = std::mem::take(&mut self.fates);
        let res = mm.shrink_folio_list(&mut batch, sc, &mut OptReclaimHooks { lru: self }, &mut fates);
        for (&pfn, &fate) in batch.iter().zip(&fates) {
            if fate != Fate::Freed {
                // A folio split by `folio_alloc_swap` comes back page by page; each page
                // keeps its own next use. One left under writeback is unmapped already.
                self.save_to_slots(mm, pfn);
                self.link(mm, pfn);
            }
        }
        sc.nr_scanned += scanned;
        sc.nr_reclaimed += res.reclaimed;
        self.scratch = batch;
        self.fates = fates;
    }

    fn refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow, _origin: Origin) -> Placement {
        // Counted as the classic lists count it; there is no active list to return to.
        mm.workingset_refault(pfn, shadow, 0);
        Placement::Inactive
    }

    fn sizes(&self) -> LruSizes {
        LruSizes { inactive_anon: self.n_pages, active_anon: 0 }
    }

    fn charge_batch(&self) -> u64 {
        1
    }

    fn charges_page_tables(&self) -> bool {
        false
    }

    fn tracks_accesses(&self) -> bool {
        true
    }

    fn wants_next_uses(&self) -> bool {
        true
    }

    fn next_use(&mut self, mm: &mut Mm, page: PageId, next_use: Option<u64>) {
        let next = key_of(next_use);
        self.current_next = next;
        put(&mut self.page_next, page.0 as usize, next);
        let pfn = match mm.pt.pte(page).state() {
            PteState::Present(pfn) => pfn,
            PteState::Swap(slot) => {
                self.set_slot_next(slot, next);
                match mm.swap.cached_frame(slot) {
                    Some(pfn) => pfn,
                    None => return,
                }
            }
            PteState::None | PteState::Zero => return,
        };
        put(&mut self.frame_next, pfn.0 as usize, next);
        self.rekey(mm, mm.frames.head(pfn));
    }

    #[cfg(test)]
    fn as_opt(&self) -> Option<&OptLru> {
        Some(self)
    }

    fn check_invariants(&self, mm: &Mm) {
        let mut entries: Vec<(u64, u32)> = self.heap.iter().copied().collect();
        entries.sort_unstable();
        let (mut pages, mut folios) = (0u64, 0u64);
        for head in mm.frames.folios().filter(|&p| mm.frames.test(p, flag::LRU)) {
            let h = head.0;
            let nr = mm.frames.nr_pages(head);
            assert!(!mm.frames.test(head, flag::ACTIVE), "opt: frame {h} flagged active");
            let mglru_bits = flag::LRU_GEN_MASK | flag::LRU_REFS_MASK;
            assert!(!mm.frames.test(head, mglru_bits), "opt: frame {h} has MGLRU bits");
            let key = get(&self.folio_key, h as usize);
            let soonest = (h..h + nr).map(|i| get(&self.frame_next, i as usize)).min().unwrap_or(NEVER);
            assert_eq!(key, soonest, "opt: folio {h}: key vs its pages' next uses");
            assert!(entries.binary_search(&(key, h)).is_ok(), "opt: folio {h} on the list has no heap entry");
            for frame in h..h + nr {
                let next = get(&self.frame_next, frame as usize);
                match (mm.frames.owner(Pfn(frame)), mm.frames.swap_slot(Pfn(frame))) {
                    (Some(page), _) => {
                        let page_next = get(&self.page_next, page.0 as usize);
                        assert_eq!(next, page_next, "opt: frame {frame} vs its page");
                    }
                    // A swap-cache page not mapped since it was read: what its slot kept.
                    (None, Some(slot)) => {
                        assert_eq!(next, self.slot_next(slot), "opt: frame {frame} vs its slot")
                    }
                    (None, None) => {}
                }
            }
            pages += u64::from(nr);
            folios += 1;
        }
        assert_eq!(pages, self.n_pages, "opt: pages on the list");
        assert_eq!(folios, self.n_folios, "opt: folios on the list");
        assert!(self.heap.len() <= 2 * folios as usize + HEAP_SLACK + 1, "opt: heap not rebuilt");
    }
}
