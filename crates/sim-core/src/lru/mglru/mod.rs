//! The multi-generational LRU (`CONFIG_LRU_GEN`): mm/vmscan.c's lru_gen section,
//! `lru_gen_folio_seq` and friends in include/linux/mm_inline.h, and `lru_gen_eviction` /
//! `lru_gen_refault` in mm/workingset.c, as of Linux 6.14–6.18.
//!
//! Folios of the anonymous type sit in two to four generations, numbered by sequence
//! between `min_seq` and `max_seq`; a folio's generation (`seq % MAX_NR_GENS`, plus one)
//! lives in its flags. Reclaim evicts only from the oldest generation. Aging
//! (`try_to_inc_max_seq`) opens a new youngest generation when eviction has fewer than
//! three to work with: it walks the page tables of every address space, clears the
//! accessed bit of each young PTE and promotes its folio to the new generation, on the
//! second detection (the first only sets `PG_referenced`). Eviction (`evict_folios`)
//! sorts the oldest generation's folios: those aging promoted move to their generation,
//! those in a tier the PID controller protects move up one, those under writeback wait
//! one generation up, and the rest go to `shrink_folio_list`. There a young PTE found by
//! the rmap walk starts a look-around of up to 64 neighbouring PTEs, which promotes the
//! young ones and tells the next aging which PTE tables are worth walking (the Bloom
//! filter).
//!
//! Tiers: anonymous folios carry no file-descriptor reference count, so they sit in tier
//! 0, or in the top tier once `PG_workingset` is set (promoted twice, or restored by a
//! refault). The controller compares each tier's refault rate with tier 0's, on the
//! refaults, evictions and protections of the generation being evicted plus halving
//! averages over the earlier ones, and protects the tiers that refault more.
//!
//! Placement (`lru_gen_folio_seq`): a folio added in a page fault (new anonymous memory,
//! swap-in and its readahead) goes to the second-youngest generation, the youngest if
//! `PG_workingset`; a folio reclaim puts back goes where its flags say, never to the
//! oldest; a folio whose writeback ended goes to the tail of the oldest.
//!
//! Shadow entries carry the `min_seq` at eviction and the folio's references; a refault
//! is recent when fewer than `MAX_NR_GENS` generations have been opened since.
//!
//! This file holds the state (`Gens`, `MgLru`), the flag helpers and the `Lru`
//! implementation, which hands each call to the part of the kernel it models:
//! `gens.rs` is the generations and their lists (placement, promotion, `folio_inc_gen`),
//! `aging.rs` opens and retires generations, `walk.rs` is the page-table walk and
//! look-around with their Bloom filter, `evict.rs` sorts, isolates and evicts the oldest
//! generation (with the reference check `shrink_folio_list` calls), and `feedback.rs` is
//! the tiers, the PID controller and the shadow entries that feed it.
//!
//! Simplified: no file pages (the file type is empty, so every scan picks the anonymous
//! type and the anon/file balance of the controller never engages); one memory cgroup and
//! one node, so no memcg LRU rotation; the statistics have one histogram slot
//! (`NR_HIST_GENS` 1, as without `CONFIG_LRU_GEN_STATS`). The Bloom filters are exact
//! sets of PTE tables (no false positives); a PTE table is walked if the filter holds it,
//! without first testing the non-leaf PMD's accessed bit (which in the model is set
//! exactly when one of its PTEs is young, so the test would skip only tables in which the
//! walk finds nothing); every address space counts as used since the last walk; an
//! address space is walked in full the first time only. Folios activated by look-around
//! move at once rather than through a per-CPU batch; a pass does not retry the folios
//! whose writeback ended while it ran (their rotation brings them to the oldest
//! generation's tail for the next pass); the dirty bit a walk finds is not moved to the
//! folio (unmapping moves it). Aging charges `aging_pte_ns` per PTE it visits and
//! eviction the usual per-folio reclaim costs.

mod aging;
mod evict;
mod feedback;
mod gens;
#[cfg(test)]
mod tests;
mod walk;

use super::list::{Links, List};
use super::{Fate, Lru, LruSizes, Origin, Placement, ScanControl};
use crate::config::LruGenConfig;
use crate::ids::Pfn;
use crate::mm::frames::flag;
use crate::mm::swap::Shadow;
use crate::mm::Mm;
use crate::report::{LruGenAging, LruGenGeneration, LruGenReport, LruGenTier};
use crate::time::{SimDuration, SimTime};
use feedback::Ctrl;
use gens::Join;
use walk::Promote;

