//! zswap's writers: `zswap_writeback_entry`, the memory-pressure shrinker reclaim calls
//! through `shrink_slab` (`zswap_shrinker_count`, `zswap_shrinker_scan` inside
//! `do_shrink_slab`'s batching and deferral), and the pool-limit worker
//! (`shrink_worker`). Which entries they write back is the protection policy's choice.
//!
//! On cgroup v1 the pool is charged to no group (the kernel's `objcg` is NULL without
//! kmem accounting), so the memory-pressure shrinker, which counts a group's charged
//! entries, never writes back there; the pool-limit worker, which walks every group's
//! list and the root's, does.
//!
//! A written-back folio is charged to the memory cgroup: from the shrinker, in reclaim
//! context (`PF_MEMALLOC`), the charge is forced; from the worker a charge at the limit
//! reclaims first, and the worker's own reclaim may refuse stores and queue it again.
//!
//! Simplified: the worker runs on a CPU of its own, in batches of [`WORKER_BATCH`] steps
//! so that it interleaves with the tasks, and starts a wake-up after a refused store
//! queued it. On a machine of one CPU the kernel's worker waits for the reclaiming task to
//! sleep or to use up its slice; the model does not make it wait, nor takes its time from
//! the task.

use super::World;
use crate::block::PlugOwner;
use crate::event::Event;
use crate::ids::CpuId;
use crate::lru::Origin;
use crate::mm::vmscan::{Reclaimer, ScanControl};
use crate::policy::zswap::{ZswapLruView, ZswapVisit};
use crate::time::{SimDuration, SimTime};

/// `DEFAULT_SEEKS`, zswap's shrinker's seek cost.
const DEFAULT_SEEKS: u64 = 2;
/// `SHRINK_BATCH`: objects per `scan_objects` call (zswap leaves `batch` at 0).
const SHRINK_BATCH: u64 = 128;
/// `MAX_RECLAIM_RETRIES`: the worker's failures before it gives up.
const WORKER_MAX_FAILURES: u32 = 16;
/// Worker steps per event.
pub(crate) const WORKER_BATCH: u32 = 32;
/// CPU time of one visit of an entry that is only rotated, in ns.
const VISIT_NS: u64 = 100;

/// Why a writeback failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WritebackError {
    /// The slot already has a folio in the swap cache: the page is hot (`-EEXIST`).
    Exists,
    /// No frame for the folio (`-ENOMEM`).
    NoMemory,
}

/// How a writeback's new folio is charged to the memory cgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WritebackCharge {
    /// From inside reclaim (the memory-pressure shrinker): `PF_MEMALLOC` lets the charge
    /// pass the limit.
    Forced,
    /// From the pool-limit worker: a charge at the limit reclaims first.
    Reclaim,
}

/// The pool-limit worker's state across its batches.
#[derive(Clone, Debug, Default)]
pub(crate) struct ZswapWorker {
    /// A run is going.
    in_run: bool,
    clock: SimTime,
    /// The run's failures so far: visits that wrote nothing back, and passes over the
    /// hierarchy that found no entry to visit. A writeback does not reset them.
    failures: u32,
    /// Groups of the current pass that had an entry to visit.
    attempts: u32,
}

impl World {
    /// `zswap_writeback_entry`: decompresses entry `e` into a new swap-cache folio, frees
    /// the entry and starts an asynchronous write of the folio (`zswpwb`, `pswpout`). The
    /// folio goes to the tail of the inactive list when the write ends, for reclaim to
    /// free.
    ///
    /// The new folio is charged to the memory cgroup the entry's page was charged to
    /// (`mem_cgroup_swapin_charge_folio`). Inside reclaim (`PF_MEMALLOC`) the charge may
    /// pass the limit; from the pool-limit worker a charge over the limit reclaims first,
    /// as `try_charge_memcg` does, and fails (`-ENOMEM`) when reclaim frees nothing.
    /// Simplified: the kernel retries a charge that made no progress up to 16 times,
    /// throttled on writeback; the model gives up at once. The entry is looked up again
    /// after the charge, since reclaim may have freed it (the kernel's check that the
    /// tree still holds it).
    fn zswap_writeback_entry(
        &mut self,
        e: u32,
        owner: PlugOwner,
        charge: WritebackCharge,
    ) -> Result<(), WritebackError> {
        let slot = self.mm.zswap.slot(e);
        if self.mm.swap.cached_frame(slot).is_some() {
            return Err(WritebackError::Exists);
        }
        if charge == WritebackCharge::Reclaim && self.mm.memcg_over() {
            let cpu = CpuId::from_index(self.mm.cfg.machine.cpus as usize);
            while self.mm.memcg_over() {
                let batch = self.lru.charge_batch();
                if self.reclaim(owner, cpu, Reclaimer::Memcg, batch) == 0 && self.mm.memcg_over() {
                    return Err(WritebackError::NoMemory);
                }
            }
            if self.mm.swap.zswap_entry(slot) != Some(e) {
                return Err(WritebackError::NoMemory);
            }
            if self.mm.swap.cached_frame(slot).is_some() {
                return Err(WritebackError::Exists);
            }
        }
        let Some(pfn) = self.mm.frames.alloc() else { return Err(WritebackError::NoMemory) };
        self.mm.charge(1);
        self.swap_cache_add(slot, pfn, Origin::Other);
        let id = self.mm.zswap.contents(e);
        let cost = self.mm.cfg.zswap.compressor.decompress_ns(&self.mm.pt.contents[id as usize]);
        self.mm.spend(cost);
        self.mm.swap.set_zswap_entry(slot, None);
        self.mm.zswap.free_entry(e);
        self.mm.vmstat.zswpwb += 1;
        self.mm.zswap.counts.written_back_pages += 1;
        self.mm.pageout(pfn, slot, owner);
        self.mm.zswap_sync();
        Ok(())
    }

