//! Timeline operations and the kernel tasks that carry out the long ones.
//!
//! Swapoff models `try_to_unuse` (mm/swapfile.c): walk every address space's page tables
//! in order; for each PTE holding a slot of the device, look the slot up in the swap cache
//! and on a miss read it through `swapin_readahead` with a synthetic fault, exactly as a
//! fault would (so neighbours are read ahead); then `unuse_pte` installs an old PTE and the
//! slot is freed. No fault is counted, but `pswpin` and `swap_ra` are, and `swap_ra_hit`
//! when the configured kernel credits swapoff's hits. After a full walk the remaining
//! swap-cache-only slots are dropped; the walk repeats until the device is empty.
//!
//! Simplified: shmem is not modelled (no `shmem_unuse`); the walk visits tasks' address
//! spaces in task order rather than the kernel's mmlist order; a swapoff that runs out of
//! memory stops and re-enables the device, as the kernel's does with -ENOMEM.

use super::*;
use crate::timeline::{OpReport, Operation, Trigger};

/// Where a swapoff walk is.
#[derive(Debug)]
pub(super) struct SwapoffState {
    device: DeviceId,
    space: usize,
    region_idx: usize,
    vpage: u64,
    /// Walk finished: drop the remaining swap-cache-only slots.
    sweeping: bool,
}

/// The operation in progress and the counters when it started.
#[derive(Debug)]
pub(super) struct RunningOp {
    report: OpReport,
    at_start: Counters,
}

/// Counters an operation report is a difference of.
#[derive(Debug, Clone, Default)]
struct Counters {
    vmstat: crate::stats::Vmstat,
    block: crate::stats::BlockTotals,
}

impl Simulation {
    fn counters(&self) -> Counters {
        Counters { vmstat: self.mm.vmstat.clone(), block: self.mm.block.totals() }
    }

    /// Schedules the next timeline operation once its trigger allows; `now` is when the
    /// previous one finished.
    pub(super) fn arm_next_op(&mut self, now: SimTime) {
        let Some(Some(op)) = self.timeline.get(self.timeline_next) else { return };
        let at = match op.trigger {
            Trigger::AfterPrevious => now,
            Trigger::At(t) => t.max(now),
            Trigger::WorkloadEnd if self.workload_done => now,
            Trigger::WorkloadEnd => return,
            Trigger::AfterAccesses { task, accesses } => {
                let t = &mut self.tasks[task];
                if t.accesses < accesses && !matches!(t.state, TaskState::Done | TaskState::Killed) {
                    // Fired by `count_access` when the task gets there.
                    t.checkpoint_at = accesses;
                    return;
                }
                now
            }
        };
        let at = at.max(self.mm.queue.now());
        self.schedule(at, Event::Timeline(self.timeline_next as u32));
    }

    /// Called when a user task ends; arms an operation waiting for the workload's end.
    pub(super) fn check_workload_done(&mut self, at: SimTime) {
        if self.workload_done {
            return;
        }
        let done = self
            .tasks
            .iter()
            .filter(|t| matches!(t.kind, TaskKind::User))
            .all(|t| matches!(t.state, TaskState::Done | TaskState::Killed));
        if done {
            self.workload_done = true;
            let waiting = matches!(
                self.timeline.get(self.timeline_next),
                Some(Some(TimelineOp { trigger: Trigger::WorkloadEnd, .. }))
            );
            if waiting && self.op_running.is_none() {
                self.arm_next_op(at);
            }
        }
    }

