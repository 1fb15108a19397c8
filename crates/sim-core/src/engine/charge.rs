//! Charging memory and running out of it: `try_charge_memcg`, the page allocator's
//! watermark checks, and the OOM killer.
//!
//! Simplified: one memory cgroup and one NUMA node with one zone; a charge that cannot be
//! satisfied while writes are in flight blocks the task until a write completes and then
//! retries.

use super::task::TaskState;
use super::wait::Wait;
use super::World;
use crate::ids::{Pfn, TaskId};
use crate::mm::frames::flag;
use crate::mm::vmscan::{Reclaimer, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};
use crate::report::Outcome;

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
            if self.mm.memcg_over() {
                let batch = self.lru.charge_batch();
                let got = self.reclaim(owner, cpu, Reclaimer::Memcg, batch);
                if self.mm.memcg_over() {
                    if got == 0 {
                        if let Some(end) = self.no_progress(on_shortage, &mut retries) {
                            return end;
                        }
                    }
                    continue;
                }
            }
            let free = self.mm.frames.free_pages();
            if free <= self.mm.wmark.low {
                self.wake_kswapd();
            }
            if free <= self.mm.wmark.min {
                self.mm.vmstat.allocstall_normal += 1;
                let got = self.reclaim(owner, cpu, Reclaimer::Direct, SWAP_CLUSTER_MAX);
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

    /// The OOM killer: records the outcome and releases the task's memory and swap.
    pub(super) fn oom_kill(&mut self, t: TaskId) {
        self.mm.vmstat.oom_kill += 1;
        let at = self.tasks[t].clock;
        if self.outcome.is_none() {
            self.outcome =
                Some(Outcome::OomKilled { task: self.tasks[t].name.clone(), at_s: at.as_secs_f64() });
        }
        // The whole process goes: every task sharing the address space.
        let space = self.tasks[t].space;
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
        }
        self.end = self.end.max(at);
        self.exit_mmap(space);
    }
}
