//! The classic two-list anonymous LRU of `mm/vmscan.c` and `mm/swap.c`.
//!
//! New anonymous folios and swapped-in folios start on the inactive list (since 5.9)
//! unless refault detection activates them. Reclaim isolates from the inactive tail in
//! batches of `SWAP_CLUSTER_MAX` (32); a folio needs two scans with an access in between
//! to be activated (`folio_check_references`). The active list is aged only when the
//! inactive list is too small (`inactive_is_low`) or refaults activated anonymous pages
//! since the last cycle, and aging deactivates every anonymous folio it isolates, accessed
//! or not. How much of the list to scan per priority comes from `get_scan_count`'s
//! cost-based anon/file balance.
//!
//! The sizes and the activation count that these decisions read are the memory cgroup's
//! statistics as the kernel reads them (`lruvec_page_state`): aggregated per-CPU counters
//! that only a flush brings up to date, and that the periodic flusher refreshes every
//! `FLUSH_TIME` (2 s). Between flushes, `inactive_is_low`, the refault-driven aging and the
//! refault distance's workingset size all see the values of the last flush, which is why
//! the kernel's active list is aged in bursts rather than after every refault. The
//! flusher runs on a 2 s grid of its own, unrelated to when the workload started: its
//! phase against the run is drawn from the seed, and until its first flush the memory
//! cgroup, created for the run, reads as empty.
//!
//! Lists hold folios and count them in pages, as the kernel's list sizes do; isolation
//! takes folios until the batch's pages are reached.
//!
//! `shrink_lruvec` scans in rounds while the inactive anonymous list or a file list has
//! some of its target left, and reaches the active anonymous list only in those rounds (or
//! in the rebalancing after them, when the flushed sizes call the inactive list low). So
//! when the inactive list has drained between two flushes and no file pages are charged
//! to the group, a reclaim scans nothing, sets no `skipped_deactivate` for a forced second
//! sweep, and frees nothing: sixteen such in a row end a charge in the memcg OOM killer
//! (seen on the kernel with the vmscan tracepoints: reclaims of one page from an inactive
//! list of one or two, then sixteen of none, 50 ms before the next periodic flush).
//!
//! Simplified: the only file pages are the hot page cache of `memcg.page_cache`, scanned
//! and kept (always referenced) and left out of the cost balance, so the file side of the
//! balance has zero cost; memory.low/min protection, mlock and the unevictable list are
//! absent.
//! The flush happens at the first read after each boundary of the grid, not on a timer of
//! its own, and no other reader forces one (the ratelimited flushes of the kernel only act
//! when the periodic worker is a full cycle late).

use super::seq::SeqLists;
use super::{Fate, Lru, LruSizes, Origin, Placement, ScanControl};
use crate::ids::Pfn;
use crate::mm::frames::flag;
use crate::mm::swap::Shadow;
use crate::mm::vmscan::{FolioReferences, ReclaimHooks, Reclaimer, SWAP_CLUSTER_MAX};
use crate::mm::Mm;
use crate::time::SimTime;

const INACTIVE: usize = 0;
const ACTIVE: usize = 1;

/// `FLUSH_TIME`: the period of the memory cgroup statistics flusher, in nanoseconds.
const FLUSH_TIME_NS: u64 = 2_000_000_000;

/// The memory cgroup's statistics as of the last flush (what `lruvec_page_state` returns).
#[derive(Clone, Copy, Debug, Default)]
struct FlushedStats {
    /// The first instant at which the periodic flusher runs again.
    next_flush: SimTime,
    inactive_anon: u64,
    active_anon: u64,
    workingset_activate_anon: u64,
}