    /// Starts timeline operation `i`.
    pub(super) fn start_op(&mut self, i: usize, now: SimTime) {
        let TimelineOp { op, .. } = self.timeline[i].take().expect("each operation starts once");
        self.timeline_next = i + 1;
        self.mm.now = now;
        let mut report =
            OpReport { op: op.name().to_string(), start_s: now.as_secs_f64(), ..OpReport::default() };
        let at_start = self.counters();
        let mut finished = true;
        match op {
            Operation::Swapoff { device } => {
                report.device = Some(device.clone());
                match self.device_id(&device) {
                    Some(dev) if self.mm.swap.devices[dev.0 as usize].writeok => {
                        self.mm.swap.devices[dev.0 as usize].writeok = false;
                        let state =
                            SwapoffState { device: dev, space: 0, region_idx: 0, vpage: 0, sweeping: false };
                        self.spawn_kernel_task(format!("swapoff {device}"), TaskKind::Swapoff(state), now);
                        finished = false;
                    }
                    Some(_) => report.result = format!("device \"{device}\" is not in use"),
                    None => report.result = format!("no swap device named \"{device}\""),
                }
            }
            Operation::Swapon { device } => {
                report.device = Some(device.clone());
                match self.device_id(&device) {
                    Some(dev) => self.mm.swap.devices[dev.0 as usize].writeok = true,
                    None => report.result = format!("no swap device named \"{device}\""),
                }
            }
            Operation::SetPageCluster(pc) => self.mm.cfg.swap.page_cluster = pc,
            Operation::SetReadahead(policy) => self.policies.readahead = policy,
            Operation::SetMemcgLimit(limit) => {
                self.mm.memcg_limit = limit;
                if let Some(goal) = limit.filter(|&l| self.mm.memcg_usage > l) {
                    self.spawn_kernel_task(
                        "memory.max writer".into(),
                        TaskKind::Reclaim { goal: Some(goal) },
                        now,
                    );
                    finished = false;
                }
            }
            Operation::PauseTasks => self.paused = true,
            Operation::ResumeTasks => {
                self.paused = false;
                for c in 0..self.mm.cfg.machine.cpus as usize {
                    let cpu = &self.cpus[c];
                    if !cpu.scheduled && (cpu.current.is_some() || !cpu.runq.is_empty()) {
                        self.cpus[c].scheduled = true;
                        self.schedule(now, Event::CpuRun(c as u32));
                    }
                }
            }
            Operation::SwapOutAll => {
                self.spawn_kernel_task("swap out all".into(), TaskKind::Reclaim { goal: None }, now);
                finished = false;
            }
            Operation::Mark(label) => report.label = Some(label),
        }
        self.op_running = Some(RunningOp { report, at_start });
        if finished {
            self.op_finished(now);
        }
    }

    /// Closes the running operation's report and arms the next one.
    pub(super) fn op_finished(&mut self, now: SimTime) {
        let Some(RunningOp { mut report, at_start }) = self.op_running.take() else { return };
        self.end = self.end.max(now);
        let c = self.counters();
        let at_start = &at_start;
        let c = &c;
        report.end_s = Some(now.as_secs_f64());
        report.duration_s = Some(now.since(SimTime((report.start_s * 1e9).round() as u64)).as_secs_f64());
        if report.result.is_empty() {
            report.result = "completed".into();
        }
        fill_deltas(&mut report, at_start, c);
        self.op_reports.push(report);
        self.arm_next_op(now);
    }

    /// Reports of finished operations, plus the running one marked "running".
    pub(super) fn op_reports(&self) -> Vec<OpReport> {
        let mut out = self.op_reports.clone();
        if let Some(r) = &self.op_running {
            let mut report = r.report.clone();
            report.result = "running".into();
            fill_deltas(&mut report, &r.at_start, &self.counters());
            out.push(report);
        }
        out
    }

    fn device_id(&self, name: &str) -> Option<DeviceId> {
        self.mm.cfg.devices.iter().position(|d| d.name == name).map(|i| DeviceId(i as u8))
    }

    /// Adds a kernel task on a CPU of its own and starts it at `now`.
    fn spawn_kernel_task(&mut self, name: String, kind: TaskKind, now: SimTime) {
        let t = self.tasks.len();
        let cpu = self.cpus.len();
        self.cpus.push(Cpu::default());
        let owner = self.mm.block.add_plug_owner();
        self.tasks.push(Task {
            name,
            kind,
            space: 0,
            cpu,
            owner,
            source: Box::new(std::iter::empty()),
            retry: None,
            state: TaskState::Runnable,
            wait: None,
            clock: now,
            accesses: 0,
            checkpoint_at: u64::MAX,
            blocked_since: now,
            io_wait: SimDuration::ZERO,
        });
        self.cpus[cpu].runq.push_back(t);
        self.cpus[cpu].scheduled = true;
        self.schedule(now, Event::CpuRun(cpu as u32));
    }

    /// One unit of a kernel task's work. Sets the task `Done` when it has finished.
    pub(super) fn kernel_step(&mut self, t: usize) -> Step {
        match self.tasks[t].kind {
            TaskKind::Swapoff(_) => self.swapoff_step(t),
            TaskKind::Reclaim { goal } => self.reclaim_step(t, goal),
            TaskKind::User => unreachable!("user tasks replay accesses"),
        }
    }

    fn swapoff_state(&mut self, t: usize) -> &mut SwapoffState {
        match &mut self.tasks[t].kind {
            TaskKind::Swapoff(s) => s,
            _ => unreachable!("swapoff step of a swapoff task"),
        }
    }

