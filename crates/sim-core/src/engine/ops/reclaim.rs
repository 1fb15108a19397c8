//! Reclaim as a timeline operation: swap-out-all (`shrink_all_memory` until nothing more
//! can go, the state of a hibernated and resumed guest) and lowering `memory.max`
//! (reclaim down to the new limit in the writer's context).

use super::super::{Simulation, Step, Wait};
use crate::engine::reclaim::MAX_RECLAIM_RETRIES;
use crate::engine::task::{TaskKind, TaskState};
use crate::mm::vmscan::{Reclaimer, SWAP_CLUSTER_MAX};

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
        let (owner, cpu) = (self.tasks[t].owner, self.tasks[t].cpu);
        let writes_before = self.mm.vmstat.pswpout;
        let freed = self.reclaim(owner, cpu, Reclaimer::Direct, want.max(SWAP_CLUSTER_MAX));
        if reached(self) {
            self.tasks[t].state = TaskState::Done;
            return Step::Done;
        }
        let TaskKind::Reclaim { fruitless, .. } = &mut self.tasks[t].kind else {
            unreachable!("reclaim_step runs reclaim tasks")
        };
        if freed > 0 || self.mm.vmstat.pswpout > writes_before {
            *fruitless = 0;
            return Step::Done;
        }
        if self.mm.nr_writeback > 0 {
            return Step::Blocked(Wait::Writeback);
        }
        // A round that freed nothing may still have aged what it scanned (a young page is
        // kept once and goes the next time), so give up only after MAX_RECLAIM_RETRIES
        // such rounds in a row, as memory_max_write does: then nothing more can go (swap
        // full, or only pages in flight elsewhere).
        *fruitless += 1;
        if *fruitless >= MAX_RECLAIM_RETRIES {
            self.tasks[t].state = TaskState::Done;
        }
        Step::Done
    }
}