    /// `shrink_memcg_cb` on the oldest entry: the policy rotates it or has it written
    /// back. `Some(true)` when written back, `Some(false)` when only rotated or the
    /// writeback failed, `None` when the LRU is empty; `exists` reports an `-EEXIST`.
    fn zswap_visit_oldest(
        &mut self,
        owner: PlugOwner,
        charge: WritebackCharge,
        exists: &mut bool,
    ) -> Option<bool> {
        let e = self.mm.zswap.lru_first()?;
        self.mm.zswap.counts.shrinker_scanned += 1;
        let mut referenced = *self.mm.zswap.referenced_mut(e);
        let visit = self.mm.zswap.policy.visit(&mut referenced);
        *self.mm.zswap.referenced_mut(e) = referenced;
        self.mm.zswap.rotate(e);
        match visit {
            ZswapVisit::Rotate => {
                self.mm.spend(VISIT_NS);
                Some(false)
            }
            ZswapVisit::Writeback => match self.zswap_writeback_entry(e, owner, charge) {
                Ok(()) => Some(true),
                Err(err) => {
                    self.mm.spend(VISIT_NS);
                    self.mm.zswap.counts.reject_reclaim_fail += 1;
                    self.mm.zswap.policy.writeback_failed();
                    *exists = err == WritebackError::Exists;
                    Some(false)
                }
            },
        }
    }

    fn zswap_lru_view(&self) -> ZswapLruView {
        let z = &self.mm.zswap;
        ZswapLruView::new(z.lru_len, z.bytes / crate::ids::PAGE_SIZE, z.stored)
    }

    /// `shrink_slab` for zswap's shrinker after an LRU pass of `sc`: `do_shrink_slab`'s
    /// count, priority scaling, deferral and batches around `zswap_shrinker_scan`.
    pub(super) fn zswap_shrink_slab(&mut self, sc: &ScanControl) {
        // On cgroup v1 zswap charges nothing to the group (no kmem accounting: the pool
        // stays outside the limit, as measured), so its entries sit on the root's list
        // and the group's counts (`MEMCG_ZSWAPPED`) stay 0: the shrinker finds nothing.
        if !self.mm.zswap_on()
            || !self.mm.cfg.zswap.shrinker_enabled
            || !self.mm.cfg.memcg.zswap_writeback
            || self.mm.cfg.memcg.version == 1
        {
            return;
        }
        self.mm.zswap_sync();
        let view = self.zswap_lru_view();
        if view.nr_stored == 0 || view.lru_size == 0 {
            return;
        }
        let freeable = self.mm.zswap.policy.count(&view);
        if freeable == 0 {
            return;
        }
        let nr = std::mem::take(&mut self.shrinker_deferred);
        let delta = (freeable >> sc.priority) * 4 / DEFAULT_SEEKS;
        let mut total_scan = ((nr >> sc.priority) + delta).min(2 * freeable);
        let mut scanned = 0;
        while total_scan >= SHRINK_BATCH || total_scan >= freeable {
            let nr_to_scan = SHRINK_BATCH.min(total_scan);
            let view = self.zswap_lru_view();
            if !self.mm.zswap.policy.may_scan(&view, nr_to_scan) {
                break;
            }
            let mut freed = 0;
            let mut exists = false;
            for _ in 0..nr_to_scan {
                match self.zswap_visit_oldest(sc.owner, WritebackCharge::Forced, &mut exists) {
                    None => break,
                    Some(w) => freed += u64::from(w),
                }
                if exists {
                    break;
                }
            }
            total_scan -= nr_to_scan;
            scanned += nr_to_scan;
            // SHRINK_STOP when the walk met a hot page or freed nothing.
            if exists || freed == 0 {
                break;
            }
        }
        let next = (nr + delta).saturating_sub(scanned).min(2 * freeable);
        self.shrinker_deferred = next;
        self.flush_dispatched();
    }

