//! The aging: opening a new youngest generation (`try_to_inc_max_seq`, `inc_max_seq`)
//! after the page-table walk, retiring the oldest (`inc_min_seq`,
//! `try_to_inc_min_seq`), deciding when eviction must wait for it (`should_run_aging`,
//! `get_nr_to_scan`), and kswapd's `min_ttl` test (`lru_gen_age_node`).

use super::feedback::tier_from_refs;
use super::gens::IncGen;
use super::{
    folio_refs, gen_of, Gens, MgLru, DEF_PRIORITY, LRU_REFS_WIDTH, MAX_NR_GENS, MIN_LRU_BATCH, MIN_NR_GENS,
};
use crate::ids::Pfn;
use crate::lru::list::NIL;
use crate::lru::Lru;
use crate::mm::frames::flag;
use crate::mm::Mm;

/// `SWAP_CLUSTER_MAX`, kswapd's smallest target.
const SWAP_TARGET: u64 = crate::mm::vmscan::SWAP_CLUSTER_MAX;

impl Gens {
    /// `inc_min_seq`: the oldest generation is full-up (four live): move all its folios to
    /// the next generation, counting them as protected, and retire it.
    fn inc_min_seq(&mut self, mm: &mut Mm) {
        let old = gen_of(self.min_seq);
        while self.lists[old].tail != NIL {
            let pfn = Pfn(self.lists[old].tail);
            let refs = folio_refs(mm, pfn);
            let ws = mm.frames.test(pfn, flag::WORKINGSET);
            let new = self.inc_gen(mm, pfn, IncGen::Protect);
            self.unlink(pfn);
            self.link_tail(new, pfn);
            // Not counted: the working set being promoted lazily.
            if refs + u32::from(ws) != (1 << LRU_REFS_WIDTH) + 1 {
                self.ctrl.protected[tier_from_refs(refs, ws)] += u64::from(mm.frames.nr_pages(pfn));
            }
        }
        self.ctrl.carry_over();
        self.min_seq += 1;
    }

    /// `try_to_inc_min_seq`: retires empty oldest generations, keeping at least two.
    pub(super) fn try_to_inc_min_seq(&mut self) -> bool {
        let mut moved = false;
        while self.min_seq + MIN_NR_GENS <= self.max_seq && self.lists[gen_of(self.min_seq)].is_empty() {
            self.min_seq += 1;
            moved = true;
        }
        if moved {
            self.ctrl.carry_over();
        }
        moved
    }

    /// `try_to_inc_max_seq` with `walk_mm` over every address space, then
    /// `inc_max_seq`: a new youngest generation, born now.
    pub(super) fn inc_max_seq(&mut self, mm: &mut Mm) {
        let seq = self.max_seq;
        if self.walk_mmu {
            self.walk_mms(mm, seq);
        }
        if self.nr_gens() == MAX_NR_GENS {
            self.inc_min_seq(mm);
        }
        self.max_seq += 1;
        self.birth[gen_of(self.max_seq)] = mm.now();
        self.aging.runs += 1;
    }

    /// `should_run_aging`: whether eviction must (two generations) or had better (three)
    /// wait for a new generation, and the pages it could scan.
    fn should_run_aging(&self) -> (bool, u64) {
        if self.min_seq + MIN_NR_GENS > self.max_seq {
            return (true, 0);
        }
        (self.min_seq + MIN_NR_GENS == self.max_seq, self.total_pages())
    }

    /// `get_nr_to_scan`: pages to scan at this priority; `None` when aging ran instead
    /// (the lruvec is low on cold folios: stop scanning it this round).
    pub(super) fn nr_to_scan(&mut self, mm: &mut Mm, priority: u32) -> Option<u64> {
        let (age, size) = self.should_run_aging();
        if !age || priority == DEF_PRIORITY {
            return Some(size >> priority);
        }
        self.inc_max_seq(mm);
        None
    }
}

impl MgLru {
    /// `lru_gen_age_node`'s test of the one lruvec (`lruvec_is_reclaimable`): whether
    /// it is large enough to help at kswapd's `priority` and its oldest generation is
    /// older than `min_ttl`. Always true without `min_ttl`.
    pub(super) fn lruvec_is_reclaimable(&self, mm: &Mm, priority: u32) -> bool {
        if self.min_ttl.0 == 0 {
            return true;
        }
        // Not reclaimable: too small to help, or the oldest generation younger than
        // min_ttl.
        let mut sc_priority = priority;
        if priority == DEF_PRIORITY {
            let fls = |x: u64| 64 - i64::from(x.leading_zeros());
            let target = SWAP_TARGET.max(mm.wmark.high.saturating_sub(mm.frames.free_pages()));
            if target >= MIN_LRU_BATCH {
                let p = fls(self.sizes().inactive_anon) - 1 - fls(target - 1);
                sc_priority = p.clamp(i64::from(DEF_PRIORITY / 2), i64::from(DEF_PRIORITY)) as u32;
            }
        }
        if self.g.total_pages() >> sc_priority == 0 {
            return false;
        }
        let birth = self.g.birth[gen_of(self.g.min_seq)];
        mm.now() > birth + self.min_ttl
    }
}
