//! Timeline operations: arming each at its trigger, starting it, and reporting what it
//! did. Operations that take effect at once (knobs, pause, resume, mark) are carried out
//! here; the long ones run as kernel tasks whose jobs (`super::job`) step in a file per
//! family: `swapoff.rs` (`try_to_unuse`: swapoff, `mm_reclaim/release`), `reclaim.rs`
//! (swap-out-all, lowering `memory.max`, `mm_reclaim/run`) and `hibernate.rs` (hibernate,
//! resume).

mod hibernate;
mod reclaim;
mod swapoff;
#[cfg(test)]
pub(in crate::engine) mod tests;

use super::job::{Finish, Job, JobStep, MmReclaim, ReclaimGoal, SwapoffState};
use super::task::{Cpu, Task};
use super::World;
use crate::event::Event;
use crate::ids::{CpuId, DeviceId, TaskId};
use crate::time::SimTime;
use crate::timeline::{OpReport, OpResult, Operation, TimelineOp, Trigger};

/// The operation in progress: its report so far, when it started and the counters then.
#[derive(Clone, Debug)]
pub(crate) struct RunningOp {
    pub(crate) report: OpReport,
    pub(crate) started: SimTime,
    pub(crate) at_start: Counters,
}

/// Counters an operation report is a difference of.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counters {
    pub(crate) vmstat: crate::stats::Vmstat,
    pub(crate) block: crate::stats::BlockTotals,
}

/// How starting an operation went: it took effect at once (or failed at once, its report
/// says why), or it goes on as the job of a kernel task of this name.
enum Started {
    Done,
    Job(String, Job),
}

impl World {
    pub(in crate::engine) fn counters(&self) -> Counters {
        Counters { vmstat: self.mm.vmstat.clone(), block: self.mm.block.totals() }
    }