/// The classic LRU state for the one memory cgroup of the model.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClassicLru {
    /// The inactive and the active list.
    lists: SeqLists<2>,
    /// Pages on each list.
    lens: [u64; 2],
    /// `lruvec->anon_cost` / `file_cost` (`lru_note_cost`).
    anon_cost: u64,
    file_cost: u64,
    /// `workingset_activate_anon`, as flushed, when the last reclaim cycle ended
    /// (`snapshot_refaults`).
    refaults_snapshot: u64,
    /// Where the flusher's 2 s grid falls: it flushes at this time and every
    /// `FLUSH_TIME_NS` after it.
    flush_phase_ns: u64,
    /// The statistics reclaim decisions read.
    flushed: FlushedStats,
    scratch: Vec<Pfn>,
    fates: Vec<Fate>,
    /// Exact LRU mode: one list in access order, no second chance, eviction of exactly
    /// `nr_to_reclaim` folios from the tail, and a memcg charge at the limit asks for one
    /// page, not `SWAP_CLUSTER_MAX`: with no readahead its misses are a textbook LRU
    /// cache's. A reference model for tests and comparisons, not a kernel policy.
    exact: bool,
    /// Per list, how many entries from its tail [`Lru::warm_tails`] has looked at since the
    /// last isolation; host speed only.
    warmed: [usize; 2],
}

/// Entries from a list's tail whose frames [`Lru::warm_tails`] loads ahead of isolation:
/// two batches of `SWAP_CLUSTER_MAX`.
const WARM_AHEAD: usize = 64;
/// Steps after loading a frame's metadata at which its PTE and swap slot, which the
/// metadata names, are loaded in turn.
const WARM_LAG: usize = 8;

impl ClassicLru {
    /// The classic LRU of a run of root `seed`: its statistics flusher's phase, uniform
    /// over one period, from the stream `memcg.stats_flush`.
    pub(crate) fn new(seed: u64) -> ClassicLru {
        use rand::RngCore;
        let phase = crate::rng::SimRng::derive(seed, "memcg.stats_flush").next_u64() % FLUSH_TIME_NS;
        ClassicLru {
            flush_phase_ns: phase,
            flushed: FlushedStats { next_flush: SimTime(phase), ..FlushedStats::default() },
            ..ClassicLru::default()
        }
    }

    /// The exact-LRU reference mode.
    pub(crate) fn exact() -> ClassicLru {
        ClassicLru { exact: true, ..ClassicLru::default() }
    }

    fn push_head(&mut self, mm: &mut Mm, which: usize, pfn: Pfn, nr: u32) {
        self.lists.push_head(&mut mm.frames, which, pfn);
        self.lens[which] += u64::from(nr);
    }

    fn push_tail(&mut self, mm: &mut Mm, which: usize, pfn: Pfn, nr: u32) {
        self.lists.push_tail(&mut mm.frames, which, pfn);
        self.lens[which] += u64::from(nr);
    }

    fn unlink(&mut self, mm: &mut Mm, which: usize, pfn: Pfn, nr: u32) {
        self.lists.unlink(&mut mm.frames, which, pfn);
        self.lens[which] -= u64::from(nr);
    }

    fn which(mm: &Mm, pfn: Pfn) -> usize {
        if mm.frames.test(pfn, flag::ACTIVE) {
            ACTIVE
        } else {
            INACTIVE
        }
    }

    /// Takes folios off the tail of `which` until `n` pages are taken
    /// (`isolate_lru_folios`, which counts a large folio's pages); returns the pages.
    fn isolate(&mut self, mm: &mut Mm, which: usize, n: u64) -> u64 {
        self.scratch.clear();
        let mut pages = 0;
        while pages < n {
            let Some(pfn) = self.lists.pop_tail(which) else { break };
            let nr = mm.frames.nr_pages(pfn);
            self.lens[which] -= u64::from(nr);
            self.scratch.push(pfn);
            pages += u64::from(nr);
        }
        // Apart from the walk, so that the host's misses on the frames overlap.
        for &pfn in &self.scratch {
            mm.frames.clear(pfn, flag::LRU);
        }
        self.warmed[which] = self.warmed[which].saturating_sub(self.scratch.len());
        pages
    }