    fn swapoff_step(&mut self, t: usize) -> Step {
        if self.swapoff_state(t).sweeping {
            return self.swapoff_sweep(t);
        }
        // Find the next PTE that holds a slot of the device, charging the walk.
        let walk_ns = self.mm.cfg.cpu.swapoff_walk_ns;
        let n_spaces = self.mm.pt.spaces.len();
        loop {
            let SwapoffState { device, space, region_idx, vpage, .. } = *self.swapoff_state(t);
            if space >= n_spaces {
                self.swapoff_state(t).sweeping = true;
                return Step::Done;
            }
            let regions = &self.mm.pt.spaces[space].regions;
            if region_idx >= regions.len() {
                let s = self.swapoff_state(t);
                (s.space, s.region_idx, s.vpage) = (space + 1, 0, 0);
                continue;
            }
            let r = &regions[region_idx];
            let vp = vpage.max(r.start.0);
            if vp >= r.end().0 {
                let s = self.swapoff_state(t);
                (s.region_idx, s.vpage) = (region_idx + 1, 0);
                continue;
            }
            let Some(page) = self.mm.pt.existing_page(space, region_idx, VirtPage(vp)) else {
                // A page table that was never allocated: skip its 2 MiB.
                self.swapoff_state(t).vpage =
                    (vp / crate::mm::pagetable::CHUNK_PAGES + 1) * crate::mm::pagetable::CHUNK_PAGES;
                continue;
            };
            self.mm.spend(walk_ns);
            match self.mm.pt.pte(page).state() {
                PteState::Swap(slot) if slot.device == device => {
                    let step = self.swap_fault(SwapIn {
                        t,
                        space,
                        page,
                        region_idx,
                        vpage: VirtPage(vp),
                        slot,
                        write: false,
                        swapoff: true,
                    });
                    match step {
                        // Retry this PTE once memory frees up.
                        Step::Blocked(Wait::Writeback) => return step,
                        Step::Oom => {
                            self.abort_swapoff(t, "out of memory");
                            return Step::Done;
                        }
                        _ => {
                            self.swapoff_state(t).vpage = vp + 1;
                            return step;
                        }
                    }
                }
                _ => self.swapoff_state(t).vpage = vp + 1,
            }
            // Yield now and then so that a long walk over unrelated PTEs lets events in.
            if vp % 64 == 0 {
                return Step::Done;
            }
        }
    }

    /// After the walk: free what only the swap cache still holds, then finish or walk again.
    fn swapoff_sweep(&mut self, t: usize) -> Step {
        let device = self.swapoff_state(t).device;
        let cached: Vec<(u32, Pfn)> = self.mm.swap.cached_slots(device);
        let mut busy = false;
        for (offset, pfn) in cached {
            let slot = SwapSlot { device, offset };
            if self.mm.swap.count(slot) > 0 {
                continue;
            }
            if self.mm.frames.test(pfn, flag::LOCKED | flag::WRITEBACK) {
                busy = true;
            } else if self.mm.frames.owner(pfn).is_some() {
                self.mm.folio_free_swap(pfn);
            } else {
                self.lru.remove(&mut self.mm, pfn);
                self.mm.swap.cache_delete(slot, None);
                self.mm.frames.set_swap_slot(pfn, None);
                self.mm.free_frame(pfn);
            }
        }
        if self.mm.swap.devices[device.0 as usize].inuse() == 0 {
            self.tasks[t].state = TaskState::Done;
            return Step::Done;
        }
        if busy {
            return Step::Blocked(Wait::AnyIo);
        }
        // Slots still referenced: walk again (try_to_unuse's retry loop).
        *self.swapoff_state(t) = SwapoffState { device, space: 0, region_idx: 0, vpage: 0, sweeping: false };
        Step::Done
    }

    fn abort_swapoff(&mut self, t: usize, why: &str) {
        let device = self.swapoff_state(t).device;
        self.mm.swap.devices[device.0 as usize].writeok = true;
        if let Some(r) = &mut self.op_running {
            r.report.result = format!("failed: {why}");
        }
        self.tasks[t].state = TaskState::Done;
    }

    /// Reclaim until memcg usage is at most `goal`, or (no goal) until nothing more can be
    /// pushed out (`shrink_all_memory` in a loop).
    fn reclaim_step(&mut self, t: usize, goal: Option<u64>) -> Step {
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
        if freed > 0 || self.mm.vmstat.pswpout > writes_before {
            return Step::Done;
        }
        if self.mm.nr_writeback > 0 {
            return Step::Blocked(Wait::Writeback);
        }
        // Nothing more can go (swap full, or only pages in flight elsewhere).
        self.tasks[t].state = TaskState::Done;
        Step::Done
    }
}

fn fill_deltas(report: &mut OpReport, a: &Counters, b: &Counters) {
    report.vmstat = b.vmstat.since(&a.vmstat);
    report.block = b.block.since(&a.block);
    report.pswpin = report.vmstat.pswpin;
    report.pswpout = report.vmstat.pswpout;
    report.swap_ra = report.vmstat.swap_ra;
    report.swap_ra_hit = report.vmstat.swap_ra_hit;
    report.read_requests = report.block.reads.completed;
    report.read_kib = report.block.reads.completed_kib;
    report.write_requests = report.block.writes.completed;
}
