//! Reclaim mechanics of `mm/vmscan.c`: the scan control and `shrink_folio_list`.
//!
//! An LRU implementation isolates folios and hands them here; this module performs what
//! happens to each one (the trylock, writeback, reference check, swap-slot allocation,
//! unmapping, pageout, freeing with a shadow) and reports its [`Fate`]. Two decisions in
//! that sequence belong to the LRU policy rather than to the mechanics, and are asked of
//! it through [`ReclaimHooks`]: whether a folio was referenced (`folio_check_references`
//! for the classic lists, the generation and tier logic for MGLRU) and what shadow entry an
//! evicted folio leaves behind.
//!
//! Simplified: only anonymous folios exist (no file pages). A cgroup v1 limit reclaimer that
//! meets a folio it already sent to the disk, still under writeback, waits for the write as
//! the kernel's does (`folio_wait_writeback`), but not in the middle of its batch: it finishes
//! the batch, ends the reclaim, and its charge sleeps until a write completes and then
//! retries; the kernel waits on that folio's own write and carries on with the batch.

use super::frames::flag;
use super::page_io::Pageout;
use super::pagetable::Pte;
use super::swap::Shadow;
use super::Mm;
use crate::block::PlugOwner;
use crate::ids::{CpuId, Pfn, SwapSlot};
use crate::thp::PMD_ORDER;

/// `SWAP_CLUSTER_MAX`: folios isolated per batch, and the unit of a charge's reclaim.
pub(crate) const SWAP_CLUSTER_MAX: u64 = 32;

/// Who is reclaiming; decides which global counters move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reclaimer {
    Kswapd,
    /// Direct reclaim by an allocating task (`try_to_free_pages`).
    Direct,
    /// Memory-cgroup limit reclaim by the charging task (`try_to_free_mem_cgroup_pages`).
    Memcg,
}

/// `DEF_PRIORITY`: a reclaim pass starts by scanning 1/2^12 of the lists.
pub(crate) const DEF_PRIORITY: u32 = 12;
/// `MAX_RECLAIM_RETRIES`: rounds of reclaim without progress before giving up.
pub(crate) const MAX_RECLAIM_RETRIES: u32 = 16;

/// The parts of the kernel's `struct scan_control` the model uses.
#[derive(Clone, Debug)]
pub(crate) struct ScanControl {
    pub(crate) reclaimer: Reclaimer,
    pub(crate) priority: u32,
    pub(crate) nr_to_reclaim: u64,
    pub(crate) nr_scanned: u64,
    pub(crate) nr_reclaimed: u64,
    pub(crate) swappiness: u32,
    /// Plug owner and CPU of the reclaiming context.
    pub(crate) owner: PlugOwner,
    pub(crate) cpu: CpuId,
    /// Age the active lists whatever the statistics say (the retry of a reclaim that freed
    /// nothing because it skipped them).
    pub(crate) force_deactivate: bool,
    /// An LRU left an active list it was asked to scan unaged.
    pub(crate) skipped_deactivate: bool,
    /// Cgroup v1 limit reclaim met a folio it had already sent to the disk still under
    /// writeback: the kernel's reclaimer waits for that write (`folio_wait_writeback`).
    pub(crate) wait_writeback: bool,
}

impl ScanControl {
    /// A reclaim by `reclaimer` in the context of `owner` on `cpu`, starting at `priority`
    /// and aiming to free `nr_to_reclaim` folios, with nothing scanned yet.
    pub(crate) fn new(
        reclaimer: Reclaimer,
        priority: u32,
        nr_to_reclaim: u64,
        swappiness: u32,
        (owner, cpu): (PlugOwner, CpuId),
    ) -> ScanControl {
        ScanControl {
            reclaimer,
            priority,
            nr_to_reclaim,
            nr_scanned: 0,
            nr_reclaimed: 0,
            swappiness,
            owner,
            cpu,
            force_deactivate: false,
            skipped_deactivate: false,
            wait_writeback: false,
        }
    }
}

/// What `shrink_folio_list` decided for one isolated folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Freed; no longer on any list.
    Freed,
    /// Put back where the LRU keeps folios it has no reason to promote (the classic
    /// inactive list; MGLRU's generation the folio was in).
    Keep,
    /// Put back promoted (`activate_locked`: the classic active list; MGLRU's youngest
    /// generation). `pgactivate` is already counted.
    Activate,
}

/// The kernel's `enum folio_references`, as far as anonymous folios need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FolioReferences {
    /// Not referenced: reclaim it.
    Reclaim,
    /// Referenced once: keep it where it is.
    Keep,
    /// Referenced again: promote it.
    Activate,
}

/// What `shrink_folio_list` asks of the LRU whose folios it processes. Called once per
/// isolated folio, so `shrink_folio_list` is generic over it and the calls inline.
pub(crate) trait ReclaimHooks {
    /// Whether an isolated folio was used since the last look (`folio_check_references`).
    /// May test and clear the folio's young bits and flags.
    fn folio_check_references(&mut self, mm: &mut Mm, pfn: Pfn) -> FolioReferences;
    /// The shadow entry an evicted folio leaves in its swap-cache slot
    /// (`workingset_eviction`, `lru_gen_eviction`).
    fn eviction_shadow(&mut self, mm: &mut Mm, pfn: Pfn) -> Shadow;
}