    /// `move_folios_to_lru`: survivors go to the head of the list their flag names.
    fn putback(&mut self, mm: &mut Mm, pfn: Pfn) {
        let which = Self::which(mm, pfn);
        let nr = mm.frames.nr_pages(pfn);
        if which == ACTIVE {
            mm.workingset_age(u64::from(nr));
        }
        mm.frames.set(pfn, flag::LRU);
        self.push_head(mm, which, pfn, nr);
    }

    /// The statistics as the last periodic flush left them, flushing first if a flush
    /// period boundary has passed since.
    fn flushed_stats(&mut self, mm: &Mm) -> FlushedStats {
        if mm.now() >= self.flushed.next_flush {
            let since_phase = mm.now().0 - self.flush_phase_ns;
            self.flushed = FlushedStats {
                next_flush: SimTime(self.flush_phase_ns + (since_phase / FLUSH_TIME_NS + 1) * FLUSH_TIME_NS),
                inactive_anon: self.lens[INACTIVE],
                active_anon: self.lens[ACTIVE],
                workingset_activate_anon: mm.vmstat.workingset_activate_anon,
            };
        }
        self.flushed
    }

    /// `inactive_is_low` for anon, on the flushed list sizes.
    fn inactive_is_low(&mut self, mm: &Mm) -> bool {
        let stats = self.flushed_stats(mm);
        inactive_is_low(stats.inactive_anon, stats.active_anon)
    }
}

/// `inactive_is_low` for anon: inactive × ratio < active with ratio = isqrt(10 × GiB).
fn inactive_is_low(inactive: u64, active: u64) -> bool {
    let gb = (inactive + active) >> 18;
    let ratio = if gb > 0 { (10 * gb).isqrt() } else { 1 };
    inactive * ratio < active
}

impl ClassicLru {
    /// `shrink_active_list`: deactivate up to `n` folios from the active tail.
    fn shrink_active(&mut self, mm: &mut Mm, sc: &mut ScanControl, n: u64) {
        let scanned = self.isolate(mm, ACTIVE, n);
        let batch = std::mem::take(&mut self.scratch);
        mm.warm_batch(&batch);
        for &pfn in &batch {
            // The rmap walk clears young bits; for anonymous folios the result does not
            // matter: they are deactivated regardless.
            mm.folio_referenced(pfn);
            mm.frames.clear(pfn, flag::ACTIVE);
            mm.frames.set(pfn, flag::WORKINGSET);
            self.putback(mm, pfn);
        }
        mm.spend(batch.len() as u64 * mm.cost().reclaim_scan_ns);
        if sc.reclaimer != Reclaimer::Memcg {
            mm.vmstat.pgrefill += scanned;
        }
        mm.vmstat.pgdeactivate += scanned;
        self.scratch = batch;
    }

    /// `shrink_inactive_list`: reclaim from up to `n` folios at the inactive tail.
    fn shrink_inactive(&mut self, mm: &mut Mm, sc: &mut ScanControl, n: u64) -> u64 {
        // Writes that completed while this reclaimer scanned move their folios to the
        // tail first, where this batch can free them.
        self.rotate_completed(mm, sc.cpu);
        let scanned = self.isolate(mm, INACTIVE, n);
        let mut batch = std::mem::take(&mut self.scratch);
        let mut fates = std::mem::take(&mut self.fates);
        let mut hooks = ClassicReclaimHooks { exact: self.exact };
        let res = mm.shrink_folio_list(&mut batch, sc, &mut hooks, &mut fates);
        for (&pfn, &fate) in batch.iter().zip(&fates) {
            match fate {
                Fate::Freed => {}
                Fate::Keep => self.putback(mm, pfn),
                Fate::Activate => {
                    mm.frames.set(pfn, flag::ACTIVE);
                    self.putback(mm, pfn);
                }
            }
        }
        sc.nr_scanned += scanned;
        sc.nr_reclaimed += res.reclaimed;
        // lru_note_cost: pageouts weigh SWAP_CLUSTER_MAX each, failed scans one each.
        self.anon_cost += res.pageouts * SWAP_CLUSTER_MAX + (scanned - res.reclaimed);
        let total = self.lens[INACTIVE] + self.lens[ACTIVE];
        if self.anon_cost + self.file_cost > total / 4 {
            self.anon_cost /= 2;
            self.file_cost /= 2;
        }
        self.scratch = batch;
        self.fates = fates;
        res.reclaimed
    }

