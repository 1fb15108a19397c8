//! Reclaim as a timeline operation: swap-out-all (`shrink_all_memory` until nothing more
//! can go, the state of a hibernated and resumed guest), lowering `memory.max` (reclaim
//! down to the new limit in the writer's context) and `mm_reclaim/run` (the
//! opportunistic-reclaim RFC: `shrink_all_memory(N_left)` in a loop until N pages were
//! freed, nothing more goes, or a timeout). All three run the same paced pass,
//! [`World::shrink_pass`]; they differ only in their goal.

use super::super::job::{Finish, JobStep, MmReclaim, ShrinkAll};
use super::super::wait::Wait;
use super::super::World;
use crate::ids::{DeviceId, TaskId};
use crate::mm::vmscan::{Reclaimer, ScanControl, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};

impl World {
    /// Reclaim until memcg usage is at most `goal`, or (no goal) until nothing more can be
    /// pushed out (`shrink_all_memory` in a loop).
    pub(in crate::engine) fn reclaim_step(
        &mut self,
        t: TaskId,
        goal: Option<u64>,
        shrink: &mut ShrinkAll,
    ) -> JobStep {
        let reached = |w: &World| match goal {
            Some(g) => w.mm.memcg_usage() <= g,
            // Page tables stay while their process lives.
            None => w.mm.memcg_usage() <= w.mm.pt.table_pages(),
        };
        if reached(self) {
            return JobStep::Finished(Finish::Completed);
        }
        let want = match goal {
            Some(g) => self.mm.memcg_usage() - g,
            None => self.mm.memcg_usage() - self.mm.pt.table_pages(),
        };
        let (_, next) = self.shrink_pass(t, shrink, want);
        match next {
            Some(step) if !reached(self) => step,
            _ => JobStep::Finished(Finish::Completed),
        }
    }

    /// `/sys/power/mm_reclaim/run`: one `shrink_all_memory(N_left)` round, then stop at the
    /// target ("target"), after [`MAX_RECLAIM_RETRIES`] rounds in a row that freed and
    /// wrote nothing ("exhausted"; a target of 0 always ends this way), or at the deadline
    /// ("timeout").
    ///
    /// Reclaimed pages are what the rounds' LRU scans freed (`nr_reclaimed`): clean
    /// folios dropped, swap-cache folios whose writeback has completed included. A dirty
    /// anonymous page counts once it is freed, in a later round than the one that wrote it,
    /// so pages written and not yet freed when the operation stops are not counted.
    ///
    /// The kernel checks for the signal between rounds; so does this, and a timeout closes
    /// the report at the deadline's instant. The round in flight then (or the writeback
    /// wait) is not interrupted: what it freed is counted.
    pub(in crate::engine) fn mm_reclaim_step(&mut self, t: TaskId, m: &mut MmReclaim) -> JobStep {
        if let Some(deadline) = m.deadline.filter(|&d| self.mm.now() >= d) {
            m.stopped_by = Some("timeout");
            return JobStep::Finished(Finish::CompletedAt(deadline));
        }
        if m.target > 0 && m.reclaimed >= m.target {
            m.stopped_by = Some("target");
            return JobStep::Finished(Finish::Completed);
        }
        // Everything reclaim can take: the group's usage but its page tables.
        let want = if m.target == 0 {
            self.mm.memcg_usage() - self.mm.pt.table_pages()
        } else {
            m.target - m.reclaimed
        };
        let (freed, next) = self.shrink_pass(t, &mut m.shrink, want);
        m.reclaimed += freed;
        if m.target > 0 && m.reclaimed >= m.target {
            m.stopped_by = Some("target");
            return JobStep::Finished(Finish::Completed);
        }
        match next {
            Some(step) => step,
            None => {
                m.stopped_by = Some("exhausted");
                JobStep::Finished(Finish::Completed)
            }
        }
    }

    /// Pages that may be under writeback before a reclaimer waits: every tag of every
    /// queued swap device taken by a request of `SWAP_CLUSTER_MAX` pages, the most one
    /// reclaim batch submits under its plug. The kernel's reclaimer sleeps in
    /// `blk_mq_get_tag` when the tags run out, and so writes no faster than the disk; the
    /// model's block layer never makes a submitter wait, so reclaim tasks wait here instead.
    pub(in crate::engine) fn writeback_limit(&self) -> u64 {
        (0..self.mm.swap.devices.len())
            .map(|d| DeviceId(d as u8))
            .filter(|&d| !self.mm.block.is_synchronous(d))
            .map(|d| u64::from(self.mm.block.queue_depth(d)) * SWAP_CLUSTER_MAX)
            .sum::<u64>()
            .max(SWAP_CLUSTER_MAX)
    }

