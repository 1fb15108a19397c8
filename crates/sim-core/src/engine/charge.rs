//! Charging memory and running out of it: `try_charge_memcg`, the page allocator's
//! watermark checks, and the OOM killer.
//!
//! A charge at the limit reclaims and retries; reclaim that frees something is retried
//! without limit (`nr_reclaimed && nr_pages <= 1 << PAGE_ALLOC_COSTLY_ORDER`), reclaim
//! that frees nothing `MAX_RECLAIM_RETRIES` times ends in the OOM killer
//! (`mem_cgroup_oom`). An anonymous-only thrash can reach that end under the classic LRU
//! with every folio active: `shrink_lruvec` ages the active list only while it scans the
//! inactive list or a file list, or after them when the statistics as last flushed call
//! the inactive list low. When a flush lands just as second-chance activations begin (the
//! inactive list still the larger, refaults already counted recent), the inactive list can
//! drain before the next flush; then, with no page cache charged to the group, a pass
//! scans nothing and frees nothing, and the retries follow each other faster than the next
//! flush. Large folios swapped in whole, referenced as one, drain it sooner. Whether a run
//! meets this depends on the flush grid's phase, drawn from the seed; docs/oom-under-thrash.md
//! has the kernel's trace of it.
//!
//! Besides the folios, the first touch of a 2 MiB block charges its page table
//! (`pte_alloc`, `GFP_PGTABLE_USER` with `__GFP_ACCOUNT`), before the fault allocates its
//! folio: on the validation kernel a 768 MiB region's 384 PTE pages are the group's kernel
//! memory (`memory.kmem.usage_in_bytes`: 386 pages). They shift the room a large folio's
//! charge finds below the limit, which decides whether it falls back (docs/mthp-seq-lockstep.md).
//!
//! Before its first PTE page, a process also charges the rest of its kernel memory in the
//! group (`memcg.process_kmem`): its upper page-table levels and the slab of its mappings.
//!
//! Simplified: one memory cgroup and one NUMA node with one zone; a charge that cannot be
//! satisfied while writes are in flight blocks the task until a write completes and then
//! retries; page tables are charged but take no frame; a process's other kernel memory is a
//! fixed number of pages charged at once, not each page when the kernel allocates it.

use super::task::TaskState;
use super::wait::Wait;
use super::World;
use crate::ids::{Pfn, SpaceId, TaskId};
use crate::mm::frames::flag;
use crate::mm::pagetable::PteState;
use crate::mm::vmscan::{Reclaimer, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};
use crate::report::Outcome;
use crate::time::SimTime;

/// Result of trying to get a charged frame.
pub(crate) enum Alloc {
    Got(Pfn),
    /// Nothing reclaimable now, but writeback is in flight: wait for it and retry (or,
    /// under [`OnShortage::Skip`], go without).
    Wait,
    /// Out of memory and swap.
    Oom,
}

/// What a caller of [`World::alloc_frame`] does when memory is short and reclaim made no
/// progress: wait for writeback (a fault's own page), or skip the page (a readahead
/// neighbour, which is not worth blocking for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnShortage {
    Wait,
    Skip,
}

impl World {
    /// Charges the memory cgroup and takes a frame, reclaiming as the kernel would
    /// (`try_charge_memcg`, then the page allocator's watermark checks). Under
    /// [`OnShortage::Skip`] the caller skips the page instead of blocking.
    pub(super) fn alloc_frame(&mut self, t: TaskId, on_shortage: OnShortage) -> Alloc {
        let cpu = self.tasks[t].cpu;
        let owner = self.tasks[t].owner;
        let mut retries = 0;
        loop {
            if let Err(end) = self.make_memcg_room(t, on_shortage, &mut retries) {
                return end;
            }
            let free = self.mm.frames.free_pages();
            if free <= self.mm.wmark.low {
                self.wake_kswapd();
            }
            if free <= self.mm.wmark.min {
                self.mm.vmstat.allocstall_normal += 1;
                let got = self.reclaim(owner, cpu, Reclaimer::Direct, SWAP_CLUSTER_MAX).pages;
                let free = self.mm.frames.free_pages();
                // A neighbour may still take one of the last frames above zero.
                let last_frames = on_shortage == OnShortage::Skip && free > 0;
                if got == 0 && free <= self.mm.wmark.min && !last_frames {
                    match self.no_progress(on_shortage, &mut retries) {
                        Some(end) => return end,
                        None => continue,
                    }
                }
            }
            match self.mm.frames.alloc() {
                Some(p) => {
                    self.mm.charge(1);
                    return Alloc::Got(p);
                }
                None => {
                    if let Some(end) = self.no_progress(on_shortage, &mut retries) {
                        return end;
                    }
                }
            }
        }
    }