/// `MIN_NR_GENS`: eviction needs more than this many generations.
pub(crate) const MIN_NR_GENS: u64 = 2;
/// `MAX_NR_GENS`.
pub(crate) const MAX_NR_GENS: u64 = 4;
/// `MAX_NR_TIERS`.
pub(crate) const MAX_NR_TIERS: usize = 4;
/// `MIN_LRU_BATCH` (`BITS_PER_LONG`): folios isolated per eviction pass, and the
/// look-around window.
const MIN_LRU_BATCH: u64 = 64;
/// `MAX_LRU_BATCH`: folios one eviction pass may look at.
const MAX_LRU_BATCH: u64 = 64 * 64;
/// `LRU_REFS_WIDTH` on 64-bit kernels.
const LRU_REFS_WIDTH: u32 = 2;
/// `DEF_PRIORITY`.
const DEF_PRIORITY: u32 = 12;
/// Young PTEs per cache line of PTEs that make a table worth walking again
/// (`suitable_to_scan`: 64-byte lines of 8-byte PTEs).
const YOUNG_PER_LINE: u64 = 8;

const GEN_SHIFT: u32 = 11;
const REFS_SHIFT: u32 = 14;
/// `LRU_REFS_FLAGS`: what promotion and protection reset.
const REFS_FLAGS: u16 = flag::LRU_REFS_MASK | flag::REFERENCED;

/// The generation index of a sequence number (`lru_gen_from_seq`).
fn gen_of(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// A folio's generation from its flags, `None` when it is on no list.
fn folio_gen(mm: &Mm, pfn: Pfn) -> Option<usize> {
    let g = (mm.frames.flags(pfn) & flag::LRU_GEN_MASK) >> GEN_SHIFT;
    (g != 0).then(|| usize::from(g - 1))
}

fn set_gen(mm: &mut Mm, pfn: Pfn, gen: Option<usize>) {
    mm.frames.clear(pfn, flag::LRU_GEN_MASK);
    if let Some(g) = gen {
        mm.frames.set(pfn, ((g as u16) + 1) << GEN_SHIFT);
    }
}

/// `folio_lru_refs`: 0 without `PG_referenced`, else the counter plus one.
fn folio_refs(mm: &Mm, pfn: Pfn) -> u32 {
    let f = mm.frames.flags(pfn);
    if f & flag::REFERENCED == 0 {
        0
    } else {
        u32::from((f & flag::LRU_REFS_MASK) >> REFS_SHIFT) + 1
    }
}

/// The generations, their lists and their feedback: what `shrink_folio_list` reaches
/// through [`crate::mm::vmscan::ReclaimHooks`] during eviction.
#[derive(Clone, Debug)]
struct Gens {
    links: Links,
    /// The list each listed frame is linked on. Aging promotes a folio by changing its
    /// generation in the flags only; eviction moves it to its list when it gets there
    /// (`sort_folio`), so a folio's list may be older than its generation.
    on_list: Vec<u8>,
    lists: [List; MAX_NR_GENS as usize],
    /// Pages per generation, by the flags (`nr_pages`).
    nr_pages: [u64; MAX_NR_GENS as usize],
    max_seq: u64,
    min_seq: u64,
    /// Birth of each generation (`timestamps`).
    birth: [SimTime; MAX_NR_GENS as usize],
    ctrl: Ctrl,
    /// The two Bloom filters, by `seq % 2`: the PTE tables (chunks) worth walking.
    /// `None` until first reset, which makes the test pass for every table.
    filters: [Option<Vec<u64>>; 2],
    /// Address spaces the page-table walk has seen; later ones are walked in full once.
    spaces_walked: usize,
    /// Whether aging walks page tables (capability 0x0002).
    walk_mmu: bool,
    /// How look-around promotes young folios: in place when the reclaimer has a walk
    /// context (`current->reclaim_state->mm_walk`: kswapd always does; others only while
    /// aging), else by activation.
    look_around: Promote,
    aging: LruGenAging,
}

/// MGLRU for the one memory cgroup of the model.
#[derive(Clone, Debug)]
pub(crate) struct MgLru {
    g: Gens,
    min_ttl: SimDuration,
    scratch: Vec<Pfn>,
    fates: Vec<Fate>,
}

impl MgLru {
    pub(crate) fn new(cfg: &LruGenConfig) -> MgLru {
        MgLru {
            g: Gens {
                links: Links::default(),
                on_list: Vec::new(),
                lists: [List::EMPTY; MAX_NR_GENS as usize],
                nr_pages: [0; MAX_NR_GENS as usize],
                // lru_gen_init_lruvec: four generations, all born now.
                max_seq: MIN_NR_GENS + 1,
                min_seq: 0,
                birth: [SimTime::ZERO; MAX_NR_GENS as usize],
                ctrl: Ctrl::default(),
                filters: [None, None],
                spaces_walked: 0,
                walk_mmu: cfg.walks_mmu(),
                look_around: Promote::Activate,
                aging: LruGenAging::default(),
            },
            min_ttl: SimDuration(cfg.min_ttl_ms * 1_000_000),
            scratch: Vec::new(),
            fates: Vec::new(),
        }
    }
}

impl Lru for MgLru {
    fn add(&mut self, mm: &mut Mm, pfn: Pfn, _placement: Placement, origin: Origin) {
        // folio_add_lru marks a folio added in a fault active; the classic refault
        // placement does not apply (lru_gen_refault set PG_workingset instead).
        let join = if origin == Origin::Fault { Join::Active } else { Join::Inactive };
        self.g.add_folio(mm, pfn, join);
    }

    fn remove(&mut self, mm: &mut Mm, pfn: Pfn) {
        if mm.frames.test(pfn, flag::LRU) {
            self.g.del_folio(mm, pfn);
        }
    }

    fn split(&mut self, _mm: &mut Mm, head: Pfn, nr: u32) {
        // The tails inherited the head's flags, generation included; the generation's
        // page count does not change.
        for i in (1..nr).rev() {
            self.g.link_after(head, Pfn(head.0 + i));
        }
    }

    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        // lru_move_tail: to the tail of the oldest generation.
        let f = mm.frames.flags(pfn);
        if f & flag::LRU != 0 && f & (flag::DIRTY | flag::LOCKED) == 0 {
            self.g.del_folio(mm, pfn);
            self.g.add_folio(mm, pfn, Join::Reclaiming);
            mm.vmstat.pgrotated += u64::from(mm.frames.nr_pages(pfn));
        }
    }

    fn shrink(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        self.shrink_lruvec(mm, sc);
    }

    fn refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow, origin: Origin) -> Placement {
        self.g.refault(mm, pfn, shadow, origin)
    }

    fn age_node(&mut self, mm: &Mm, priority: u32) -> bool {
        self.lruvec_is_reclaimable(mm, priority)
    }

    fn sizes(&self) -> LruSizes {
        // The two youngest generations count as active.
        let active = self.g.nr_pages[gen_of(self.g.max_seq)] + self.g.nr_pages[gen_of(self.g.max_seq - 1)];
        LruSizes { inactive_anon: self.g.total_pages() - active, active_anon: active }
    }

    fn lru_gen_report(&self, mm: &Mm) -> Option<LruGenReport> {
        let g = &self.g;
        let generations = (g.min_seq..=g.max_seq)
            .map(|seq| LruGenGeneration {
                seq,
                age_ms: mm.now().since(g.birth[gen_of(seq)]).0 / 1_000_000,
                anon_pages: g.nr_pages[gen_of(seq)],
                file_pages: 0,
            })
            .collect();
        let tiers = (0..MAX_NR_TIERS)
            .map(|t| LruGenTier {
                tier: t as u32,
                refaulted: g.ctrl.refaulted[t],
                evicted: g.ctrl.evicted[t],
                protected: g.ctrl.protected[t],
                avg_refaulted: g.ctrl.avg_refaulted[t],
                avg_total: g.ctrl.avg_total[t],
            })
            .collect();
        Some(LruGenReport {
            min_seq: g.min_seq,
            max_seq: g.max_seq,
            generations,
            tiers,
            protected_tier_above: g.ctrl.tier_idx() as u32,
            aging: g.aging,
        })
    }

    fn check_invariants(&self, mm: &Mm) {
        self.g.check_invariants(mm);
    }
}

