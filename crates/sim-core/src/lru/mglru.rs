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

use super::list::{Links, List, NIL};
use super::{Fate, Lru, LruSizes, Origin, Placement, ScanControl};
use crate::config::LruGenConfig;
use crate::ids::Pfn;
use crate::mm::frames::flag;
use crate::mm::pagetable::{PageId, CHUNK_PAGES};
use crate::mm::swap::Shadow;
use crate::mm::vmscan::{FolioReferences, ReclaimHooks, Reclaimer};
use crate::mm::workingset::{ClassicShadow, EVICTION_BITS};
use crate::mm::Mm;
use crate::report::{LruGenAging, LruGenGeneration, LruGenReport, LruGenTier};
use crate::time::{SimDuration, SimTime};

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

/// `lru_tier_from_refs`: the top tier for `PG_workingset`, else log2 of the references.
fn tier_from_refs(refs: u32, workingset: bool) -> usize {
    if workingset {
        MAX_NR_TIERS - 1
    } else if refs <= 1 {
        0
    } else {
        (32 - (refs - 1).leading_zeros()) as usize
    }
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

/// The refault feedback of the generation being evicted and its averages (one
/// histogram slot: `NR_HIST_GENS` 1).
#[derive(Clone, Copy, Debug, Default)]
struct Ctrl {
    refaulted: [u64; MAX_NR_TIERS],
    evicted: [u64; MAX_NR_TIERS],
    protected: [u64; MAX_NR_TIERS],
    avg_refaulted: [u64; MAX_NR_TIERS],
    avg_total: [u64; MAX_NR_TIERS],
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
    fn carry_over(&mut self) {
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
    fn tier_idx(&self) -> usize {
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

/// The generations, their lists and their feedback: what `shrink_folio_list` reaches
/// through [`ReclaimHooks`] during eviction.
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
    /// Whether the reclaimer has a walk context (`current->reclaim_state->mm_walk`):
    /// kswapd always does; others only while aging. Look-around then promotes through
    /// the walk instead of activating folios.
    walk_ctx: bool,
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
                walk_ctx: false,
                aging: LruGenAging::default(),
            },
            min_ttl: SimDuration(cfg.min_ttl_ms * 1_000_000),
            scratch: Vec::new(),
            fates: Vec::new(),
        }
    }
}

impl Gens {
    fn nr_gens(&self) -> u64 {
        self.max_seq - self.min_seq + 1
    }

    /// The sequence number of generation index `gen`, which must be live.
    fn seq_of(&self, gen: usize) -> u64 {
        let base = self.min_seq - self.min_seq % MAX_NR_GENS + gen as u64;
        if base < self.min_seq {
            base + MAX_NR_GENS
        } else {
            base
        }
    }

    fn total_pages(&self) -> u64 {
        self.nr_pages.iter().sum()
    }

    fn set_list(&mut self, pfn: Pfn, gen: usize) {
        let i = pfn.0 as usize;
        if self.on_list.len() <= i {
            self.on_list.resize((i + 1).max(self.on_list.len() * 2), 0);
        }
        self.on_list[i] = gen as u8;
    }

    fn link_head(&mut self, gen: usize, pfn: Pfn) {
        self.links.push_head(&mut self.lists[gen], pfn);
        self.set_list(pfn, gen);
    }

    fn link_tail(&mut self, gen: usize, pfn: Pfn) {
        self.links.push_tail(&mut self.lists[gen], pfn);
        self.set_list(pfn, gen);
    }

    /// Links `pfn` right after `anchor` (toward the tail), on the anchor's list.
    fn link_after(&mut self, anchor: Pfn, pfn: Pfn) {
        let gen = self.on_list[anchor.0 as usize] as usize;
        self.links.insert_after(&mut self.lists[gen], anchor, pfn);
        self.set_list(pfn, gen);
    }

    fn unlink(&mut self, pfn: Pfn) {
        let gen = self.on_list[pfn.0 as usize] as usize;
        self.links.unlink(&mut self.lists[gen], pfn);
    }