/// Results of one `shrink_folio_list` call.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ShrinkResult {
    /// Pages freed.
    pub(crate) reclaimed: u64,
    /// Pages written (`nr_pageout`).
    pub(crate) pageouts: u64,
}

impl Mm {
    /// Prefetches, for every folio of a reclaim batch, the PTE that maps it and its swap
    /// slot's words, before the batch is processed one folio at a time: the host's cache
    /// misses on them then overlap instead of stalling each folio in turn. Changes nothing.
    pub(crate) fn warm_batch(&self, folios: &[Pfn]) {
        for &pfn in folios {
            if let Some(page) = self.frames.owner(pfn) {
                self.pt.prefetch_pte(page);
            }
            if let Some(slot) = self.frames.swap_slot(pfn) {
                self.swap.prefetch_slot(slot);
            }
        }
    }

    /// The rmap walk of `folio_referenced`: tests and clears the young bits of the PTEs
    /// mapping the folio at `pfn`; referenced if any was young (one mapping counts once).
    #[inline]
    pub(crate) fn folio_referenced(&mut self, pfn: Pfn) -> bool {
        let nr = self.frames.nr_pages(pfn);
        if nr == 1 {
            // Order 0, most folios: one PTE, without the loop.
            let Some(page) = self.frames.owner(pfn) else { return false };
            let pte = self.pt.pte_mut(page);
            let young = pte.accessed();
            pte.clear_accessed();
            return young;
        }
        let mut young = false;
        for i in 0..nr {
            let Some(page) = self.frames.owner(Pfn(pfn.0 + i)) else { continue };
            let pte = self.pt.pte_mut(page);
            young |= pte.accessed();
            pte.clear_accessed();
        }
        young
    }

    /// `activate_locked` in `shrink_folio_list`: the mechanics (drop the swap copy when
    /// swap is getting full, count `pgactivate` in pages); the LRU promotes the folio on
    /// putback.
    fn activate_locked(&mut self, pfn: Pfn) -> Fate {
        if self.swap.vm_swap_full() {
            self.folio_free_swap(pfn);
        }
        self.vmstat.pgactivate += u64::from(self.frames.nr_pages(pfn));
        Fate::Activate
    }

    fn count_scan(&mut self, sc: &ScanControl, n: u64) {
        self.vmstat.pgscan_anon += n;
        match sc.reclaimer {
            Reclaimer::Kswapd => self.vmstat.pgscan_kswapd += n,
            Reclaimer::Direct => self.vmstat.pgscan_direct += n,
            Reclaimer::Memcg => {}
        }
    }

    fn count_steal(&mut self, sc: &ScanControl, n: u64) {
        self.vmstat.pgsteal_anon += n;
        match sc.reclaimer {
            Reclaimer::Kswapd => self.vmstat.pgsteal_kswapd += n,
            Reclaimer::Direct => self.vmstat.pgsteal_direct += n,
            Reclaimer::Memcg => {}
        }
    }

    /// `shrink_folio_list` for isolated anonymous folios. `fates[i]` receives what
    /// happened to `folios[i]`; `lru` answers the reference checks and encodes shadows. A
    /// large folio that cannot get swap slots for its whole size is split, and its other
    /// pages are appended to `folios` and processed in the same pass, as
    /// `split_folio_to_list` does.
    pub(crate) fn shrink_folio_list(
        &mut self,
        folios: &mut Vec<Pfn>,
        sc: &mut ScanControl,
        lru: &mut impl ReclaimHooks,
        fates: &mut Vec<Fate>,
    ) -> ShrinkResult {
        fates.clear();
        let mut res = ShrinkResult::default();
        let pages: u64 = folios.iter().map(|&p| u64::from(self.frames.nr_pages(p))).sum();
        self.warm_batch(folios);
        self.count_scan(sc, pages);
        let mut i = 0;
        while i < folios.len() {
            let fate = self.shrink_folio(folios[i], sc, lru, &mut res, folios);
            fates.push(fate);
            i += 1;
        }
        self.count_steal(sc, res.reclaimed);
        res
    }

    /// `folio_alloc_swap` for the folio at `pfn`: `2^order` aligned slots of a cluster of
    /// that order; a large folio that cannot have them is split (`swpout_fallback`) and
    /// its tail pages queued on `list`, and the head then tries alone.
    fn folio_alloc_swap(&mut self, pfn: Pfn, cpu: CpuId, list: &mut Vec<Pfn>) -> Option<SwapSlot> {
        let order = self.frames.order(pfn);
        if order > 0 {
            if let Some(first) = self.swap.alloc_folio(cpu, order, pfn) {
                for i in 0..1u32 << order {
                    self.frames.set_swap_slot(Pfn(pfn.0 + i), Some(first.nth(i)));
                }
                return Some(first);
            }
            self.mthp.at(order).swpout_fallback += 1;
            if order == PMD_ORDER {
                self.vmstat.thp_swpout_fallback += 1;
            }
            let nr = self.split_folio(pfn);
            list.extend((1..nr).map(|i| Pfn(pfn.0 + i)));
        }
        let s = self.swap.alloc(cpu, pfn)?;
        self.frames.set_swap_slot(pfn, Some(s));
        Some(s)
    }