    /// `get_scan_count`'s target for the file lists, which hold only the hot page cache
    /// (`memcg.page_cache`): all of it at priority 0 (`SCAN_EQUAL`), otherwise its size
    /// shifted by the priority. Simplified: the file side's cost-based share is not applied
    /// (its pages are never reclaimed, so they never weigh in the balance).
    fn file_scan_target(&self, mm: &Mm, sc: &ScanControl) -> u64 {
        if self.exact {
            return 0;
        }
        mm.page_cache_pages() >> sc.priority
    }

    /// `get_scan_count` for the anonymous lists: pages to scan on [inactive, active].
    fn scan_targets(&self, mm: &Mm, sc: &ScanControl) -> [u64; 2] {
        if !mm.can_reclaim_anon() {
            return [0, 0];
        }
        if sc.reclaimer == Reclaimer::Memcg && sc.swappiness == 0 {
            return [0, 0];
        }
        // Fraction of the anon lists to scan: 1 for SCAN_EQUAL and SCAN_ANON, the
        // cost-based share for SCAN_FRACT.
        let (num, den) = if sc.priority == 0 && sc.swappiness > 0 {
            (1, 1)
        } else if sc.reclaimer != Reclaimer::Memcg {
            // Global reclaim with no file pages: file_is_tiny forces anon-only scanning.
            (1, 1)
        } else {
            let total = self.anon_cost + self.file_cost;
            let a = total + self.anon_cost;
            let f = total + self.file_cost;
            let t = a + f;
            let ap = u64::from(sc.swappiness) * (t + 1) / (a + 1);
            let fp = u64::from(200 - sc.swappiness) * (t + 1) / (f + 1);
            (ap, (ap + fp).max(1))
        };
        let mut out = [0; 2];
        for (i, len) in self.lens.iter().enumerate() {
            out[i] = (len >> sc.priority) * num / den;
        }
        out
    }
}

/// The classic lists' answers to `shrink_folio_list`.
#[derive(Debug)]
struct ClassicReclaimHooks {
    /// The exact reference mode evicts whatever it isolates.
    exact: bool,
}

impl ReclaimHooks for ClassicReclaimHooks {
    /// `folio_check_references` for an anonymous folio: a young PTE keeps the folio once
    /// (setting `PG_referenced`) and activates it when it was already referenced.
    fn folio_check_references(&mut self, mm: &mut Mm, pfn: Pfn) -> FolioReferences {
        let young = !self.exact && mm.folio_referenced(pfn);
        let referenced_before = mm.frames.test_and_clear(pfn, flag::REFERENCED);
        if !young {
            return FolioReferences::Reclaim;
        }
        mm.frames.set(pfn, flag::REFERENCED);
        if referenced_before {
            FolioReferences::Activate
        } else {
            FolioReferences::Keep
        }
    }

    fn eviction_shadow(&mut self, mm: &mut Mm, pfn: Pfn) -> Shadow {
        mm.workingset_eviction(pfn)
    }
}

impl Lru for ClassicLru {
    fn warm_tails(&mut self, mm: &Mm) {
        for (which, warmed) in self.warmed.iter_mut().enumerate() {
            let i = *warmed;
            if i >= WARM_AHEAD + WARM_LAG {
                continue;
            }
            if i < WARM_AHEAD {
                if let Some(pfn) = self.lists.entry(which, i) {
                    mm.frames.prefetch(pfn);
                }
            }
            if let Some(pfn) = i.checked_sub(WARM_LAG).and_then(|j| self.lists.entry(which, j)) {
                mm.warm_batch(&[pfn]);
            }
            *warmed = i + 1;
        }
    }