    /// `try_charge_memcg` for one page of page table (`pte_alloc_one`, whose
    /// `GFP_PGTABLE_USER` includes `__GFP_ACCOUNT` and may reclaim), before the fault that
    /// needs it allocates its folio: room is made as for a fault's own page, and the page
    /// is charged. `Err` is [`Alloc::Wait`] or [`Alloc::Oom`].
    ///
    /// Simplified: the page table takes no frame of the machine's memory (one page per
    /// 512 it maps), and only PTE pages are counted, not the upper levels.
    pub(super) fn charge_page_table(&mut self, t: TaskId) -> Result<(), Alloc> {
        let mut retries = 0;
        self.make_memcg_room(t, OnShortage::Wait, &mut retries)?;
        self.mm.charge(1);
        Ok(())
    }

    /// The memory cgroup part of `try_charge_memcg`: while usage is at the limit, reclaim
    /// from the group and retry. `Err` ends the charge as [`World::no_progress`] decides.
    fn make_memcg_room(
        &mut self,
        t: TaskId,
        on_shortage: OnShortage,
        retries: &mut u32,
    ) -> Result<(), Alloc> {
        let cpu = self.tasks[t].cpu;
        let owner = self.tasks[t].owner;
        while self.mm.memcg_over() {
            let batch = self.lru.charge_batch();
            let got = self.reclaim(owner, cpu, Reclaimer::Memcg, batch);
            if got.wait_writeback && on_shortage == OnShortage::Wait {
                // The reclaimer sleeps on a write it started (cgroup v1): the access is
                // retried once a write completes, as the kernel's reclaim goes on then.
                return Err(Alloc::Wait);
            }
            if got.pages == 0 && self.mm.memcg_over() {
                if let Some(end) = self.no_progress(on_shortage, retries) {
                    return Err(end);
                }
            }
        }
        Ok(())
    }

    /// A charge made no progress: skip the page or wait while writeback may free some,
    /// else try again, up to `MAX_RECLAIM_RETRIES` times before the OOM killer. `None`:
    /// try again.
    fn no_progress(&self, on_shortage: OnShortage, retries: &mut u32) -> Option<Alloc> {
        if on_shortage == OnShortage::Skip || self.mm.nr_writeback() > 0 {
            return Some(Alloc::Wait);
        }
        *retries += 1;
        (*retries >= MAX_RECLAIM_RETRIES).then_some(Alloc::Oom)
    }

    /// The OOM killer's choice (`select_bad_process` in the memory cgroup): the process
    /// whose memory is largest by `oom_badness`, its resident pages plus its swap entries
    /// plus its page tables, the first among equals in task order; `None` when no user
    /// task runs. A process whose tasks have not started holds nothing and is passed over.
    pub(super) fn oom_victim(&self) -> Option<SpaceId> {
        let mut best: Option<(u64, SpaceId)> = None;
        for task in &self.tasks {
            let live = matches!(task.state, TaskState::Runnable | TaskState::Blocked);
            if !task.is_user() || !live || best.is_some_and(|(_, s)| s == task.space) {
                continue;
            }
            let points = self.oom_badness(task.space);
            if best.is_none_or(|(b, _)| points > b) {
                best = Some((points, task.space));
            }
        }
        best.map(|(_, space)| space)
    }

    /// `oom_badness` of address space `space`: resident pages, swap entries and page-table
    /// pages (one per 512-page chunk of PTEs).
    fn oom_badness(&self, space: SpaceId) -> u64 {
        let pt = &self.mm.pt;
        let mapped = pt
            .space_pages(space)
            .iter()
            .filter(|&&p| matches!(pt.pte(p).state(), PteState::Present(_) | PteState::Swap(_)))
            .count();
        mapped as u64 + pt.space_chunks(space).count() as u64
    }

    /// The OOM killer kills process `space` at `at`: records the outcome and releases
    /// its memory and swap (`exit_mmap`, as the OOM reaper and the exit do).
    pub(super) fn oom_kill(&mut self, space: SpaceId, at: SimTime) {
        self.mm.vmstat.oom_kill += 1;
        if self.outcome.is_none() {
            let name = self.tasks.iter().find(|u| u.is_user() && u.space == space).map(|u| u.name.clone());
            self.outcome =
                Some(Outcome::OomKilled { task: name.unwrap_or_default(), at_s: at.as_secs_f64() });
        }
        // The whole process goes: every task sharing the address space.
        for u in (0..self.tasks.len()).map(TaskId::from_index) {
            if self.tasks[u].space != space || !self.tasks[u].is_user() {
                continue;
            }
            // A killed task is never woken: whatever it slept on, it sleeps no more.
            if let Some(Wait::Frame { pfn, .. }) = self.take_wait(u) {
                // The read completes unobserved by this task; the folio stays in the swap
                // cache, and wakes whoever else waits on it (swapoff).
                if !self.tasks.iter().any(|o| o.waits_on(pfn).is_some()) {
                    self.mm.frames.clear(pfn, flag::WAITED);
                }
            }
            self.tasks[u].state = TaskState::Killed;
            self.tasks[u].clock = self.tasks[u].clock.max(at);
        }
        self.end = self.end.max(at);
        self.exit_mmap(space);
    }
}