    /// The part of `swap_writeout` that ends before the device: a folio of zeros only
    /// marks its slots in the zero map (`swpout_zero`), and zswap may take the folio
    /// (`zswpout`). Either way the folio is clean now and reclaim frees it in this pass.
    /// Returns false when the folio must be written to the device.
    fn swap_writeout_local(&mut self, pfn: Pfn, slot: SwapSlot, nr: u32) -> bool {
        let zero = self.folio_zero_filled(pfn);
        for i in 0..nr {
            self.swap.set_zero(slot.nth(i), zero);
        }
        if zero {
            self.vmstat.swpout_zero += u64::from(nr);
            return true;
        }
        if !self.zswap_on() {
            return false;
        }
        if self.zswap_store(pfn, slot) {
            self.vmstat.zswpout += u64::from(nr);
            let order = self.frames.order(pfn);
            if order > 0 {
                self.mthp.at(order).zswpout += 1;
            }
            return true;
        }
        if self.zswap.full {
            // queue_work(shrink_wq, ...): the engine runs the pool-limit worker.
            self.queue_zswap_worker();
        }
        false
    }

    fn shrink_folio(
        &mut self,
        pfn: Pfn,
        sc: &mut ScanControl,
        lru: &mut impl ReclaimHooks,
        res: &mut ShrinkResult,
        list: &mut Vec<Pfn>,
    ) -> Fate {
        self.spend(self.cfg.cpu.reclaim_scan_ns);
        let f = self.frames.flags(pfn);
        if f & flag::LOCKED != 0 {
            // A read is in flight: the trylock fails and the folio is kept.
            return Fate::Keep;
        }
        if self.folio_writeback(pfn) {
            // Writeback throttling is "sane" for global reclaim and cgroup v2; there, and
            // for a folio not yet marked for reclaim, the folio is marked and activated
            // (case 2). Cgroup v1 limit reclaim that meets a folio it marked itself waits
            // for the write instead (case 3): the reclaimer stops being a source of writes
            // until the disk catches up.
            let v1_limit_reclaim = self.cfg.memcg.version == 1 && sc.reclaimer == Reclaimer::Memcg;
            if v1_limit_reclaim && f & flag::RECLAIM != 0 {
                sc.wait_writeback = true;
                return Fate::Keep;
            }
            self.frames.set(pfn, flag::RECLAIM);
            return self.activate_locked(pfn);
        }
        match lru.folio_check_references(self, pfn) {
            FolioReferences::Activate => return self.activate_locked(pfn),
            FolioReferences::Keep => return Fate::Keep,
            FolioReferences::Reclaim => {}
        }
        // Reclaim. Give the folio swap slots if it has none (folio_alloc_swap).
        let slot = match self.frames.swap_slot(pfn) {
            Some(s) => s,
            None => match self.folio_alloc_swap(pfn, sc.cpu, list) {
                Some(s) => {
                    self.frames.set(pfn, flag::DIRTY);
                    s
                }
                None => return self.activate_locked(pfn),
            },
        };
        let order = self.frames.order(pfn);
        let nr = 1u32 << order;
        self.note_folio_contents(pfn);
        // try_to_unmap: the PTEs become swap entries; their dirty bits move to the folio.
        for i in 0..nr {
            let frame = Pfn(pfn.0 + i);
            if let Some(page) = self.frames.owner(frame) {
                if self.pt.pte(page).dirty() {
                    self.frames.set(pfn, flag::DIRTY);
                }
                *self.pt.pte_mut(page) = Pte::swap(slot.nth(i));
                self.swap.inc_count(slot.nth(i));
                self.frames.set_owner(frame, None);
            }
        }
        if self.frames.test_and_clear(pfn, flag::DIRTY) && !self.swap_writeout_local(pfn, slot, nr) {
            res.pageouts += u64::from(nr);
            if self.pageout(pfn, slot, sc.owner) == Pageout::UnderWriteback {
                // The folio is freed by a later scan, after the write completes.
                return Fate::Keep;
            }
        }
        // Clean: __remove_mapping leaves a shadow entry in every slot of the folio.
        let shadow = lru.eviction_shadow(self, pfn);
        for i in 0..nr {
            self.swap.cache_delete(slot.nth(i), Some(shadow));
            self.frames.set_swap_slot(Pfn(pfn.0 + i), None);
        }
        self.free_frame(pfn);
        self.spend(self.cfg.cpu.reclaim_free_ns);
        res.reclaimed += u64::from(nr);
        Fate::Freed
    }
}
