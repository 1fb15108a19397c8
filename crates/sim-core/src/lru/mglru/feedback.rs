//! The refault feedback: tiers by reference count, the PID controller that protects
//! the tiers refaulting more than tier 0 (`read_ctrl_pos`, `get_tier_idx`,
//! `positive_ctrl_err`), and the shadow entries of mm/workingset.c that carry a folio's
//! generation and references from eviction to refault (`lru_gen_eviction`,
//! `lru_gen_refault`).

use super::{folio_refs, Gens, LRU_REFS_WIDTH, MAX_NR_GENS, MAX_NR_TIERS, MIN_LRU_BATCH, REFS_SHIFT};
use crate::ids::Pfn;
use crate::lru::{Origin, Placement};
use crate::mm::frames::flag;
use crate::mm::swap::Shadow;
use crate::mm::workingset::{ClassicShadow, EVICTION_BITS};
use crate::mm::Mm;

/// `lru_tier_from_refs`: the top tier for `PG_workingset`, else log2 of the references.
pub(super) fn tier_from_refs(refs: u32, workingset: bool) -> usize {
    if workingset {
        MAX_NR_TIERS - 1
    } else if refs <= 1 {
        0
    } else {
        (32 - (refs - 1).leading_zeros()) as usize
    }
}

/// The refault feedback of the generation being evicted and its averages (one
/// histogram slot: `NR_HIST_GENS` 1).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ctrl {
    pub(super) refaulted: [u64; MAX_NR_TIERS],
    pub(super) evicted: [u64; MAX_NR_TIERS],
    pub(super) protected: [u64; MAX_NR_TIERS],
    pub(super) avg_refaulted: [u64; MAX_NR_TIERS],
    pub(super) avg_total: [u64; MAX_NR_TIERS],
}

/// `struct ctrl_pos`.
#[derive(Clone, Copy, Debug)]
struct CtrlPos {
    refaulted: u64,
    total: u64,
    gain: u64,
}

impl Ctrl {
    /// `read_ctrl_pos` for one tier, or for all of them when `tier` is `MAX_NR_TIERS`.
    fn pos(&self, tier: usize, gain: u64) -> CtrlPos {
        let tiers = if tier >= MAX_NR_TIERS { 0..MAX_NR_TIERS } else { tier..tier + 1 };
        let mut p = CtrlPos { refaulted: 0, total: 0, gain };
        for i in tiers {
            p.refaulted += self.avg_refaulted[i] + self.refaulted[i];
            p.total += self.avg_total[i] + self.protected[i] + self.evicted[i];
        }
        p
    }

    /// `reset_ctrl_pos` with carry-over, when `min_seq` moves: the averages take half of
    /// the old average plus the current counts, which start again from zero.
    pub(super) fn carry_over(&mut self) {
        for t in 0..MAX_NR_TIERS {
            self.avg_refaulted[t] = (self.avg_refaulted[t] + self.refaulted[t]) / 2;
            self.avg_total[t] = (self.avg_total[t] + self.protected[t] + self.evicted[t]) / 2;
            self.refaulted[t] = 0;
            self.evicted[t] = 0;
            self.protected[t] = 0;
        }
    }

    /// `get_tier_idx`: the highest tier that is not protected. Tier 0 is the setpoint
    /// with gain 2; a higher tier is protected once its refault rate with gain 3
    /// exceeds it.
    pub(super) fn tier_idx(&self) -> usize {
        let sp = self.pos(0, 2);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            if !positive_ctrl_err(sp, self.pos(tier, 3)) {
                break;
            }
            tier += 1;
        }
        tier - 1
    }
}

/// `positive_ctrl_err`: the process variable refaults little, or at a rate no higher
/// than the setpoint's.
fn positive_ctrl_err(sp: CtrlPos, pv: CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH
        || pv.refaulted * (sp.total + MIN_LRU_BATCH) * sp.gain <= (sp.refaulted + 1) * pv.total * pv.gain
}

impl Gens {
    /// `lru_gen_eviction`: the token holds `min_seq` and the references; the eviction
    /// counts toward the folio's tier.
    pub(super) fn eviction(&mut self, mm: &mut Mm, pfn: Pfn) -> Shadow {
        let refs = folio_refs(mm, pfn);
        let ws = mm.frames.test(pfn, flag::WORKINGSET);
        self.ctrl.evicted[tier_from_refs(refs, ws)] += u64::from(mm.frames.nr_pages(pfn));
        let token = (self.min_seq << LRU_REFS_WIDTH) | u64::from(refs.saturating_sub(1));
        let mask = (1u64 << EVICTION_BITS) - 1;
        ClassicShadow { eviction: (token & mask) as u32, workingset: ws }.encode()
    }

    /// `lru_gen_refault`: a refault is recent while fewer than `MAX_NR_GENS` generations
    /// have been opened since its eviction; it then counts toward its tier and restores
    /// the folio's references or `PG_workingset`.
    pub(super) fn refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow, origin: Origin) -> Placement {
        let in_fault = origin == Origin::Fault;
        let s = ClassicShadow::decode(shadow);
        let nr = u64::from(mm.frames.nr_pages(pfn));
        mm.vmstat.workingset_refault_anon += nr;
        let token = u64::from(s.eviction);
        let seq_mask = ((1u64 << EVICTION_BITS) - 1) >> LRU_REFS_WIDTH;
        let evicted_at = token >> LRU_REFS_WIDTH;
        if (self.max_seq & seq_mask).abs_diff(evicted_at) >= MAX_NR_GENS {
            return Placement::Inactive;
        }
        let refs = (token & ((1 << LRU_REFS_WIDTH) - 1)) as u32 + 1;
        self.ctrl.refaulted[tier_from_refs(refs, s.workingset)] += nr;
        if in_fault {
            mm.vmstat.workingset_activate_anon += nr;
        }
        if s.workingset {
            mm.frames.set(pfn, flag::WORKINGSET);
            mm.vmstat.workingset_restore_anon += nr;
        } else {
            mm.frames.clear(pfn, flag::LRU_REFS_MASK);
            mm.frames.set(pfn, ((refs - 1) as u16) << REFS_SHIFT);
        }
        Placement::Active
    }
}
