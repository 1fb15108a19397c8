//! The page-table walks and their Bloom filter: aging's walk of every address space
//! (`walk_mm`, `walk_pte_range`), reclaim's look-around from a young PTE the rmap walk
//! found (`lru_gen_look_around`), the sweep of PTEs both share, and the filter through
//! which look-around tells the next aging which PTE tables are worth walking.

use super::gens::Join;
use super::{folio_gen, gen_of, Gens, MIN_LRU_BATCH, YOUNG_PER_LINE};
use crate::ids::Pfn;
use crate::mm::pagetable::{PageId, CHUNK_PAGES};
use crate::mm::Mm;

/// How a young folio a sweep finds is promoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Promote {
    /// With a walk context (aging; kswapd's look-around): its generation in the flags
    /// moves to the youngest (`folio_update_gen`) and its list catches up in eviction.
    InPlace,
    /// Without one (look-around in direct or memory-cgroup reclaim): on the second
    /// detection it moves to the youngest generation's list (`folio_activate`).
    Activate,
}

impl Gens {
    fn filter_test(&self, seq: u64, chunk: u32) -> bool {
        match &self.filters[(seq % 2) as usize] {
            None => true,
            Some(bits) => bits.get((chunk / 64) as usize).is_some_and(|w| w >> (chunk % 64) & 1 != 0),
        }
    }

    fn filter_add(&mut self, seq: u64, chunk: u32) {
        if let Some(bits) = &mut self.filters[(seq % 2) as usize] {
            let w = (chunk / 64) as usize;
            if bits.len() <= w {
                bits.resize(w + 1, 0);
            }
            bits[w] |= 1 << (chunk % 64);
        }
    }

    /// `reset_bloom_filter`: empties (first creating) the filter of `seq`.
    fn filter_reset(&mut self, seq: u64) {
        match &mut self.filters[(seq % 2) as usize] {
            Some(bits) => bits.iter_mut().for_each(|w| *w = 0),
            f @ None => *f = Some(Vec::new()),
        }
    }

    /// `walk_update_folio`: a young folio found by the page-table walk or look-around,
    /// promoted to generation `gen` as `promote` says.
    fn walk_update(&mut self, mm: &mut Mm, pfn: Pfn, gen: usize, promote: Promote) {
        match promote {
            Promote::InPlace => {
                if self.update_gen(mm, pfn, gen) {
                    self.aging.promoted += 1;
                }
            }
            Promote::Activate => {
                if Self::set_refs(mm, pfn) && folio_gen(mm, pfn).is_some_and(|old| old != gen) {
                    self.del_folio(mm, pfn);
                    self.add_folio(mm, pfn, Join::Active);
                    mm.vmstat.pgactivate += u64::from(mm.frames.nr_pages(pfn));
                    self.aging.activated += 1;
                }
            }
        }
    }

    /// Clears the young bits of the PTEs `[lo, hi)` and updates their folios (the loop of
    /// `walk_pte_range` and `lru_gen_look_around`). Only folios on a list count
    /// (`get_pfn_folio`); consecutive PTEs of one folio update it once. Returns the
    /// young PTEs found.
    fn sweep(&mut self, mm: &mut Mm, lo: u32, hi: u32, gen: usize, promote: Promote) -> u64 {
        let mut young = 0;
        let mut last: Option<Pfn> = None;
        for p in lo..hi {
            let pte = mm.pt.pte(PageId(p));
            if !pte.is_present() || !pte.accessed() {
                continue;
            }
            let crate::mm::pagetable::PteState::Present(frame) = pte.state() else { continue };
            let head = mm.frames.head(frame);
            if folio_gen(mm, head).is_none() {
                continue;
            }
            mm.pt.pte_mut(PageId(p)).clear_accessed();
            young += 1;
            if last != Some(head) {
                if let Some(l) = last {
                    self.walk_update(mm, l, gen, promote);
                }
                last = Some(head);
            }
        }
        if let Some(l) = last {
            self.walk_update(mm, l, gen, promote);
        }
        young
    }

    /// `lru_gen_look_around`: the rmap walk found PTE `page` young (its bit is cleared
    /// already): scan up to `MIN_LRU_BATCH` PTEs around it in the same PTE table and VMA,
    /// promote the young ones, and if they are dense, tell the next aging to walk this
    /// table.
    pub(super) fn look_around(&mut self, mm: &mut Mm, page: PageId) {
        let chunk = page.0 / CHUNK_PAGES as u32;
        let (mut lo, mut hi) = mm.pt.chunk_range(chunk);
        if hi - lo == 1 {
            return;
        }
        let batch = MIN_LRU_BATCH as u32;
        if hi - lo > batch {
            if page.0 - lo < batch / 2 {
                hi = lo + batch;
            } else if hi - page.0 < batch / 2 {
                lo = hi - batch;
            } else {
                lo = page.0 - batch / 2;
                hi = page.0 + batch / 2;
            }
        }
        self.aging.look_arounds += 1;
        let gen = gen_of(self.max_seq);
        let young = 1 + self.sweep(mm, lo, hi, gen, self.look_around);
        mm.spend(u64::from(hi - lo) * mm.cost().aging_pte_ns);
        if young * YOUNG_PER_LINE >= u64::from(hi - lo) {
            self.filter_add(self.max_seq, chunk);
        }
    }

    /// The page-table walk of one aging pass: every PTE table the Bloom filter of `seq`
    /// holds (every table of an address space new since the last pass), promoting young
    /// folios to the youngest generation; tables dense with young PTEs go into the filter
    /// of `seq + 1`.
    pub(super) fn walk_mms(&mut self, mm: &mut Mm, seq: u64) {
        let gen = gen_of(seq);
        self.filter_reset(seq + 1);
        let nr_spaces = mm.pt.spaces.len();
        let mut chunks = Vec::new();
        let mut walked = 0u64;
        for space in 0..nr_spaces {
            let force = space >= self.spaces_walked;
            chunks.clear();
            chunks.extend(
                mm.pt
                    .space_chunks(crate::ids::SpaceId::from_index(space))
                    .filter(|&c| force || self.filter_test(seq, c)),
            );
            for &c in &chunks {
                let (lo, hi) = mm.pt.chunk_range(c);
                let young = self.sweep(mm, lo, hi, gen, Promote::InPlace);
                walked += u64::from(hi - lo);
                self.aging.young_ptes += young;
                if young * YOUNG_PER_LINE >= u64::from(hi - lo) {
                    self.filter_add(seq + 1, c);
                }
            }
        }
        self.spaces_walked = nr_spaces;
        self.aging.ptes_walked += walked;
        mm.spend(walked * mm.cost().aging_pte_ns);
    }
}
