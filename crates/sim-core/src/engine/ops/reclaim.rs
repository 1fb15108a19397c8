//! Reclaim as a timeline operation: swap-out-all (`shrink_all_memory` until nothing more
//! can go, the state of a hibernated and resumed guest), lowering `memory.max` (reclaim
//! down to the new limit in the writer's context) and `mm_reclaim/run` (the
//! opportunistic-reclaim RFC: `shrink_all_memory(N_left)` in a loop until N pages were
//! freed, nothing more goes, or a timeout). All three run the same round,
//! [`Simulation::reclaim_round`]; they differ only in their goal.

use super::super::{Simulation, Step, Wait};
use crate::engine::reclaim::{DEF_PRIORITY, MAX_RECLAIM_RETRIES};
use crate::engine::task::{TaskKind, TaskState};
use crate::ids::DeviceId;
use crate::mm::vmscan::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
use crate::time::SimTime;

/// Where a paced `shrink_all_memory` stands between passes ([`Simulation::shrink_pass`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShrinkAll {
    /// The next pass's reclaim priority.
    priority: u32,
    /// Age the active list whatever the statistics say (after a fruitless sweep).
    force_deactivate: bool,
    /// Pages scanned by passes in a row that only aged pages.
    aging_scanned: u64,
    /// Sweeps down to priority 0 in a row that freed and wrote nothing.
    fruitless: u32,
}

impl Default for ShrinkAll {
    fn default() -> Self {
        ShrinkAll { priority: DEF_PRIORITY, force_deactivate: false, aging_scanned: 0, fruitless: 0 }
    }
}

impl Simulation {
    /// Reclaim until memcg usage is at most `goal`, or (no goal) until nothing more can be
    /// pushed out (`shrink_all_memory` in a loop).
    pub(in crate::engine) fn reclaim_step(&mut self, t: usize, goal: Option<u64>) -> Step {
        let reached = |sim: &Simulation| match goal {
            Some(g) => sim.mm.memcg_usage <= g,
            None => sim.mm.memcg_usage == 0,
        };
        if reached(self) {
            self.tasks[t].state = TaskState::Done;
            return Step::Done;
        }
        let want = match goal {
            Some(g) => self.mm.memcg_usage - g,
            None => self.mm.memcg_usage,
        };
        let (_, next) = self.reclaim_round(t, want);
        if reached(self) || next.is_none() {
            self.tasks[t].state = TaskState::Done;
            return Step::Done;
        }
        next.expect("checked above")
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
    pub(in crate::engine) fn mm_reclaim_step(&mut self, t: usize) -> Step {
        let TaskKind::MmReclaim { target, reclaimed, deadline, .. } = self.tasks[t].kind else {
            unreachable!("mm_reclaim_step runs mm-reclaim tasks")
        };
        if let Some(deadline) = deadline.filter(|&d| self.mm.now >= d) {
            return self.mm_reclaim_stop(t, "timeout", Some(deadline));
        }
        if target > 0 && reclaimed >= target {
            return self.mm_reclaim_stop(t, "target", None);
        }
        let want = if target == 0 { self.mm.memcg_usage } else { target - reclaimed };
        let (freed, next) = self.reclaim_round(t, want);
        let TaskKind::MmReclaim { reclaimed, .. } = &mut self.tasks[t].kind else {
            unreachable!("mm_reclaim_step runs mm-reclaim tasks")
        };
        *reclaimed += freed;
        let reclaimed = *reclaimed;
        if let Some(r) = &mut self.op_running {
            r.report.reclaimed_pages = Some(reclaimed);
        }
        if target > 0 && reclaimed >= target {
            return self.mm_reclaim_stop(t, "target", None);
        }
        match next {
            Some(step) => step,
            None => self.mm_reclaim_stop(t, "exhausted", None),
        }
    }

    /// Ends an mm-reclaim-run task, recording why; `at` closes the report at that instant
    /// (a timeout's deadline) rather than at the task's clock.
    fn mm_reclaim_stop(&mut self, t: usize, why: &str, at: Option<SimTime>) -> Step {
        if let Some(r) = &mut self.op_running {
            r.report.stopped_by = Some(why.to_string());
        }
        self.tasks[t].state = TaskState::Done;
        if let Some(at) = at {
            // The run loop's own `op_finished` then finds nothing running.
            self.op_finished(at);
        }
        Step::Done
    }

    /// One round of a reclaim task: a paced `shrink_all_memory` pass towards freeing
    /// `want` more pages ([`Simulation::shrink_pass`]). Returns the pages freed and how the
    /// task goes on: `Some(step)`, or `None` when nothing more can go.
    fn reclaim_round(&mut self, t: usize, want: u64) -> (u64, Option<Step>) {
        let (TaskKind::Reclaim { shrink, .. } | TaskKind::MmReclaim { shrink, .. }) = self.tasks[t].kind
        else {
            unreachable!("reclaim_round runs reclaim tasks")
        };
        let mut state = shrink;
        let out = self.shrink_pass(t, &mut state, want);
        let (TaskKind::Reclaim { shrink, .. } | TaskKind::MmReclaim { shrink, .. }) = &mut self.tasks[t].kind
        else {
            unreachable!("reclaim_round runs reclaim tasks")
        };
        *shrink = state;
        out
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
        t: usize,
        state: &mut ShrinkAll,
        excess: u64,
    ) -> (u64, Option<Step>) {
        if self.mm.nr_writeback >= excess.max(1) || self.mm.nr_writeback >= self.writeback_limit() {
            return (0, Some(Step::Blocked(Wait::Writeback)));
        }
        let (owner, cpu) = (self.tasks[t].owner, self.tasks[t].cpu);
        let mut sc = ScanControl {
            reclaimer: Reclaimer::Direct,
            priority: state.priority,
            nr_to_reclaim: (excess - self.mm.nr_writeback).max(SWAP_CLUSTER_MAX),
            nr_scanned: 0,
            nr_reclaimed: 0,
            swappiness: self.mm.cfg.memcg.swappiness,
            owner,
            cpu,
            force_deactivate: state.force_deactivate,
            skipped_deactivate: false,
        };
        let writes_before = self.mm.vmstat.pswpout;
        let aged_before = self.mm.vmstat.pgdeactivate;
        self.mm.block.start_plug(owner);
        self.lru.shrink(&mut self.mm, &mut sc);
        let now = self.mm.now;
        self.mm.block.finish_plug(owner, now, &mut self.mm.dispatched);
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
            return (freed, Some(Step::Done));
        }
        if self.mm.nr_writeback > 0 {
            return (0, Some(Step::Blocked(Wait::Writeback)));
        }
        // A pass that only aged pages (cleared referenced bits, deactivated) brought them
        // closer to reclaim: stay at this priority, the next passes find them, rather than
        // widen the scan to the whole list at once; but only until the aging passes have
        // scanned the lists twice over.
        if aged && state.aging_scanned < 2 * lru_pages {
            state.aging_scanned += sc.nr_scanned.max(1);
            return (0, Some(Step::Done));
        }
        state.aging_scanned = 0;
        if state.priority > 0 {
            state.priority -= 1;
            return (0, Some(Step::Done));
        }
        // A sweep down to priority 0 found nothing: go round again, aging the active list
        // whatever the statistics say, and give up after MAX_RECLAIM_RETRIES sweeps.
        let fruitless = state.fruitless + 1;
        *state = ShrinkAll { force_deactivate: sc.skipped_deactivate, fruitless, ..ShrinkAll::default() };
        if fruitless >= MAX_RECLAIM_RETRIES {
            return (0, None);
        }
        (0, Some(Step::Done))
    }
}