    /// One pass of `shrink_all_memory` (`do_try_to_free_pages` at one priority, as direct
    /// reclaim) towards freeing `excess` more pages, paced by the disk. Returns the pages
    /// the pass freed and how the task goes on: `Some(step)`, or `None` when
    /// [`MAX_RECLAIM_RETRIES`] sweeps from `DEF_PRIORITY` down to 0 in a row freed and
    /// wrote nothing.
    ///
    /// The kernel runs the whole shrink in one call, and what keeps it from writing far
    /// more than it needs is the disk: the reclaimer sleeps for a tag once the queue is
    /// full, and pages written earlier complete meanwhile and are freed when a later scan
    /// finds them clean at the tail. The model's scans run at CPU speed and its block layer
    /// never makes a submitter wait, so a single call would write every page on the list
    /// before any of it could be freed. The pass is paced instead:
    /// - pages under writeback count as going: a pass asks for `excess` less what is in
    ///   flight, and the task waits for writeback when that covers the excess;
    /// - at most [`Simulation::writeback_limit`] pages are in flight: beyond, the task
    ///   waits, as the kernel's reclaimer waits for a tag;
    /// - a pass that writes, frees or ages something starts the next at `DEF_PRIORITY`
    ///   again, so that one pass never scans (and writes) the whole list; passes that only
    ///   age stay at their priority until they have scanned the lists twice over; only
    ///   passes that find nothing widen the scan.
    pub(in crate::engine) fn shrink_pass(
        &mut self,
        t: TaskId,
        state: &mut ShrinkAll,
        excess: u64,
    ) -> (u64, Option<JobStep>) {
        if self.mm.nr_writeback() >= excess.max(1) || self.mm.nr_writeback() >= self.writeback_limit() {
            return (0, Some(JobStep::Wait(Wait::Writeback)));
        }
        let (owner, cpu) = (self.tasks[t].owner, self.tasks[t].cpu);
        let nr_to_reclaim = (excess - self.mm.nr_writeback()).max(SWAP_CLUSTER_MAX);
        let swappiness = self.mm.cfg.memcg.swappiness;
        let mut sc =
            ScanControl::new(Reclaimer::Direct, state.priority, nr_to_reclaim, swappiness, (owner, cpu));
        sc.force_deactivate = state.force_deactivate;
        let writes_before = self.mm.vmstat.pswpout;
        let aged_before = self.mm.vmstat.pgdeactivate;
        self.mm.start_plug(owner);
        self.lru.shrink(&mut self.mm, &mut sc);
        self.mm.finish_plug(owner);
        self.zswap_shrink_slab(&sc);
        self.lru.reclaim_done(&mut self.mm);
        self.zswap_kick_worker();
        let freed = sc.nr_reclaimed;
        let progress = freed > 0 || self.mm.vmstat.pswpout > writes_before;
        // Scanning ages too: it clears the referenced bits of the pages it keeps.
        let aged = self.mm.vmstat.pgdeactivate > aged_before || sc.nr_scanned > 0;
        let lru_pages = {
            let sizes = self.lru.sizes();
            sizes.inactive_anon + sizes.active_anon
        };
        if progress {
            *state = ShrinkAll::default();
            return (freed, Some(JobStep::Continue));
        }
        if self.mm.nr_writeback() > 0 {
            return (0, Some(JobStep::Wait(Wait::Writeback)));
        }
        // A pass that only aged pages (cleared referenced bits, deactivated) brought them
        // closer to reclaim: stay at this priority, the next passes find them, rather than
        // widen the scan to the whole list at once; but only until the aging passes have
        // scanned the lists twice over.
        if aged && state.aging_scanned < 2 * lru_pages {
            state.aging_scanned += sc.nr_scanned.max(1);
            return (0, Some(JobStep::Continue));
        }
        state.aging_scanned = 0;
        if state.priority > 0 {
            state.priority -= 1;
            return (0, Some(JobStep::Continue));
        }
        // A sweep down to priority 0 found nothing: go round again, aging the active list
        // whatever the statistics say, and give up after MAX_RECLAIM_RETRIES sweeps.
        let fruitless = state.fruitless + 1;
        *state = ShrinkAll { force_deactivate: sc.skipped_deactivate, fruitless, ..ShrinkAll::default() };
        if fruitless >= MAX_RECLAIM_RETRIES {
            return (0, None);
        }
        (0, Some(JobStep::Continue))
    }
}
