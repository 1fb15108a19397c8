//! The generations and their lists: where a folio joins (`lru_gen_folio_seq`,
//! `lru_gen_add_folio` and `lru_gen_del_folio` in include/linux/mm_inline.h), how aging
//! and eviction move it up a generation (`folio_update_gen`, `folio_inc_gen`), the
//! reference bits the rmap walk sets (`lru_gen_set_refs`), and the invariant check.
//!
//! A folio's generation lives in its flags and its list in `Gens::on_list`; aging
//! changes only the first, so a folio's list may be older than its generation until
//! eviction sorts it (`evict.rs`).

use super::{folio_gen, gen_of, set_gen, Gens, MAX_NR_GENS, MIN_NR_GENS, REFS_FLAGS};
use crate::ids::Pfn;
use crate::mm::frames::flag;
use crate::mm::Mm;

/// How a folio joins the generations: what `lru_gen_folio_seq` reads besides the
/// folio's own flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Join {
    /// `PG_active` is set (added in a page fault, or activated): the second-youngest
    /// generation, the youngest with `PG_workingset`.
    Active,
    /// Put back or added outside a fault: where the folio's flags say, at the head.
    Inactive,
    /// Rotated for reclaim (`reclaiming`): the oldest generation, at the tail.
    Reclaiming,
}

/// Why `folio_inc_gen` moves a folio of the oldest generation up one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IncGen {
    /// The folio is protected: its tier is, or its generation is being retired.
    Protect,
    /// The folio is under writeback: it is also marked `PG_reclaim`, so that the end of
    /// the write rotates it to the oldest generation's tail to be freed.
    Writeback,
}

impl Gens {
    pub(super) fn nr_gens(&self) -> u64 {
        self.max_seq - self.min_seq + 1
    }

    /// The sequence number of generation index `gen`, which must be live.
    pub(super) fn seq_of(&self, gen: usize) -> u64 {
        let base = self.min_seq - self.min_seq % MAX_NR_GENS + gen as u64;
        if base < self.min_seq {
            base + MAX_NR_GENS
        } else {
            base
        }
    }

    pub(super) fn total_pages(&self) -> u64 {
        self.nr_pages.iter().sum()
    }

    fn set_list(&mut self, pfn: Pfn, gen: usize) {
        let i = pfn.0 as usize;
        if self.on_list.len() <= i {
            self.on_list.resize((i + 1).max(self.on_list.len() * 2), 0);
        }
        self.on_list[i] = gen as u8;
    }

    pub(super) fn link_head(&mut self, gen: usize, pfn: Pfn) {
        self.links.push_head(&mut self.lists[gen], pfn);
        self.set_list(pfn, gen);
    }

    pub(super) fn link_tail(&mut self, gen: usize, pfn: Pfn) {
        self.links.push_tail(&mut self.lists[gen], pfn);
        self.set_list(pfn, gen);
    }

    /// Links `pfn` right after `anchor` (toward the tail), on the anchor's list.
    pub(super) fn link_after(&mut self, anchor: Pfn, pfn: Pfn) {
        let gen = self.on_list[anchor.0 as usize] as usize;
        self.links.insert_after(&mut self.lists[gen], anchor, pfn);
        self.set_list(pfn, gen);
    }

    pub(super) fn unlink(&mut self, pfn: Pfn) {
        let gen = self.on_list[pfn.0 as usize] as usize;
        self.links.unlink(&mut self.lists[gen], pfn);
    }

    /// `lru_gen_folio_seq`: where a folio joining the lists goes.
    pub(super) fn folio_seq(&self, mm: &Mm, pfn: Pfn, join: Join) -> u64 {
        let f = mm.frames.flags(pfn);
        let ws = u64::from(f & flag::WORKINGSET != 0);
        let swapcache = mm.frames.swap_slot(pfn).is_some();
        let gen = match join {
            Join::Active => MIN_NR_GENS - ws,
            Join::Reclaiming => MAX_NR_GENS,
            Join::Inactive
                if !swapcache
                    || (f & flag::RECLAIM != 0 && (f & flag::DIRTY != 0 || mm.folio_writeback(pfn))) =>
            {
                MIN_NR_GENS
            }
            Join::Inactive => MAX_NR_GENS - ws,
        };
        (self.max_seq + 1 - gen).max(self.min_seq)
    }

    /// `lru_gen_add_folio`: links the folio on the generation `folio_seq` chooses, at the
    /// tail when reclaim will want it first (`Join::Reclaiming`), else at the head.
    /// Clears `PG_active`, which only carried the choice.
    pub(super) fn add_folio(&mut self, mm: &mut Mm, pfn: Pfn, join: Join) {
        debug_assert!(!mm.frames.test(pfn, flag::LRU), "frame {} is already on a list", pfn.0);
        let gen = gen_of(self.folio_seq(mm, pfn, join));
        mm.frames.clear(pfn, flag::ACTIVE);
        set_gen(mm, pfn, Some(gen));
        mm.frames.set(pfn, flag::LRU);
        self.nr_pages[gen] += u64::from(mm.frames.nr_pages(pfn));
        if join == Join::Reclaiming {
            self.link_tail(gen, pfn);
        } else {
            self.link_head(gen, pfn);
        }
    }