/// Handles for the engine's tests, which drive aging and eviction step by step.
#[cfg(test)]
impl MgLru {
    /// One aging pass (`try_to_inc_max_seq`).
    pub(crate) fn age(&mut self, mm: &mut Mm) {
        self.g.inc_max_seq(mm);
    }
    /// One eviction pass (`evict_folios`).
    pub(crate) fn evict(&mut self, mm: &mut Mm, sc: &mut ScanControl) -> u64 {
        self.evict_folios(mm, sc)
    }
    /// The sequence number of the folio's generation, `None` when it is on no list.
    pub(crate) fn folio_seq(&self, mm: &Mm, pfn: Pfn) -> Option<u64> {
        folio_gen(mm, pfn).map(|g| self.g.seq_of(g))
    }
    /// `(min_seq, max_seq)`.
    pub(crate) fn seqs(&self) -> (u64, u64) {
        (self.g.min_seq, self.g.max_seq)
    }
    /// Sets the refault feedback of the working-set tier and of tier 0.
    pub(crate) fn set_feedback(&mut self, tier0: (u64, u64), top: (u64, u64)) {
        let c = &mut self.g.ctrl;
        (c.refaulted[0], c.evicted[0]) = tier0;
        (c.refaulted[MAX_NR_TIERS - 1], c.evicted[MAX_NR_TIERS - 1]) = top;
    }
}