    /// A run of `shrink_worker` begins at `at`: the work item's pending bit is cleared as
    /// it starts executing, and the run counts its failures from zero.
    fn zswap_start_run(&mut self, at: SimTime) {
        self.mm.zswap.take_shrink_work(at);
        self.zswap_worker.in_run = true;
        self.zswap_worker.failures = 0;
        self.zswap_worker.attempts = 0;
        self.mm.zswap.counts.shrink_worker_runs += 1;
    }

    /// One turn of `shrink_worker`'s loop: the group's turn (`shrink_memcg`, one entry per
    /// node), then the end of the pass over the hierarchy (here the root, which holds no
    /// entries, and the one group). A visit that writes nothing back fails (a referenced
    /// entry rotated counts as one), and so does a pass in which no group had an entry.
    /// Returns whether the run is over: [`WORKER_MAX_FAILURES`] failures, or the pool at
    /// or below the accept threshold, which the loop tests after each turn (a run always
    /// takes at least one).
    fn zswap_shrink_turn(&mut self, owner: PlugOwner) -> bool {
        if !self.mm.cfg.memcg.zswap_writeback {
            // shrink_memcg finds no candidate in any group: every pass fails.
            self.zswap_worker.failures += 1;
            return self.zswap_worker.failures >= WORKER_MAX_FAILURES;
        }
        let mut exists = false;
        if let Some(written) = self.zswap_visit_oldest(owner, WritebackCharge::Reclaim, &mut exists) {
            self.zswap_worker.attempts += 1;
            if !written {
                self.zswap_worker.failures += 1;
                if self.zswap_worker.failures >= WORKER_MAX_FAILURES {
                    return true;
                }
            }
        }
        if self.zswap_worker.attempts == 0 {
            self.zswap_worker.failures += 1;
            if self.zswap_worker.failures >= WORKER_MAX_FAILURES {
                return true;
            }
        }
        self.zswap_worker.attempts = 0;
        self.mm.zswap.pool.total_pages() <= self.mm.zswap.accept_pages
    }

    /// A batch of the pool-limit worker's turns. Each run of `shrink_worker` writes back
    /// until the pool falls to the accept threshold or gives up after 16 failures. The
    /// worker is a work item on a CPU of its own: a store refused on a full pool queues it,
    /// which does nothing while it is already queued, so however many stores were refused
    /// during a run, one more run follows it at once, and none if no store was refused;
    /// a store refused after the worker went idle wakes it.
    pub(super) fn zswap_worker_run(&mut self, now: SimTime) {
        let owner = self.zswap_owner;
        let start = self.zswap_worker.clock.max(now);
        self.mm.act_at(start);
        self.mm.zswap_sync();
        if !self.zswap_worker.in_run {
            self.zswap_start_run(start);
        }
        let mut steps = 0;
        let mut wake_at = None;
        while self.zswap_worker.in_run && steps < WORKER_BATCH {
            // Other contexts act between the worker's turns: it yields once its clock has
            // passed the queue's next event, as a task does, so that stores refused
            // meanwhile find the run going.
            if steps > 0 && self.mm.queue.peek_time().is_some_and(|next| self.mm.now() > next) {
                break;
            }
            steps += 1;
            if !self.zswap_shrink_turn(owner) {
                continue;
            }
            let end = self.mm.now();
            if self.mm.zswap.pool.total_pages() <= self.mm.zswap.accept_pages {
                // One more run if a store was refused during this one; none for the
                // stores refused later by contexts that ran ahead of the worker.
                let during = self.mm.zswap.shrink_work_queued_at().is_some_and(|q| q <= end);
                self.mm.zswap.forget_shrink_work();
                if during {
                    self.zswap_start_run(end);
                } else {
                    self.zswap_worker.in_run = false;
                }
                continue;
            }
            match self.mm.zswap.shrink_work_queued_at() {
                // Queued during the run: the next run follows on the same worker.
                Some(queued) if queued <= end => self.zswap_start_run(end),
                // Queued by a context that has already acted further on: the worker
                // sleeps until then.
                Some(queued) => {
                    self.zswap_worker.in_run = false;
                    wake_at = Some(queued + SimDuration(self.mm.cfg.cpu.wakeup_ns));
                }
                None => self.zswap_worker.in_run = false,
            }
        }
        self.flush_dispatched();
        self.zswap_worker.clock = self.mm.now().max(start + SimDuration(1));
        match (self.zswap_worker.in_run, wake_at) {
            (true, _) => {
                let at = self.zswap_worker.clock;
                self.schedule(at, Event::ZswapShrink);
            }
            (false, Some(at)) => {
                let at = at.max(self.zswap_worker.clock);
                self.schedule(at, Event::ZswapShrink);
            }
            (false, None) => self.mm.zswap.worker_scheduled = false,
        }
    }
}