    /// `lru_gen_del_folio`: takes the folio off its list.
    pub(super) fn del_folio(&mut self, mm: &mut Mm, pfn: Pfn) {
        let gen = folio_gen(mm, pfn).expect("a listed folio has a generation");
        self.unlink(pfn);
        self.nr_pages[gen] -= u64::from(mm.frames.nr_pages(pfn));
        set_gen(mm, pfn, None);
        mm.frames.clear(pfn, flag::LRU);
    }

    /// `folio_update_gen`: aging found the folio young. The first time only marks it
    /// referenced; the second moves it to generation `gen` (its list catches up in
    /// `sort_folio`) and sets `PG_workingset`. Returns whether it moved.
    pub(super) fn update_gen(&mut self, mm: &mut Mm, pfn: Pfn, gen: usize) -> bool {
        let f = mm.frames.flags(pfn);
        if f & (flag::REFERENCED | flag::WORKINGSET) == 0 {
            mm.frames.clear(pfn, flag::LRU_REFS_MASK);
            mm.frames.set(pfn, flag::REFERENCED);
            return false;
        }
        let Some(old) = folio_gen(mm, pfn) else { return false };
        mm.frames.clear(pfn, REFS_FLAGS);
        mm.frames.set(pfn, flag::WORKINGSET);
        set_gen(mm, pfn, Some(gen));
        let nr = u64::from(mm.frames.nr_pages(pfn));
        self.nr_pages[old] -= nr;
        self.nr_pages[gen] += nr;
        old != gen
    }

    /// `folio_inc_gen`: moves a folio of the oldest generation to the next one, clearing
    /// its references (and marking it for reclaim after its writeback, `reclaiming`, for
    /// `IncGen::Writeback`).
    /// A folio aging already promoted keeps its generation. Returns the generation.
    pub(super) fn inc_gen(&mut self, mm: &mut Mm, pfn: Pfn, why: IncGen) -> usize {
        let old = gen_of(self.min_seq);
        let cur = folio_gen(mm, pfn).expect("a listed folio has a generation");
        if cur != old {
            return cur;
        }
        let new = (old + 1) % MAX_NR_GENS as usize;
        mm.frames.clear(pfn, REFS_FLAGS);
        set_gen(mm, pfn, Some(new));
        if why == IncGen::Writeback {
            mm.frames.set(pfn, flag::RECLAIM);
        }
        let nr = u64::from(mm.frames.nr_pages(pfn));
        self.nr_pages[old] -= nr;
        self.nr_pages[new] += nr;
        new
    }

    /// `lru_gen_set_refs`: the rmap walk found the folio young. The first time it is only
    /// marked referenced; after that it is marked as working set and should be
    /// promoted (returns true).
    pub(super) fn set_refs(mm: &mut Mm, pfn: Pfn) -> bool {
        if mm.frames.flags(pfn) & (flag::REFERENCED | flag::WORKINGSET) == 0 {
            mm.frames.clear(pfn, flag::LRU_REFS_MASK);
            mm.frames.set(pfn, flag::REFERENCED);
            return false;
        }
        mm.frames.clear(pfn, REFS_FLAGS);
        mm.frames.set(pfn, flag::WORKINGSET);
        true
    }

    /// Recounts the generations from the lists and the frames' flags.
    pub(super) fn check_invariants(&self, mm: &Mm) {
        assert!(self.min_seq <= self.max_seq, "min_seq {} > max_seq {}", self.min_seq, self.max_seq);
        let n = self.nr_gens();
        assert!((MIN_NR_GENS..=MAX_NR_GENS).contains(&n), "{n} live generations");
        let mut counted = [0u64; MAX_NR_GENS as usize];
        let mut listed = 0u64;
        let total = self.total_pages();
        for (list_gen, l) in self.lists.iter().enumerate() {
            let live = (self.min_seq..=self.max_seq).any(|s| gen_of(s) == list_gen);
            self.links.walk(l, &format!("gen {list_gen}"), |pfn| {
                let cur = pfn.0;
                assert!(live, "folio {cur} on the list of a retired generation {list_gen}");
                assert_eq!(self.on_list[cur as usize] as usize, list_gen, "frame {cur}: list index");
                assert!(mm.frames.test(pfn, flag::IN_USE), "gen {list_gen}: free frame {cur} on a list");
                assert!(mm.frames.test(pfn, flag::LRU), "gen {list_gen}: frame {cur} lacks the LRU flag");
                assert!(!mm.frames.test(pfn, flag::ACTIVE), "frame {cur}: PG_active on a generation");
                assert!(mm.frames.is_head(pfn), "frame {cur}: a tail page on a list");
                let gen =
                    folio_gen(mm, pfn).unwrap_or_else(|| panic!("frame {cur} listed without a generation"));
                assert!(
                    self.seq_of(gen) >= self.seq_of(list_gen),
                    "frame {cur}: generation {gen} older than its list {list_gen}"
                );
                let nr = u64::from(mm.frames.nr_pages(pfn));
                counted[gen] += nr;
                listed += nr;
                listed <= total
            });
        }
        assert_eq!(counted, self.nr_pages, "pages per generation vs nr_pages");
        let flagged = mm.frames.lru_flagged_pages();
        assert_eq!(listed, flagged, "pages of folios flagged LRU vs pages on generations");
        for p in mm.frames.folios() {
            let on = mm.frames.test(p, flag::LRU);
            assert_eq!(on, folio_gen(mm, p).is_some(), "frame {}: LRU flag vs generation bits", p.0);
        }
    }
}