    /// `lru_gen_folio_seq`: where a folio joining the lists goes.
    fn folio_seq(&self, mm: &Mm, pfn: Pfn, active: bool, reclaiming: bool) -> u64 {
        let f = mm.frames.flags(pfn);
        let ws = u64::from(f & flag::WORKINGSET != 0);
        let swapcache = mm.frames.swap_slot(pfn).is_some();
        let gen = if active {
            MIN_NR_GENS - ws
        } else if reclaiming {
            MAX_NR_GENS
        } else if !swapcache || (f & flag::RECLAIM != 0 && (f & flag::DIRTY != 0 || mm.folio_writeback(pfn)))
        {
            MIN_NR_GENS
        } else {
            MAX_NR_GENS - ws
        };
        (self.max_seq + 1 - gen).max(self.min_seq)
    }

    /// `lru_gen_add_folio`: links the folio on the generation `folio_seq` chooses, at the
    /// tail when reclaim will want it first (`reclaiming`), else at the head. Clears
    /// `PG_active`, which only carried the choice.
    fn add_folio(&mut self, mm: &mut Mm, pfn: Pfn, active: bool, reclaiming: bool) {
        debug_assert!(!mm.frames.test(pfn, flag::LRU), "frame {} is already on a list", pfn.0);
        let gen = gen_of(self.folio_seq(mm, pfn, active, reclaiming));
        mm.frames.clear(pfn, flag::ACTIVE);
        set_gen(mm, pfn, Some(gen));
        mm.frames.set(pfn, flag::LRU);
        self.nr_pages[gen] += u64::from(mm.frames.nr_pages(pfn));
        if reclaiming {
            self.link_tail(gen, pfn);
        } else {
            self.link_head(gen, pfn);
        }
    }

    /// `lru_gen_del_folio`: takes the folio off its list.
    fn del_folio(&mut self, mm: &mut Mm, pfn: Pfn) {
        let gen = folio_gen(mm, pfn).expect("a listed folio has a generation");
        self.unlink(pfn);
        self.nr_pages[gen] -= u64::from(mm.frames.nr_pages(pfn));
        set_gen(mm, pfn, None);
        mm.frames.clear(pfn, flag::LRU);
    }

    /// `folio_update_gen`: aging found the folio young. The first time only marks it
    /// referenced; the second moves it to generation `gen` (its list catches up in
    /// `sort_folio`) and sets `PG_workingset`. Returns whether it moved.
    fn update_gen(&mut self, mm: &mut Mm, pfn: Pfn, gen: usize) -> bool {
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
    /// its references (and marking it for reclaim after its writeback, `reclaiming`).
    /// A folio aging already promoted keeps its generation. Returns the generation.
    fn inc_gen(&mut self, mm: &mut Mm, pfn: Pfn, reclaiming: bool) -> usize {
        let old = gen_of(self.min_seq);
        let cur = folio_gen(mm, pfn).expect("a listed folio has a generation");
        if cur != old {
            return cur;
        }
        let new = (old + 1) % MAX_NR_GENS as usize;
        mm.frames.clear(pfn, REFS_FLAGS);
        set_gen(mm, pfn, Some(new));
        if reclaiming {
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
    fn set_refs(mm: &mut Mm, pfn: Pfn) -> bool {
        if mm.frames.flags(pfn) & (flag::REFERENCED | flag::WORKINGSET) == 0 {
            mm.frames.clear(pfn, flag::LRU_REFS_MASK);
            mm.frames.set(pfn, flag::REFERENCED);
            return false;
        }
        mm.frames.clear(pfn, REFS_FLAGS);
        mm.frames.set(pfn, flag::WORKINGSET);
        true
    }

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

    /// `walk_update_folio`: a young folio found by the page-table walk or look-around.
    /// With a walk context it is promoted in place; without one, the second detection
    /// activates it to the youngest generation (`folio_activate`).
    fn walk_update(&mut self, mm: &mut Mm, pfn: Pfn, gen: usize, walk: bool) {
        if walk {
            if self.update_gen(mm, pfn, gen) {
                self.aging.promoted += 1;
            }
        } else if Self::set_refs(mm, pfn) && folio_gen(mm, pfn).is_some_and(|old| old != gen) {
            self.del_folio(mm, pfn);
            self.add_folio(mm, pfn, true, false);
            mm.vmstat.pgactivate += u64::from(mm.frames.nr_pages(pfn));
            self.aging.activated += 1;
        }
    }

    /// Clears the young bits of the PTEs `[lo, hi)` and updates their folios (the loop of
    /// `walk_pte_range` and `lru_gen_look_around`). Only folios on a list count
    /// (`get_pfn_folio`); consecutive PTEs of one folio update it once. Returns the
    /// young PTEs found.
    fn sweep(&mut self, mm: &mut Mm, lo: u32, hi: u32, gen: usize, walk: bool) -> u64 {
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
                    self.walk_update(mm, l, gen, walk);
                }
                last = Some(head);
            }
        }
        if let Some(l) = last {
            self.walk_update(mm, l, gen, walk);
        }
        young
    }

