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
//! Simplified: only anonymous folios exist (no file pages); a reclaimer that meets a folio
//! it already queued for writeback keeps it (cgroup v1 limit reclaim) or activates it,
//! instead of waiting on the writeback.

use super::frames::flag;
use super::pagetable::Pte;
use super::swap::Shadow;
use super::Mm;
use crate::block::Bio;
use crate::device::IoDir;
use crate::ids::Pfn;

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
    pub(crate) owner: usize,
    pub(crate) cpu: usize,
    /// Age the active lists whatever the statistics say (the retry of a reclaim that freed
    /// nothing because it skipped them).
    pub(crate) force_deactivate: bool,
    /// An LRU left an active list it was asked to scan unaged.
    pub(crate) skipped_deactivate: bool,
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
    pub(crate) reclaimed: u64,
    pub(crate) pageouts: u64,
}

impl Mm {
    /// The rmap walk of `folio_referenced`: tests and clears the young bit of the PTE
    /// mapping `pfn`.
    pub(crate) fn folio_referenced(&mut self, pfn: Pfn) -> bool {
        let Some(page) = self.frames.owner(pfn) else { return false };
        let pte = self.pt.pte_mut(page);
        let young = pte.accessed();
        pte.clear_accessed();
        young
    }

    /// `activate_locked` in `shrink_folio_list`: the mechanics (drop the swap copy when
    /// swap is getting full, count `pgactivate`); the LRU promotes the folio on putback.
    fn activate_locked(&mut self, pfn: Pfn) -> Fate {
        if self.swap.vm_swap_full() {
            self.folio_free_swap(pfn);
        }
        self.vmstat.pgactivate += 1;
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
    /// happened to `folios[i]`; `lru` answers the reference checks and encodes shadows.
    pub(crate) fn shrink_folio_list(
        &mut self,
        folios: &[Pfn],
        sc: &ScanControl,
        lru: &mut impl ReclaimHooks,
        fates: &mut Vec<Fate>,
    ) -> ShrinkResult {
        fates.clear();
        let mut res = ShrinkResult::default();
        self.count_scan(sc, folios.len() as u64);
        for &pfn in folios {
            let fate = self.shrink_folio(pfn, sc, lru, &mut res);
            fates.push(fate);
        }
        self.count_steal(sc, res.reclaimed);
        res
    }

    fn shrink_folio(
        &mut self,
        pfn: Pfn,
        sc: &ScanControl,
        lru: &mut impl ReclaimHooks,
        res: &mut ShrinkResult,
    ) -> Fate {
        self.spend(self.cfg.cpu.reclaim_scan_ns);
        let f = self.frames.flags(pfn);
        if f & flag::LOCKED != 0 {
            // A read is in flight: the trylock fails and the folio is kept.
            return Fate::Keep;
        }
        if f & flag::WRITEBACK != 0 {
            self.frames.set(pfn, flag::RECLAIM);
            if self.cfg.memcg.version == 2 || sc.reclaimer != Reclaimer::Memcg {
                return self.activate_locked(pfn);
            }
            return Fate::Keep;
        }
        match lru.folio_check_references(self, pfn) {
            FolioReferences::Activate => return self.activate_locked(pfn),
            FolioReferences::Keep => return Fate::Keep,
            FolioReferences::Reclaim => {}
        }
        // Reclaim. Give the folio a swap slot if it has none (folio_alloc_swap).
        let slot = match self.frames.swap_slot(pfn) {
            Some(s) => s,
            None => match self.swap.alloc(sc.cpu, pfn) {
                Some(s) => {
                    self.frames.set_swap_slot(pfn, Some(s));
                    self.frames.set(pfn, flag::DIRTY);
                    s
                }
                None => return self.activate_locked(pfn),
            },
        };
        // try_to_unmap: the PTE becomes a swap entry; its dirty bit moves to the folio.
        if let Some(page) = self.frames.owner(pfn) {
            if self.pt.pte(page).dirty() {
                self.frames.set(pfn, flag::DIRTY);
            }
            *self.pt.pte_mut(page) = Pte::swap(slot);
            self.swap.inc_count(slot);
            self.frames.set_owner(pfn, None);
        }
        if self.frames.test_and_clear(pfn, flag::DIRTY) {
            // pageout(): write to the slot.
            self.vmstat.pswpout += 1;
            self.vmstat.pgpgout += 4;
            res.pageouts += 1;
            self.spend(self.cfg.cpu.swapout_submit_ns);
            let now = self.now;
            let bio = Bio { device: slot.device, dir: IoDir::Write, offset: slot.offset, pfn };
            if self.block.is_synchronous(slot.device) {
                // The write completed in this context: the folio is clean now and is
                // freed in the same pass.
                self.now = self.block.submit_sync(bio, now);
            } else {
                // The folio is freed by a later scan, after the write completes.
                self.frames.set(pfn, flag::WRITEBACK | flag::RECLAIM);
                self.nr_writeback += 1;
                self.block.submit(sc.owner, bio, now, &mut self.dispatched);
                return Fate::Keep;
            }
        }
        // Clean: __remove_mapping leaves a shadow entry in the swap cache.
        let shadow = lru.eviction_shadow(self, pfn);
        self.swap.cache_delete(slot, Some(shadow));
        self.frames.set_swap_slot(pfn, None);
        self.free_frame(pfn);
        self.spend(self.cfg.cpu.reclaim_free_ns);
        res.reclaimed += 1;
        Fate::Freed
    }
}
