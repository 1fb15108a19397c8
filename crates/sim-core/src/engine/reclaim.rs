//! Reclaim drivers: `do_try_to_free_pages` for direct and memcg reclaim, and kswapd
//! (`balance_pgdat`).
//!
//! The LRU implementation scans; these drivers choose the priority, the target and the
//! plug, and decide when kswapd sleeps. Simplified: kswapd runs on a CPU of its own.

use super::World;
use crate::block::PlugOwner;
use crate::event::Event;
use crate::ids::CpuId;
use crate::mm::vmscan::{Reclaimer, ScanControl, DEF_PRIORITY, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};
use crate::time::{SimDuration, SimTime};

/// How long kswapd naps after a full priority sweep freed nothing.
const KSWAPD_BACKOFF: SimDuration = SimDuration(100_000_000);

/// What one call of [`World::reclaim`] did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reclaimed {
    /// Folios freed.
    pub(crate) pages: u64,
    /// The reclaimer met a folio it had written still under writeback and, on cgroup v1,
    /// waits for the write before it goes on (case 3 of `shrink_folio_list`). The model
    /// ends the reclaim there and its caller waits for a write to complete.
    pub(crate) wait_writeback: bool,
}

/// kswapd's state.
#[derive(Clone, Debug)]
pub(crate) struct Kswapd {
    pub(crate) awake: bool,
    pub(crate) priority: u32,
    pub(crate) failures: u32,
    pub(crate) clock: SimTime,
}

impl World {
    /// `do_try_to_free_pages`: shrink the LRU at decreasing priority until
    /// `nr_to_reclaim` folios were freed. Each priority level runs under its own plug
    /// (`shrink_lruvec` plugs). Returns the folios freed.
    ///
    /// Simplified: the kernel's reclaimer sleeps for a tag once the disk's queue is full
    /// and goes on writing when a request completes; the model's stops at the end of a
    /// priority level once [`World::writeback_limit`] pages are in flight, and its caller
    /// waits for writeback if it is still short. Without this, a reclaim whose stores zswap
    /// refuses would scan down to priority 0 and write the whole inactive list at once.
    pub(super) fn reclaim(
        &mut self,
        owner: PlugOwner,
        cpu: CpuId,
        reclaimer: Reclaimer,
        nr_to_reclaim: u64,
    ) -> Reclaimed {
        let swappiness = self.mm.cfg.memcg.swappiness;
        let mut sc = ScanControl::new(reclaimer, DEF_PRIORITY, nr_to_reclaim, swappiness, (owner, cpu));
        loop {
            self.mm.start_plug(owner);
            self.lru.shrink(&mut self.mm, &mut sc);
            self.mm.finish_plug(owner);
            self.zswap_shrink_slab(&sc);
            if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.wait_writeback {
                break;
            }
            if self.mm.nr_writeback() >= self.writeback_limit() {
                // Every tag of the disk's queue is taken: the kernel's reclaimer would sleep
                // in blk_mq_get_tag before its next write. The model's block layer never
                // makes a submitter wait, so the reclaim ends here and its caller waits
                // for writeback if it freed too little.
                break;
            }
            if sc.priority == 0 {
                // Nothing freed because the active list was left alone on stale
                // statistics: go round again, aging it regardless.
                if sc.nr_reclaimed == 0 && sc.skipped_deactivate && !sc.force_deactivate {
                    sc.priority = DEF_PRIORITY;
                    sc.force_deactivate = true;
                    sc.skipped_deactivate = false;
                    continue;
                }
                break;
            }
            sc.priority -= 1;
        }
        self.lru.reclaim_done(&mut self.mm);
        self.zswap_kick_worker();
        Reclaimed { pages: sc.nr_reclaimed, wait_writeback: sc.wait_writeback }
    }

    /// `out_of_memory` from kswapd (`lru_gen_age_node`): kills the process the OOM
    /// killer chooses ([`World::oom_victim`]), if any task runs.
    fn min_ttl_oom_kill(&mut self) {
        let Some(space) = self.oom_victim() else { return };
        let at = self.mm.now();
        self.oom_kill(space, at);
        self.process_ended(space, at, None);
    }

    pub(super) fn wake_kswapd(&mut self) {
        if !self.kswapd.awake {
            self.kswapd.awake = true;
            self.mm.vmstat.pageoutrun += 1;
            let at = self.mm.now().max(self.mm.queue.now());
            self.schedule(at, Event::KswapdRun);
        }
    }

    /// One batch of `balance_pgdat`: shrink at the current priority until free memory
    /// reaches the high watermark.
    pub(super) fn kswapd_run(&mut self, now: SimTime) {
        let kswapd_owner = self.kswapd_owner;
        let kswapd_cpu = CpuId::from_index(self.mm.cfg.machine.cpus as usize);
        let start = self.kswapd.clock.max(now);
        self.mm.act_at(start);
        let free = self.mm.frames.free_pages();
        if free >= self.mm.wmark.high {
            // balance_pgdat ends: snapshot_refaults.
            self.lru.reclaim_done(&mut self.mm);
            self.kswapd.awake = false;
            self.kswapd.priority = DEF_PRIORITY;
            self.kswapd.clock = start;
            return;
        }
        // kswapd_age_node: MGLRU's min_ttl test, which kills rather than evict a working
        // set younger than min_ttl_ms.
        if !self.lru.age_node(&self.mm, self.kswapd.priority) {
            self.min_ttl_oom_kill();
        }
        let target = (self.mm.wmark.high - free).max(SWAP_CLUSTER_MAX);
        let swappiness = self.mm.cfg.memcg.swappiness;
        let mut sc = ScanControl::new(
            Reclaimer::Kswapd,
            self.kswapd.priority,
            target,
            swappiness,
            (kswapd_owner, kswapd_cpu),
        );
        self.mm.start_plug(kswapd_owner);
        self.lru.shrink(&mut self.mm, &mut sc);
        // MGLRU starts kswapd at the priority its inactive share suggests.
        self.kswapd.priority = sc.priority;
        self.mm.finish_plug(kswapd_owner);
        self.zswap_shrink_slab(&sc);
        self.zswap_kick_worker();
        self.flush_dispatched();
        self.after_io();
        // Spend at least some time so that a futile loop still advances.
        let mut next = self.mm.now().max(start + SimDuration(1_000));
        if sc.nr_reclaimed == 0 {
            if self.kswapd.priority > 1 {
                self.kswapd.priority -= 1;
            } else {
                self.kswapd.failures += 1;
                self.kswapd.priority = DEF_PRIORITY;
                next += KSWAPD_BACKOFF;
            }
        }
        self.kswapd.clock = next;
        if self.kswapd.failures >= MAX_RECLAIM_RETRIES && self.mm.nr_writeback() == 0 {
            // "Hopeless" node: kswapd stops until woken again.
            self.kswapd.awake = false;
            self.kswapd.failures = 0;
            return;
        }
        self.schedule(next, Event::KswapdRun);
    }
}
