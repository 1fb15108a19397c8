//! Reclaim as a timeline operation: swap-out-all (`shrink_all_memory` until nothing more
//! can go, the state of a hibernated and resumed guest), lowering `memory.max` (reclaim
//! down to the new limit in the writer's context) and `mm_reclaim/run` (the
//! opportunistic-reclaim RFC: `shrink_all_memory(N_left)` in a loop until N pages were
//! freed, nothing more goes, or a timeout). All three run the same round,
//! [`Simulation::reclaim_round`]; they differ only in their goal.

use super::super::{Simulation, Step, Wait};
use crate::engine::reclaim::MAX_RECLAIM_RETRIES;
use crate::engine::task::{TaskKind, TaskState};
use crate::mm::vmscan::{Reclaimer, SWAP_CLUSTER_MAX};
use crate::time::SimTime;

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

    /// One round of a reclaim task: `shrink_all_memory(want)` (direct reclaim of at least
    /// `SWAP_CLUSTER_MAX` pages). Returns the pages freed and how the task goes on:
    /// `Some(step)`, or `None` when nothing more can go.
    fn reclaim_round(&mut self, t: usize, want: u64) -> (u64, Option<Step>) {
        let (owner, cpu) = (self.tasks[t].owner, self.tasks[t].cpu);
        let writes_before = self.mm.vmstat.pswpout;
        let freed = self.reclaim(owner, cpu, Reclaimer::Direct, want.max(SWAP_CLUSTER_MAX));
        let wrote = self.mm.vmstat.pswpout > writes_before;
        let nr_writeback = self.mm.nr_writeback;
        let (TaskKind::Reclaim { fruitless, .. } | TaskKind::MmReclaim { fruitless, .. }) =
            &mut self.tasks[t].kind
        else {
            unreachable!("reclaim_round runs reclaim tasks")
        };
        if freed > 0 || wrote {
            *fruitless = 0;
            return (freed, Some(Step::Done));
        }
        if nr_writeback > 0 {
            return (0, Some(Step::Blocked(Wait::Writeback)));
        }
        // A round that freed nothing may still have aged what it scanned (a young page is
        // kept once and goes the next time), so give up only after MAX_RECLAIM_RETRIES
        // such rounds in a row, as memory_max_write does: then nothing more can go (swap
        // full, or only pages in flight elsewhere).
        *fruitless += 1;
        if *fruitless >= MAX_RECLAIM_RETRIES {
            return (0, None);
        }
        (0, Some(Step::Done))
    }
}
