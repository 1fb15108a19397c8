//! The eviction: sorting the oldest generation (`sort_folio`), isolating what is left
//! (`isolate_folio`, `scan_folios`), handing it to `shrink_folio_list` with the
//! reference check that starts look-around (`evict_folios`, `folio_referenced`), and the
//! loop over eviction passes (`try_to_shrink_lruvec`, `set_initial_priority`).

use super::feedback::tier_from_refs;
use super::gens::{IncGen, Join};
use super::walk::Promote;
use super::{
    folio_gen, folio_refs, gen_of, Gens, MgLru, DEF_PRIORITY, LRU_REFS_WIDTH, MAX_LRU_BATCH, MIN_LRU_BATCH,
    MIN_NR_GENS, REFS_FLAGS,
};
use crate::ids::Pfn;
use crate::lru::list::NIL;
use crate::lru::{Fate, Lru, ScanControl};
use crate::mm::frames::flag;
use crate::mm::swap::Shadow;
use crate::mm::vmscan::{FolioReferences, ReclaimHooks, Reclaimer};
use crate::mm::Mm;

impl Gens {
    /// `sort_folio`: true when the folio stays on the lists (moved to the generation it
    /// belongs to), false when it is to be isolated.
    fn sort_folio(&mut self, mm: &mut Mm, pfn: Pfn, tier_idx: usize) -> bool {
        let gen = folio_gen(mm, pfn).expect("a listed folio has a generation");
        if gen != gen_of(self.min_seq) {
            // Promoted by aging.
            self.unlink(pfn);
            self.link_head(gen, pfn);
            return true;
        }
        let refs = folio_refs(mm, pfn);
        let ws = mm.frames.test(pfn, flag::WORKINGSET);
        let tier = tier_from_refs(refs, ws);
        let lazily_promoted = refs + u32::from(ws) == (1 << LRU_REFS_WIDTH) + 1;
        if tier > tier_idx || lazily_promoted {
            let new = self.inc_gen(mm, pfn, IncGen::Protect);
            self.unlink(pfn);
            self.link_head(new, pfn);
            if !lazily_promoted {
                self.ctrl.protected[tier] += u64::from(mm.frames.nr_pages(pfn));
            }
            return true;
        }
        if mm.folio_writeback(pfn) {
            let new = self.inc_gen(mm, pfn, IncGen::Writeback);
            self.unlink(pfn);
            self.link_head(new, pfn);
            return true;
        }
        false
    }

    /// `isolate_folio`: a referenced count is kept only with `PG_referenced`; the folio
    /// leaves its list.
    fn isolate_folio(&mut self, mm: &mut Mm, pfn: Pfn) {
        if !mm.frames.test(pfn, flag::REFERENCED) {
            mm.frames.clear(pfn, flag::LRU_REFS_MASK);
        }
        mm.frames.clear(pfn, flag::RECLAIM);
        self.del_folio(mm, pfn);
    }
}

impl MgLru {
    /// `scan_folios` on the oldest generation: sorts folios from its tail until
    /// `MAX_LRU_BATCH` were looked at or `MIN_LRU_BATCH` pages isolated into `scratch`.
    /// Returns the pages looked at, or 0 if nothing was isolated before the batch ran out.
    fn scan_folios(&mut self, mm: &mut Mm, sc: &mut ScanControl, tier_idx: usize) -> u64 {
        self.scratch.clear();
        if self.g.nr_gens() == MIN_NR_GENS {
            return 0;
        }
        let gen = gen_of(self.g.min_seq);
        let (mut scanned, mut sorted, mut isolated) = (0u64, 0u64, 0u64);
        let mut remaining = MAX_LRU_BATCH;
        while self.g.lists[gen].tail != NIL {
            let pfn = Pfn(self.g.lists[gen].tail);
            let delta = u64::from(mm.frames.nr_pages(pfn));
            scanned += delta;
            if self.g.sort_folio(mm, pfn, tier_idx) {
                sorted += delta;
            } else {
                self.g.isolate_folio(mm, pfn);
                self.scratch.push(pfn);
                isolated += delta;
            }
            remaining -= 1;
            if remaining == 0 || isolated >= MIN_LRU_BATCH {
                break;
            }
        }
        mm.spend(sorted * mm.cost().reclaim_scan_ns / 4);
        if sc.reclaimer != Reclaimer::Memcg {
            mm.vmstat.pgrefill += sorted;
        }
        if isolated > 0 || remaining == 0 {
            scanned
        } else {
            0
        }
    }

