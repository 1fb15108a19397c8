//! Timeline operations: arming each at its trigger, starting it, and reporting what it
//! did. Operations that take effect at once (knobs, pause, resume, mark) are carried out
//! here; the long ones run as kernel tasks whose steps live in a file per family:
//! `swapoff.rs` (`try_to_unuse`: swapoff, `mm_reclaim/release`) and `reclaim.rs`
//! (swap-out-all, lowering `memory.max`, `mm_reclaim/run`); `hibernate.rs` (hibernate,
//! resume).

mod hibernate;
mod reclaim;
mod swapoff;
#[cfg(test)]
pub(in crate::engine) mod tests;

pub(crate) use hibernate::{HibTask, Hibernation};
pub(crate) use reclaim::ShrinkAll;

use super::task::{Cpu, SwapoffState, Task, TaskKind, TaskState};
use super::{Simulation, Step};
use crate::event::Event;
use crate::ids::DeviceId;
use crate::time::{SimDuration, SimTime};
use crate::timeline::{OpReport, Operation, TimelineOp, Trigger};

/// The operation in progress and the counters when it started.
#[derive(Clone, Debug)]
pub(crate) struct RunningOp {
    pub(crate) report: OpReport,
    pub(crate) at_start: Counters,
}

/// Counters an operation report is a difference of.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counters {
    pub(crate) vmstat: crate::stats::Vmstat,
    pub(crate) block: crate::stats::BlockTotals,
}

impl Simulation {
    pub(in crate::engine) fn counters(&self) -> Counters {
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
    /// The workload has ended when every user task has (`Simulation::task_ended` counts
    /// them, so a queue of thousands of jobs is not rescanned at every end).
    pub(super) fn check_workload_done(&mut self, at: SimTime) {
        if self.workload_done {
            return;
        }
        if self.n_ended == self.n_user_tasks {
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
        if let Some(why) =
            self.hibernated_refusal(op.name()).filter(|_| !matches!(op, Operation::Resume { .. }))
        {
            report.result = why;
            self.op_running = Some(RunningOp { report, at_start });
            self.op_finished(now);
            return;
        }
        match op {
            Operation::Swapoff { device } => {
                report.device = Some(device.clone());
                match self.device_id(&device) {
                    Some(dev) if self.mm.swap.devices[dev.0 as usize].writeok => {
                        self.mm.swap.devices[dev.0 as usize].writeok = false;
                        let state = SwapoffState {
                            device: dev,
                            space: 0,
                            region_idx: 0,
                            vpage: 0,
                            sweeping: false,
                            budget: None,
                            disable: true,
                            then: Vec::new(),
                        };
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
            Operation::SetPageCluster(pc) => {
                self.mm.cfg.swap.page_cluster = pc;
                self.swapin_knobs_set = true;
            }
            Operation::SetReadahead(policy) => {
                self.policies.readahead = policy;
                self.swapin_knobs_set = true;
            }
            Operation::SetMemcgLimit(limit) => {
                self.mm.memcg_limit = limit;
                if let Some(goal) = limit.filter(|&l| self.mm.memcg_usage > l) {
                    self.spawn_kernel_task(
                        "memory.max writer".into(),
                        TaskKind::Reclaim { goal: Some(goal), shrink: ShrinkAll::default() },
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
                self.spawn_kernel_task(
                    "swap out all".into(),
                    TaskKind::Reclaim { goal: None, shrink: ShrinkAll::default() },
                    now,
                );
                finished = false;
            }
            Operation::Hibernate(h) => finished = !self.start_hibernate(h, now, &mut report),
            Operation::Resume { boot } => finished = !self.start_resume(boot, now, &mut report),
            Operation::MmReclaimRun { pages, timeout } => {
                report.reclaimed_pages = Some(0);
                let deadline = timeout.map(|d| SimTime(now.0.saturating_add(d.0)));
                self.spawn_kernel_task(
                    "mm_reclaim run".into(),
                    TaskKind::MmReclaim {
                        target: pages,
                        reclaimed: 0,
                        deadline,
                        shrink: ShrinkAll::default(),
                    },
                    now,
                );
                finished = false;
            }
            Operation::MmReclaimRelease { pages } => {
                report.released_pages = Some(0);
                // Every writable device, by descending priority (the order swapon keeps).
                let mut devices: Vec<DeviceId> = (0..self.mm.swap.devices.len())
                    .filter(|&d| self.mm.swap.devices[d].writeok)
                    .map(|d| DeviceId(d as u8))
                    .collect();
                devices.sort_by_key(|d| std::cmp::Reverse(self.mm.swap.devices[d.0 as usize].priority));
                if !devices.is_empty() {
                    let device = devices.remove(0);
                    let state = SwapoffState {
                        device,
                        space: 0,
                        region_idx: 0,
                        vpage: 0,
                        sweeping: false,
                        budget: (pages > 0).then_some(pages),
                        disable: false,
                        then: devices,
                    };
                    self.spawn_kernel_task("mm_reclaim release".into(), TaskKind::Swapoff(state), now);
                    finished = false;
                }
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

    pub(in crate::engine) fn device_id(&self, name: &str) -> Option<DeviceId> {
        self.mm.cfg.devices.iter().position(|d| d.name == name).map(|i| DeviceId(i as u8))
    }

    /// Adds a kernel task on a CPU of its own and starts it at `now`.
    pub(in crate::engine) fn spawn_kernel_task(&mut self, name: String, kind: TaskKind, now: SimTime) {
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
            ahead: super::task::Lookahead::default(),
            next_use: None,
            retry: None,
            state: TaskState::Runnable,
            wait: None,
            clock: now,
            accesses: 0,
            checkpoint_at: u64::MAX,
            blocked_since: now,
            io_wait: SimDuration::ZERO,
            start: crate::workload::TaskStart::AtStart,
            exit_on_end: false,
            reads_create: false,
            started_at: Some(now),
            ended_at: None,
        });
        self.cpus[cpu].runq.push_back(t);
        self.cpus[cpu].scheduled = true;
        self.schedule(now, Event::CpuRun(cpu as u32));
    }

    /// One unit of a kernel task's work. Sets the task `Done` when it has finished.
    pub(super) fn kernel_step(&mut self, t: usize) -> Step {
        match self.tasks[t].kind {
            TaskKind::Swapoff(_) => self.swapoff_step(t),
            TaskKind::Reclaim { goal, .. } => self.reclaim_step(t, goal),
            TaskKind::MmReclaim { .. } => self.mm_reclaim_step(t),
            TaskKind::Hibernate(_) => self.hibernate_step(t),
            TaskKind::User => unreachable!("user tasks replay accesses"),
        }
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
