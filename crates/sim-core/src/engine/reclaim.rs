//! Reclaim drivers: `do_try_to_free_pages` for direct and memcg reclaim, and kswapd
//! (`balance_pgdat`).
//!
//! The LRU implementation scans; these drivers choose the priority, the target and the
//! plug, and decide when kswapd sleeps. Simplified: kswapd runs on a CPU of its own.

use super::Simulation;
use crate::event::Event;
use crate::mm::vmscan::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
use crate::time::{SimDuration, SimTime};

/// `DEF_PRIORITY`.
pub(super) const DEF_PRIORITY: u32 = 12;
/// `MAX_RECLAIM_RETRIES`.
pub(super) const MAX_RECLAIM_RETRIES: u32 = 16;
/// How long kswapd naps after a full priority sweep freed nothing.
const KSWAPD_BACKOFF: SimDuration = SimDuration(100_000_000);

/// kswapd's state.
#[derive(Debug)]
pub(crate) struct Kswapd {
    pub(crate) awake: bool,
    pub(crate) priority: u32,
    pub(crate) failures: u32,
    pub(crate) clock: SimTime,
}

impl Simulation {
    /// `do_try_to_free_pages`: shrink the LRU at decreasing priority until
    /// `nr_to_reclaim` folios were freed. Each priority level runs under its own plug
    /// (`shrink_lruvec` plugs). Returns the folios freed.
    pub(super) fn reclaim(
        &mut self,
        owner: usize,
        cpu: usize,
        reclaimer: Reclaimer,
        nr_to_reclaim: u64,
    ) -> u64 {
        let mut sc = ScanControl {
            reclaimer,
            priority: DEF_PRIORITY,
            nr_to_reclaim,
            nr_scanned: 0,
            nr_reclaimed: 0,
            swappiness: self.mm.cfg.memcg.swappiness,
            owner,
            cpu,
            force_deactivate: false,
            skipped_deactivate: false,
        };
        loop {
            self.mm.block.start_plug(owner);
            self.lru.shrink(&mut self.mm, &mut sc);
            let now = self.mm.now;
            self.mm.block.finish_plug(owner, now, &mut self.mm.dispatched);
            self.zswap_shrink_slab(&sc);
            if sc.nr_reclaimed >= sc.nr_to_reclaim {
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
        sc.nr_reclaimed
    }

    pub(super) fn wake_kswapd(&mut self) {
        if !self.kswapd.awake {
            self.kswapd.awake = true;
            self.mm.vmstat.pageoutrun += 1;
            let at = self.mm.now.max(self.mm.queue.now());
            self.schedule(at, Event::KswapdRun);
        }
    }

    /// One batch of `balance_pgdat`: shrink at the current priority until free memory
    /// reaches the high watermark.
    pub(super) fn kswapd_run(&mut self, now: SimTime) {
        let kswapd_owner = self.kswapd_owner;
        let kswapd_cpu = self.mm.cfg.machine.cpus as usize;
        let start = self.kswapd.clock.max(now);
        self.mm.now = start;
        let free = self.mm.frames.free_pages();
        if free >= self.mm.wmark.high {
            // balance_pgdat ends: snapshot_refaults.
            self.lru.reclaim_done(&mut self.mm);
            self.kswapd.awake = false;
            self.kswapd.priority = DEF_PRIORITY;
            self.kswapd.clock = start;
            return;
        }
        let target = (self.mm.wmark.high - free).max(SWAP_CLUSTER_MAX);
        let mut sc = ScanControl {
            reclaimer: Reclaimer::Kswapd,
            priority: self.kswapd.priority,
            nr_to_reclaim: target,
            nr_scanned: 0,
            nr_reclaimed: 0,
            swappiness: self.mm.cfg.memcg.swappiness,
            owner: kswapd_owner,
            cpu: kswapd_cpu,
            force_deactivate: false,
            skipped_deactivate: false,
        };
        self.mm.block.start_plug(kswapd_owner);
        self.lru.shrink(&mut self.mm, &mut sc);
        let t = self.mm.now;
        self.mm.block.finish_plug(kswapd_owner, t, &mut self.mm.dispatched);
        self.zswap_shrink_slab(&sc);
        self.zswap_kick_worker();
        self.flush_dispatched();
        self.after_io();
        // Spend at least some time so that a futile loop still advances.
        let mut next = self.mm.now.max(start + SimDuration(1_000));
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
        if self.kswapd.failures >= MAX_RECLAIM_RETRIES && self.mm.nr_writeback == 0 {
            // "Hopeless" node: kswapd stops until woken again.
            self.kswapd.awake = false;
            self.kswapd.failures = 0;
            return;
        }
        self.schedule(next, Event::KswapdRun);
    }
}