    fn warm_steps_left(&self) -> usize {
        let least = self.warmed.iter().copied().min().unwrap_or(usize::MAX);
        (WARM_AHEAD + WARM_LAG).saturating_sub(least)
    }

    fn add(&mut self, mm: &mut Mm, pfn: Pfn, placement: Placement, _origin: Origin) {
        debug_assert!(!mm.frames.test(pfn, flag::LRU));
        let placement = if self.exact { Placement::Inactive } else { placement };
        let which = match placement {
            Placement::Active => {
                mm.frames.set(pfn, flag::ACTIVE);
                ACTIVE
            }
            Placement::Inactive => {
                mm.frames.clear(pfn, flag::ACTIVE);
                INACTIVE
            }
        };
        mm.frames.set(pfn, flag::LRU);
        let nr = mm.frames.nr_pages(pfn);
        self.push_head(mm, which, pfn, nr);
    }

    fn remove(&mut self, mm: &mut Mm, pfn: Pfn) {
        if mm.frames.test(pfn, flag::LRU) {
            let which = Self::which(mm, pfn);
            let nr = mm.frames.nr_pages(pfn);
            self.unlink(mm, which, pfn, nr);
            mm.frames.clear(pfn, flag::LRU);
        }
    }

    fn split(&mut self, mm: &mut Mm, head: Pfn, nr: u32) {
        // The list counted the folio's pages under the head; the tails keep their share.
        let tails: Vec<Pfn> = (1..nr).map(|i| Pfn(head.0 + i)).collect();
        let which = Self::which(mm, head);
        self.lists.insert_before(&mut mm.frames, which, head, &tails);
    }

    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        // lru_move_tail takes the folio from whichever list holds it, clears PG_active
        // and puts it at the inactive tail: a folio activated while its write was in
        // flight (met by reclaim under writeback, or refaulting into zswap's writeback)
        // comes back to be freed all the same.
        let f = mm.frames.flags(pfn);
        if f & flag::LRU != 0 && f & (flag::DIRTY | flag::LOCKED) == 0 {
            let nr = mm.frames.nr_pages(pfn);
            self.unlink(mm, Self::which(mm, pfn), pfn, nr);
            mm.frames.clear(pfn, flag::ACTIVE);
            self.push_tail(mm, INACTIVE, pfn, nr);
            mm.vmstat.pgrotated += u64::from(nr);
        }
    }

    fn tracks_accesses(&self) -> bool {
        self.exact
    }

    fn charge_batch(&self) -> u64 {
        if self.exact {
            1
        } else {
            SWAP_CLUSTER_MAX
        }
    }

    fn charges_page_tables(&self) -> bool {
        !self.exact
    }

    fn refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow, _origin: Origin) -> Placement {
        let active_anon = self.flushed_stats(mm).active_anon;
        if mm.workingset_refault(pfn, shadow, active_anon) {
            Placement::Active
        } else {
            Placement::Inactive
        }
    }

    fn accessed(&mut self, mm: &mut Mm, pfn: Pfn) {
        if self.exact {
            let pfn = mm.frames.head(pfn);
            let nr = mm.frames.nr_pages(pfn);
            self.unlink(mm, INACTIVE, pfn, nr);
            self.push_head(mm, INACTIVE, pfn, nr);
        }
    }

    fn shrink(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        if self.exact {
            // Every folio the exact mode isolates leaves (freed, or written and freed once
            // its write completes), so what it scanned is what it evicted: the passes of
            // one reclaim evict `nr_to_reclaim` folios in all, whatever the writes' timing.
            let want = sc.nr_to_reclaim.saturating_sub(sc.nr_reclaimed.max(sc.nr_scanned));
            if want > 0 && mm.can_reclaim_anon() {
                self.shrink_inactive(mm, sc, want);
            }
            return;
        }
        // prepare_scan_control: age the active list only if refaults activated pages
        // since the last cycle or the inactive list is low, both as last flushed.
        let refaults = self.flushed_stats(mm).workingset_activate_anon;
        let may_deactivate =
            sc.force_deactivate || refaults != self.refaults_snapshot || self.inactive_is_low(mm);
        let mut nr = self.scan_targets(mm, sc);
        let mut nr_file = self.file_scan_target(mm, sc);
        let start_reclaimed = sc.nr_reclaimed;
        // shrink_lruvec loops while the inactive anon or a file target remains: the active
        // anon list is aged alongside them, never on its own. Without page cache an empty
        // inactive list stops the pass before any aging; hot page cache keeps the rounds,
        // and with them the active list's aging, going.
        while nr[INACTIVE] > 0 || nr_file > 0 {
            if nr_file > 0 {
                // The hot page cache's folios are all referenced: scanned, kept, nothing freed.
                let n = nr_file.min(SWAP_CLUSTER_MAX);
                nr_file -= n;
                mm.spend(n * mm.cost().reclaim_scan_ns);
            }
            for which in [INACTIVE, ACTIVE] {
                let n = nr[which].min(SWAP_CLUSTER_MAX);
                if n == 0 {
                    continue;
                }
                nr[which] -= n;
                if which == ACTIVE {
                    if may_deactivate {
                        self.shrink_active(mm, sc, n);
                    } else {
                        sc.skipped_deactivate = true;
                    }
                } else {
                    self.shrink_inactive(mm, sc, n);
                }
            }
            // Direct and memcg reclaim stop once their target is met; kswapd scans on.
            if sc.reclaimer != Reclaimer::Kswapd && sc.nr_reclaimed - start_reclaimed >= sc.nr_to_reclaim {
                break;
            }
            if sc.reclaimer == Reclaimer::Kswapd && sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
        }
        if mm.can_reclaim_anon() && self.inactive_is_low(mm) {
            self.shrink_active(mm, sc, SWAP_CLUSTER_MAX);
        }
    }

    fn reclaim_done(&mut self, mm: &mut Mm) {
        // snapshot_refaults
        self.refaults_snapshot = self.flushed_stats(mm).workingset_activate_anon;
    }

    fn sizes(&self) -> LruSizes {
        LruSizes { inactive_anon: self.lens[INACTIVE], active_anon: self.lens[ACTIVE] }
    }

    fn check_invariants(&self, mm: &Mm) {
        let mut seen = 0u64;
        for which in [INACTIVE, ACTIVE] {
            let mut n = 0u64;
            let len = self.lens[which];
            self.lists.walk(&mm.frames, which, &format!("lru {which}"), |pfn| {
                let cur = pfn.0;
                assert!(mm.frames.test(pfn, flag::IN_USE), "lru {which}: free frame {cur} on a list");
                assert!(mm.frames.test(pfn, flag::LRU), "lru {which}: frame {cur} lacks the LRU flag");
                assert_eq!(Self::which(mm, pfn), which, "frame {cur}: ACTIVE flag disagrees with its list");
                let mglru_bits = flag::LRU_GEN_MASK | flag::LRU_REFS_MASK;
                assert!(!mm.frames.test(pfn, mglru_bits), "frame {cur}: MGLRU bits on a classic list");
                assert!(mm.frames.is_head(pfn), "frame {cur}: a tail page on a list");
                n += u64::from(mm.frames.nr_pages(pfn));
                n <= len
            });
            assert_eq!(n, len, "lru {which}: length counter");
            seen += n;
        }
        let flagged = mm.frames.lru_flagged_pages();
        assert_eq!(seen, flagged, "pages of folios flagged LRU vs pages on lists");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inactive_is_low_follows_the_sqrt_rule() {
        // Below 1 GiB the ratio is 1: low when active exceeds inactive.
        assert!(inactive_is_low(100, 101));
        assert!(!inactive_is_low(100, 100));
        // 10 GiB in total: ratio isqrt(100) = 10.
        let total = 10u64 << 18;
        assert!(inactive_is_low(total / 12, total - total / 12));
        assert!(!inactive_is_low(total / 10, total - total / 10));
    }
}
