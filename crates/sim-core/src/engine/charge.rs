//! Charging memory and running out of it: `try_charge_memcg`, the page allocator's
//! watermark checks, and the OOM killer.
//!
//! Simplified: one memory cgroup and one NUMA node with one zone; a charge that cannot be
//! satisfied while writes are in flight blocks the task until a write completes and then
//! retries.

use super::reclaim::MAX_RECLAIM_RETRIES;
use super::task::{TaskKind, TaskState};
use super::{Simulation, Wait};
use crate::ids::Pfn;
use crate::mm::frames::flag;
use crate::mm::vmscan::{Reclaimer, SWAP_CLUSTER_MAX};
use crate::report::Outcome;

/// Result of trying to get a charged frame.
pub(crate) enum Alloc {
    Got(Pfn),
    /// Nothing reclaimable now, but writeback is in flight: wait for it and retry.
    Wait,
    /// Out of memory and swap.
    Oom,
}

impl Simulation {
    /// Charges the memory cgroup and takes a frame, reclaiming as the kernel would
    /// (`try_charge_memcg`, then the page allocator's watermark checks). With
    /// `may_wait` false the caller skips the page instead of blocking.
    pub(super) fn alloc_frame(&mut self, t: usize, may_wait: bool) -> Alloc {
        let cpu = self.tasks[t].cpu;
        let owner = self.tasks[t].owner;
        let mut retries = 0;
        loop {
            if self.mm.memcg_over() {
                let batch = self.lru.charge_batch();
                let got = self.reclaim(owner, cpu, Reclaimer::Memcg, batch);
                if self.mm.memcg_over() {
                    if got == 0 {
                        if !may_wait {
                            return Alloc::Wait;
                        }
                        if self.mm.nr_writeback > 0 {
                            return Alloc::Wait;
                        }
                        retries += 1;
                        if retries >= MAX_RECLAIM_RETRIES {
                            return Alloc::Oom;
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
                if got == 0 && free <= self.mm.wmark.min {
                    match (may_wait, self.mm.nr_writeback > 0) {
                        // A neighbour may still take one of the last frames above zero.
                        (false, _) if free > 0 => {}
                        (false, _) | (true, true) => return Alloc::Wait,
                        (true, false) => {
                            retries += 1;
                            if retries >= MAX_RECLAIM_RETRIES {
                                return Alloc::Oom;
                            }
                            continue;
                        }
                    }
                }
            }
            match self.mm.frames.alloc() {
                Some(p) => {
                    self.mm.memcg_usage += 1;
                    return Alloc::Got(p);
                }
                None => {
                    if !may_wait || self.mm.nr_writeback > 0 {
                        return Alloc::Wait;
                    }
                    retries += 1;
                    if retries >= MAX_RECLAIM_RETRIES {
                        return Alloc::Oom;
                    }
                }
            }
        }
    }

    /// The OOM killer: records the outcome and releases the task's memory and swap.
    pub(super) fn oom_kill(&mut self, t: usize) {
        self.mm.vmstat.oom_kill += 1;
        let at = self.tasks[t].clock;
        if self.outcome.is_none() {
            self.outcome =
                Some(Outcome::OomKilled { task: self.tasks[t].name.clone(), at_s: at.as_secs_f64() });
        }
        // The whole process goes: every task sharing the address space.
        let space = self.tasks[t].space;
        for u in 0..self.tasks.len() {
            if self.tasks[u].space != space || !matches!(self.tasks[u].kind, TaskKind::User) {
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