    /// Schedules the next timeline operation once its trigger allows; `now` is when the
    /// previous one finished.
    pub(super) fn arm_next_op(&mut self, now: SimTime) {
        let Some(op) = self.timeline.get(self.timeline_next) else { return };
        let at = match op.trigger {
            Trigger::AfterPrevious => now,
            Trigger::At(t) => t.max(now),
            Trigger::WorkloadEnd if self.workload_done => now,
            Trigger::WorkloadEnd => return,
            Trigger::AfterAccesses { task, accesses } => {
                let t = &mut self.tasks[task];
                if t.accesses < accesses
                    && !matches!(t.state, super::task::TaskState::Done | super::task::TaskState::Killed)
                {
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
    /// The workload has ended when every user task has (`World::task_ended` counts
    /// them, so a queue of thousands of jobs is not rescanned at every end).
    pub(super) fn check_workload_done(&mut self, at: SimTime) {
        if self.workload_done {
            return;
        }
        if self.n_ended == self.n_user_tasks {
            self.workload_done = true;
            let waiting = matches!(
                self.timeline.get(self.timeline_next),
                Some(TimelineOp { trigger: Trigger::WorkloadEnd, .. })
            );
            if waiting && self.op_running.is_none() {
                self.arm_next_op(at);
            }
        }
    }

    /// Starts timeline operation `i`, the next one: at once, or as a kernel task's job.
    pub(super) fn start_op(&mut self, i: usize, now: SimTime) {
        assert_eq!(i, self.timeline_next, "timeline operations start once each, in order");
        let op = self.timeline[i].op.clone();
        self.timeline_next = i + 1;
        self.mm.act_at(now);
        let mut report =
            OpReport { op: op.name().to_string(), start_s: now.as_secs_f64(), ..OpReport::default() };
        let at_start = self.counters();
        let refusal = self.hibernated_refusal(op.name()).filter(|_| !matches!(op, Operation::Resume { .. }));
        let started = match refusal {
            Some(why) => {
                report.result = OpResult::Failed(why);
                Started::Done
            }
            None => self.start(op, now, &mut report),
        };
        self.op_running = Some(RunningOp { report, started: now, at_start });
        match started {
            Started::Done => self.op_finished(now),
            Started::Job(name, job) => self.spawn_kernel_task(name, job, now),
        }
    }

    /// Carries out `op` at `now` if it takes effect at once, or says which job it runs as.
    fn start(&mut self, op: Operation, now: SimTime, report: &mut OpReport) -> Started {
        match op {
            Operation::Swapoff { device } => {
                report.device = Some(device.clone());
                match self.device_id(&device) {
                    Some(dev) if self.mm.swap.writeok(dev) => {
                        self.mm.swap.disable(dev);
                        return Started::Job(
                            format!("swapoff {device}"),
                            Job::Swapoff(Box::new(SwapoffState::swapoff(dev))),
                        );
                    }
                    Some(_) => report.result = OpResult::Failed(format!("device \"{device}\" is not in use")),
                    None => report.result = OpResult::Failed(format!("no swap device named \"{device}\"")),
                }
            }
            Operation::Swapon { device } => {
                report.device = Some(device.clone());
                match self.device_id(&device) {
                    // The kernel's swapon refuses a device already in use with EBUSY.
                    Some(dev) if self.mm.swap.writeok(dev) => {
                        report.result = OpResult::Failed(format!("device \"{device}\" is already on (EBUSY)"))
                    }
                    Some(dev) => self.mm.swap.enable(dev),
                    None => report.result = OpResult::Failed(format!("no swap device named \"{device}\"")),
                }
            }
            Operation::SetPageCluster(pc) => {
                self.mm.set_page_cluster(pc);
                self.swapin_knobs_set = true;
            }
            Operation::SetReadahead(policy) => {
                self.policies.readahead = policy;
                self.swapin_knobs_set = true;
            }
            Operation::SetMemcgLimit(limit) => {
                self.mm.set_memcg_limit(limit);
                if let Some(goal) = self.mm.memcg_limit().filter(|&l| self.mm.memcg_usage() > l) {
                    let job = Job::Reclaim(Box::new(ReclaimGoal::new(Some(goal))));
                    return Started::Job("memory.max writer".into(), job);
                }
            }
            Operation::PauseTasks => self.paused = true,
            Operation::ResumeTasks => {
                self.paused = false;
                self.kick_user_cpus(now);
            }
            Operation::SwapOutAll => {
                let job = Job::Reclaim(Box::new(ReclaimGoal::new(None)));
                return Started::Job("swap out all".into(), job);
            }
            Operation::Hibernate(h) => {
                if let Some(job) = self.start_hibernate(h, now, report) {
                    return Started::Job("hibernate".into(), job);
                }
            }
            Operation::Resume { boot } => {
                if let Some(job) = self.start_resume(boot, now, report) {
                    return Started::Job("resume".into(), job);
                }
            }
            Operation::MmReclaimRun { pages, timeout } => {
                report.reclaimed_pages = Some(0);
                let deadline = timeout.map(|d| SimTime(now.0.saturating_add(d.0)));
                return Started::Job(
                    "mm_reclaim run".into(),
                    Job::MmReclaim(Box::new(MmReclaim::new(pages, deadline))),
                );
            }
            Operation::MmReclaimRelease { pages } => {
                report.released_pages = Some(0);
                // Every writable device, by descending priority (the order swapon keeps).
                let mut devices: Vec<DeviceId> = (0..self.mm.swap.devices.len())
                    .map(|d| DeviceId(d as u8))
                    .filter(|&d| self.mm.swap.writeok(d))
                    .collect();
                devices.sort_by_key(|d| std::cmp::Reverse(self.mm.swap.devices[d.0 as usize].priority));
                if !devices.is_empty() {
                    let device = devices.remove(0);
                    let state = SwapoffState::release(device, (pages > 0).then_some(pages), devices);
                    return Started::Job("mm_reclaim release".into(), Job::Swapoff(Box::new(state)));
                }
            }
            Operation::Mark(label) => report.label = Some(label),
        }
        Started::Done
    }

    /// Schedules a run of every user CPU that has work and none pending: tasks were
    /// resumed or thawed.
    pub(in crate::engine) fn kick_user_cpus(&mut self, now: SimTime) {
        for c in (0..self.mm.cfg.machine.cpus as usize).map(CpuId::from_index) {
            let cpu = &self.cpus[c];
            if !cpu.scheduled && (cpu.current.is_some() || !cpu.runq.is_empty()) {
                self.cpus[c].scheduled = true;
                self.schedule(now, Event::CpuRun(c));
            }
        }
    }

    /// Closes the running operation's report at `now` and arms the next one.
    pub(super) fn op_finished(&mut self, now: SimTime) {
        let Some(RunningOp { mut report, started, at_start }) = self.op_running.take() else { return };
        self.end = self.end.max(now);
        let c = self.counters();
        report.end_s = Some(now.as_secs_f64());
        report.duration_s = Some(now.since(started).as_secs_f64());
        fill_deltas(&mut report, &at_start, &c);
        self.op_reports.push(report);
        self.arm_next_op(now);
    }

    /// Kernel task `t`'s job ended with `finish` when its clock read `clock`: its figures
    /// and result go into the operation's report, which closes.
    pub(in crate::engine) fn job_finished(&mut self, t: TaskId, finish: Finish, clock: SimTime) {
        let job = self.take_job(t);
        let at = match &finish {
            Finish::CompletedAt(at) => *at,
            Finish::Completed | Finish::Failed(_) => clock,
        };
        if let Some(running) = &mut self.op_running {
            job.fill_report(&mut running.report);
            if let Finish::Failed(why) = finish {
                let why = why.describe(|d| self.mm.cfg.devices[d.0 as usize].name.clone());
                running.report.result = OpResult::Failed(why);
            }
        }
        self.op_finished(at);
    }

    /// Reports of finished operations, plus the running one marked "running", with what
    /// its job has done so far.
    pub(super) fn op_reports(&self) -> Vec<OpReport> {
        let mut out = self.op_reports.clone();
        if let Some(r) = &self.op_running {
            let mut report = r.report.clone();
            for task in &self.tasks {
                if let super::task::TaskKind::Kernel(job) = &task.kind {
                    job.fill_report(&mut report);
                }
            }
            report.result = OpResult::Running;
            fill_deltas(&mut report, &r.at_start, &self.counters());
            out.push(report);
        }
        out
    }

    pub(in crate::engine) fn device_id(&self, name: &str) -> Option<DeviceId> {
        self.mm.cfg.devices.iter().position(|d| d.name == name).map(|i| DeviceId(i as u8))
    }

    /// Adds a kernel task running `job` on a CPU of its own and starts it at `now`.
    fn spawn_kernel_task(&mut self, name: String, job: Job, now: SimTime) {
        let t = TaskId::from_index(self.tasks.len());
        let cpu = CpuId::from_index(self.cpus.len());
        self.cpus.push(Cpu::default());
        let owner = self.mm.block.add_plug_owner();
        self.tasks.push(Task::kernel(name, job, cpu, owner, now));
        self.cpus[cpu].runq.push_back(t);
        self.cpus[cpu].scheduled = true;
        self.schedule(now, Event::CpuRun(cpu));
    }

    /// The job of kernel task `t`, taken out of the task (which keeps `Job::Done`) so that
    /// a step can work on it beside the world. A user task has none.
    pub(in crate::engine) fn take_job(&mut self, t: TaskId) -> Job {
        match &mut self.tasks[t].kind {
            super::task::TaskKind::Kernel(job) => std::mem::replace(job, Job::Done),
            super::task::TaskKind::User => Job::Done,
        }
    }

    /// One unit of kernel task `t`'s work on `job`.
    pub(in crate::engine) fn job_step(&mut self, t: TaskId, job: &mut Job) -> JobStep {
        match job {
            Job::Swapoff(s) => self.swapoff_step(t, s),
            Job::Reclaim(r) => self.reclaim_step(t, r.goal, &mut r.shrink),
            Job::MmReclaim(m) => self.mm_reclaim_step(t, m),
            Job::Hibernate(h) => self.hibernate_step(t, h),
            Job::Resume(r) => self.resume_step(t, r),
            Job::Done => JobStep::Finished(Finish::Completed),
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