    /// `evict_folios`: one pass over the oldest generation. Returns the pages scanned
    /// (plus one when `min_seq` moved), 0 when eviction could not go on.
    pub(super) fn evict_folios(&mut self, mm: &mut Mm, sc: &mut ScanControl) -> u64 {
        // Writes that completed meanwhile move their folios to the oldest generation's
        // tail first, where this pass can free them.
        self.rotate_completed(mm, sc.cpu);
        let tier_idx = self.g.ctrl.tier_idx();
        let mut scanned = self.scan_folios(mm, sc, tier_idx);
        scanned += u64::from(self.g.try_to_inc_min_seq());
        if self.g.min_seq + MIN_NR_GENS > self.g.max_seq {
            scanned = 0;
        }
        if self.scratch.is_empty() {
            return scanned;
        }
        let mut batch = std::mem::take(&mut self.scratch);
        let mut fates = std::mem::take(&mut self.fates);
        let isolated: u64 = batch.iter().map(|&p| u64::from(mm.frames.nr_pages(p))).sum();
        self.g.look_around =
            if sc.reclaimer == Reclaimer::Kswapd { Promote::InPlace } else { Promote::Activate };
        let res = mm.shrink_folio_list(&mut batch, sc, &mut self.g, &mut fates);
        for (&pfn, &fate) in batch.iter().zip(&fates) {
            match fate {
                Fate::Freed => {}
                Fate::Activate => self.g.add_folio(mm, pfn, Join::Active),
                Fate::Keep => {
                    // Rejected folios do not go back to the oldest generation.
                    let join = if self.g.folio_seq(mm, pfn, Join::Inactive) == self.g.min_seq {
                        mm.frames.clear(pfn, REFS_FLAGS);
                        Join::Active
                    } else {
                        Join::Inactive
                    };
                    self.g.add_folio(mm, pfn, join);
                }
            }
        }
        sc.nr_scanned += isolated;
        sc.nr_reclaimed += res.reclaimed;
        self.scratch = batch;
        self.fates = fates;
        scanned
    }

    /// `set_initial_priority` for reclaim of the whole node: start at the priority whose
    /// share of the inactive pages matches the target.
    fn initial_priority(&self, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let reclaimable = self.sizes().inactive_anon;
        let fls = |x: u64| 64 - i64::from(x.leading_zeros());
        let p = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = p.clamp(i64::from(DEF_PRIORITY / 2), i64::from(DEF_PRIORITY)) as u32;
    }

    /// `lru_gen_shrink_lruvec` of the one lruvec: eviction passes until the priority's
    /// share is scanned, the target is met or aging ran instead (`try_to_shrink_lruvec`,
    /// `should_abort_scan`).
    pub(super) fn shrink_lruvec(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        // get_swappiness: no anonymous scanning without swap space or with swappiness 0.
        if sc.swappiness == 0 || !mm.can_reclaim_anon() {
            return;
        }
        let root = sc.reclaimer != Reclaimer::Memcg;
        if root {
            self.initial_priority(sc);
        }
        let start = sc.nr_reclaimed;
        let mut scanned = 0;
        // try_to_shrink_lruvec
        while let Some(nr_to_scan) = self.g.nr_to_scan(mm, sc.priority) {
            if nr_to_scan == 0 {
                break;
            }
            let delta = self.evict_folios(mm, sc);
            if delta == 0 {
                break;
            }
            scanned += delta;
            if scanned >= nr_to_scan {
                break;
            }
            // should_abort_scan: memory cgroup reclaim scans on, for fairness; kswapd counts
            // what this pass freed, direct reclaim what the whole invocation did.
            let freed =
                if sc.reclaimer == Reclaimer::Kswapd { sc.nr_reclaimed - start } else { sc.nr_reclaimed };
            if root && freed >= sc.nr_to_reclaim {
                break;
            }
            if sc.reclaimer == Reclaimer::Kswapd && mm.frames.free_pages() >= mm.wmark.high + MIN_LRU_BATCH {
                break;
            }
        }
    }
}

impl ReclaimHooks for Gens {
    /// `folio_referenced` with look-around, then `lru_gen_folio_check_references`: no
    /// young PTE → reclaim; the first time young → keep (referenced); again → activate.
    fn folio_check_references(&mut self, mm: &mut Mm, pfn: Pfn) -> FolioReferences {
        let mut referenced = false;
        for i in 0..mm.frames.nr_pages(pfn) {
            let Some(page) = mm.frames.owner(Pfn(pfn.0 + i)) else { continue };
            let pte = mm.pt.pte_mut(page);
            if !pte.accessed() {
                continue;
            }
            pte.clear_accessed();
            referenced = true;
            self.look_around(mm, page);
        }
        if !referenced {
            FolioReferences::Reclaim
        } else if Self::set_refs(mm, pfn) {
            FolioReferences::Activate
        } else {
            FolioReferences::Keep
        }
    }

    /// `lru_gen_eviction`, beside its refault in `feedback.rs`.
    fn eviction_shadow(&mut self, mm: &mut Mm, pfn: Pfn) -> Shadow {
        self.eviction(mm, pfn)
    }
}