    /// `lru_gen_look_around`: the rmap walk found PTE `page` young (its bit is cleared
    /// already): scan up to `MIN_LRU_BATCH` PTEs around it in the same PTE table and VMA,
    /// promote the young ones, and if they are dense, tell the next aging to walk this
    /// table.
    fn look_around(&mut self, mm: &mut Mm, page: PageId) {
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
        let young = 1 + self.sweep(mm, lo, hi, gen, self.walk_ctx);
        mm.spend(u64::from(hi - lo) * mm.cost().aging_pte_ns);
        if young * YOUNG_PER_LINE >= u64::from(hi - lo) {
            self.filter_add(self.max_seq, chunk);
        }
    }

    /// `inc_min_seq`: the oldest generation is full-up (four live): move all its folios to
    /// the next generation, counting them as protected, and retire it.
    fn inc_min_seq(&mut self, mm: &mut Mm) {
        let old = gen_of(self.min_seq);
        while self.lists[old].tail != NIL {
            let pfn = Pfn(self.lists[old].tail);
            let refs = folio_refs(mm, pfn);
            let ws = mm.frames.test(pfn, flag::WORKINGSET);
            let new = self.inc_gen(mm, pfn, false);
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
    fn try_to_inc_min_seq(&mut self) -> bool {
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
    fn inc_max_seq(&mut self, mm: &mut Mm) {
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

    /// The page-table walk of one aging pass: every PTE table the Bloom filter of `seq`
    /// holds (every table of an address space new since the last pass), promoting young
    /// folios to the youngest generation; tables dense with young PTEs go into the filter
    /// of `seq + 1`.
    fn walk_mms(&mut self, mm: &mut Mm, seq: u64) {
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
                let young = self.sweep(mm, lo, hi, gen, true);
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
    fn nr_to_scan(&mut self, mm: &mut Mm, priority: u32) -> Option<u64> {
        let (age, size) = self.should_run_aging();
        if !age || priority == DEF_PRIORITY {
            return Some(size >> priority);
        }
        self.inc_max_seq(mm);
        None
    }

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
            let new = self.inc_gen(mm, pfn, false);
            self.unlink(pfn);
            self.link_head(new, pfn);
            if !lazily_promoted {
                self.ctrl.protected[tier] += u64::from(mm.frames.nr_pages(pfn));
            }
            return true;
        }
        if mm.folio_writeback(pfn) {
            let new = self.inc_gen(mm, pfn, true);
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
    fn scan_folios(&mut self, mm: &mut Mm, sc: &ScanControl, tier_idx: usize) -> u64 {
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
    fn evict_folios(&mut self, mm: &mut Mm, sc: &mut ScanControl) -> u64 {
        // Writes that completed meanwhile move their folios to the oldest generation's
        // tail first, where this pass can free them.
        self.rotate_completed(mm);
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
        self.g.walk_ctx = sc.reclaimer == Reclaimer::Kswapd;
        let res = mm.shrink_folio_list(&mut batch, sc, &mut self.g, &mut fates);
        for (&pfn, &fate) in batch.iter().zip(&fates) {
            match fate {
                Fate::Freed => {}
                Fate::Activate => self.g.add_folio(mm, pfn, true, false),
                Fate::Keep => {
                    // Rejected folios do not go back to the oldest generation.
                    let active = self.g.folio_seq(mm, pfn, false, false) == self.g.min_seq;
                    if active {
                        mm.frames.clear(pfn, REFS_FLAGS);
                    }
                    self.g.add_folio(mm, pfn, active, false);
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

    /// `lru_gen_eviction`: the token holds `min_seq` and the references; the eviction
    /// counts toward the folio's tier.
    fn eviction_shadow(&mut self, mm: &mut Mm, pfn: Pfn) -> Shadow {
        let refs = folio_refs(mm, pfn);
        let ws = mm.frames.test(pfn, flag::WORKINGSET);
        self.ctrl.evicted[tier_from_refs(refs, ws)] += u64::from(mm.frames.nr_pages(pfn));
        let token = (self.min_seq << LRU_REFS_WIDTH) | u64::from(refs.saturating_sub(1));
        let mask = (1u64 << EVICTION_BITS) - 1;
        ClassicShadow { eviction: (token & mask) as u32, workingset: ws }.encode()
    }
}

impl Lru for MgLru {
    fn add(&mut self, mm: &mut Mm, pfn: Pfn, _placement: Placement, origin: Origin) {
        let in_fault = origin == Origin::Fault;
        // folio_add_lru marks a folio added in a fault active; the classic refault
        // placement does not apply (lru_gen_refault set PG_workingset instead).
        self.g.add_folio(mm, pfn, in_fault, false);
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
            self.g.add_folio(mm, pfn, false, true);
            mm.vmstat.pgrotated += u64::from(mm.frames.nr_pages(pfn));
        }
    }

    fn shrink(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
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

    fn refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow, origin: Origin) -> Placement {
        let in_fault = origin == Origin::Fault;
        let s = ClassicShadow::decode(shadow);
        let nr = u64::from(mm.frames.nr_pages(pfn));
        mm.vmstat.workingset_refault_anon += nr;
        let token = u64::from(s.eviction);
        let seq_mask = ((1u64 << EVICTION_BITS) - 1) >> LRU_REFS_WIDTH;
        let evicted_at = token >> LRU_REFS_WIDTH;
        if (self.g.max_seq & seq_mask).abs_diff(evicted_at) >= MAX_NR_GENS {
            return Placement::Inactive;
        }
        let refs = (token & ((1 << LRU_REFS_WIDTH) - 1)) as u32 + 1;
        self.g.ctrl.refaulted[tier_from_refs(refs, s.workingset)] += nr;
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

    fn age_node(&mut self, mm: &Mm, priority: u32) -> bool {
        if self.min_ttl.0 == 0 {
            return true;
        }
        // lruvec_is_reclaimable: too small to help, or the oldest generation younger
        // than min_ttl.
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
        let g = &self.g;
        assert!(g.min_seq <= g.max_seq, "min_seq {} > max_seq {}", g.min_seq, g.max_seq);
        let n = g.nr_gens();
        assert!((MIN_NR_GENS..=MAX_NR_GENS).contains(&n), "{n} live generations");
        let mut counted = [0u64; MAX_NR_GENS as usize];
        let mut listed = 0u64;
        let total = g.total_pages();
        for (list_gen, l) in g.lists.iter().enumerate() {
            let live = (g.min_seq..=g.max_seq).any(|s| gen_of(s) == list_gen);
            g.links.walk(l, &format!("gen {list_gen}"), |pfn| {
                let cur = pfn.0;
                assert!(live, "folio {cur} on the list of a retired generation {list_gen}");
                assert_eq!(g.on_list[cur as usize] as usize, list_gen, "frame {cur}: list index");
                assert!(mm.frames.test(pfn, flag::IN_USE), "gen {list_gen}: free frame {cur} on a list");
                assert!(mm.frames.test(pfn, flag::LRU), "gen {list_gen}: frame {cur} lacks the LRU flag");
                assert!(!mm.frames.test(pfn, flag::ACTIVE), "frame {cur}: PG_active on a generation");
                assert!(mm.frames.is_head(pfn), "frame {cur}: a tail page on a list");
                let gen =
                    folio_gen(mm, pfn).unwrap_or_else(|| panic!("frame {cur} listed without a generation"));
                assert!(
                    g.seq_of(gen) >= g.seq_of(list_gen),
                    "frame {cur}: generation {gen} older than its list {list_gen}"
                );
                let nr = u64::from(mm.frames.nr_pages(pfn));
                counted[gen] += nr;
                listed += nr;
                listed <= total
            });
        }
        assert_eq!(counted, g.nr_pages, "pages per generation vs nr_pages");
        let flagged: u64 = mm
            .frames
            .folios()
            .filter(|&p| mm.frames.test(p, flag::LRU))
            .map(|p| u64::from(mm.frames.nr_pages(p)))
            .sum();
        assert_eq!(listed, flagged, "pages of folios flagged LRU vs pages on generations");
        for p in mm.frames.folios() {
            let on = mm.frames.test(p, flag::LRU);
            assert_eq!(on, folio_gen(mm, p).is_some(), "frame {}: LRU flag vs generation bits", p.0);
        }
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

/// `SWAP_CLUSTER_MAX`, kswapd's smallest target.
const SWAP_TARGET: u64 = crate::mm::vmscan::SWAP_CLUSTER_MAX;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_follow_log2_of_references() {
        assert_eq!(tier_from_refs(0, false), 0);
        assert_eq!(tier_from_refs(1, false), 0);
        assert_eq!(tier_from_refs(2, false), 1);
        assert_eq!(tier_from_refs(3, false), 2);
        assert_eq!(tier_from_refs(4, false), 2);
        assert_eq!(tier_from_refs(0, true), MAX_NR_TIERS - 1);
    }

    #[test]
    fn the_controller_protects_only_a_tier_that_refaults_more() {
        let mut c = Ctrl::default();
        // No refaults anywhere: nothing is protected.
        assert_eq!(c.tier_idx(), MAX_NR_TIERS - 1);
        // The working-set tier refaults at 50%, tier 0 at 10%: protect it.
        c.evicted[0] = 10_000;
        c.refaulted[0] = 1_000;
        c.evicted[3] = 1_000;
        c.refaulted[3] = 500;
        assert_eq!(c.tier_idx(), 2);
        // The same rate as tier 0 is within the 2:3 margin: no protection.
        c.refaulted[3] = 100;
        assert_eq!(c.tier_idx(), MAX_NR_TIERS - 1);
        // Fewer than MIN_LRU_BATCH refaults never engage it.
        c.refaulted[3] = 63;
        c.refaulted[0] = 0;
        assert_eq!(c.tier_idx(), MAX_NR_TIERS - 1);
    }

    #[test]
    fn averages_halve_at_each_carry_over() {
        let mut c = Ctrl::default();
        c.refaulted[0] = 100;
        c.evicted[0] = 300;
        c.protected[0] = 100;
        c.carry_over();
        assert_eq!((c.avg_refaulted[0], c.avg_total[0]), (50, 200));
        assert_eq!((c.refaulted[0], c.evicted[0], c.protected[0]), (0, 0, 0));
        c.carry_over();
        assert_eq!((c.avg_refaulted[0], c.avg_total[0]), (25, 100));
    }
}
