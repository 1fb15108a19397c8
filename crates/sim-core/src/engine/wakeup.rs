//! Waking a task that slept on I/O, and whether it preempts the task running on its CPU:
//! the part of the kernel's EEVDF scheduler (`kernel/sched/fair.c`) that decides who runs
//! while several user tasks share a CPU and some of them wait on the disk.
//!
//! Each task keeps a virtual runtime, the CPU time it has run (every task has the default
//! weight, so virtual time is real time). The average over a CPU's runnable user tasks,
//! the running one included, is the point of fairness (`avg_vruntime`): a task whose
//! virtual runtime is at or below it is eligible. A task going to sleep keeps its lag,
//! the average minus its own, clamped to twice the base slice (`update_entity_lag`); on
//! waking it is placed that far below the average of the tasks it joins, the lag scaled
//! by (n + 1) / n for the n tasks already there (`place_entity` with `PLACE_LAG`). A task
//! starting is placed at the average (lag 0).
//!
//! The woken task preempts the running one (`check_preempt_wakeup_fair`) when the
//! running task is no longer eligible and the woken one is: `pick_eevdf` drops an
//! ineligible current task, so its slice protection (`RUN_TO_PARITY`) no longer holds,
//! and the woken task is then the one to run. A task that keeps sleeping on swap-ins uses
//! less than its share, so it preempts a task that computes without faulting; without
//! this, a woken task waited for the end of the running task's slice, and a job that did
//! not fault ran almost alone while the jobs that faulted made one access per slice.
//!
//! Simplified: the woken task goes to the head of the run queue and the running task's
//! slice ends now, rather than the CPU picking the eligible task with the earliest
//! virtual deadline among all queued tasks; at a slice's end the run queue is still
//! served in order. Kernel tasks (kswapd, the zswap pool-limit worker, timeline
//! operations) neither preempt nor are preempted this way and are left out of the
//! averages.

use super::task::TaskState;
use super::World;
use crate::event::Event;
use crate::ids::{CpuId, TaskId};
use crate::time::{SimDuration, SimTime};

impl World {
    /// Makes a blocked task runnable at `now`, owing its CPU the work done for it from
    /// `now` to `done` (finishing the fault it slept on) and its wake-up: the interrupt,
    /// the wakeup and the return from sleep run on its CPU, here when it next runs. It
    /// preempts the CPU's running task when the scheduler would (see the module).
    pub(super) fn wake(&mut self, t: TaskId, done: SimTime, now: SimTime) {
        self.take_wait(t);
        let task = &mut self.tasks[t];
        task.io_wait += now.since(task.blocked_since);
        task.state = TaskState::Runnable;
        let woken = task.clock.max(now);
        task.owed_cpu += done.since(woken.min(done)) + SimDuration(self.mm.cfg.cpu.wakeup_ns);
        task.clock = woken;
        let c = task.cpu;
        if !self.alone(c) && self.place_woken(t, c) {
            let cpu = &mut self.cpus[c];
            cpu.runq.push_front(t);
            cpu.slice_end = cpu.slice_start.min(now);
        } else {
            self.enqueue(c, t);
        }
        if self.cpus[c].current.is_none() && !self.cpus[c].scheduled {
            self.cpus[c].scheduled = true;
            let at = now.max(self.mm.queue.now());
            self.schedule(at, Event::CpuRun(c));
        }
    }

    /// Task `t`, which just left CPU `c` to sleep, keeps its lag against the CPU's
    /// runnable user tasks and itself (0 when it ran alone, and for a kernel task).
    #[inline]
    pub(super) fn note_lag(&mut self, t: TaskId, c: CpuId) {
        let lag = if self.alone(c) || !self.tasks[t].is_user() { 0 } else { self.lag_among(t, c) };
        self.tasks[t].lag = lag;
    }

    /// Task `t`'s lag against CPU `c`'s runnable user tasks and itself, clamped.
    fn lag_among(&self, t: TaskId, c: CpuId) -> i64 {
        let (sum, n) = self.runnable_vruntime(c);
        let own = self.tasks[t].vruntime as i64;
        let limit = self.lag_limit();
        ((sum + own) / (i64::from(n) + 1) - own).clamp(-limit, limit)
    }

    /// Places a starting task `t` at the average virtual runtime of CPU `c`'s runnable
    /// user tasks (its own when there are none).
    pub(super) fn place_new(&mut self, t: TaskId, c: CpuId) {
        let (sum, n) = self.runnable_vruntime(c);
        if n > 0 {
            self.tasks[t].vruntime = (sum / i64::from(n)) as u64;
        }
        self.tasks[t].lag = 0;
    }

    /// Places woken task `t` by its lag among CPU `c`'s runnable user tasks, and says
    /// whether it preempts the one running.
    fn place_woken(&mut self, t: TaskId, c: CpuId) -> bool {
        if !self.tasks[t].is_user() {
            return false;
        }
        let (sum, n) = self.runnable_vruntime(c);
        if n == 0 {
            return false;
        }
        let n = i64::from(n);
        let lag = self.tasks[t].lag * (n + 1) / n;
        let placed = (sum / n - lag).max(0);
        self.tasks[t].vruntime = placed as u64;
        let Some(current) = self.cpus[c].current.filter(|&u| self.tasks[u].is_user()) else {
            return false;
        };
        // Eligible: at or below the average of all, the woken task included.
        let avg_all = (sum + placed) / (n + 1);
        let running = self.live_vruntime(current, c) as i64;
        running > avg_all && placed <= avg_all
    }

    /// Sum and count of the virtual runtimes of CPU `c`'s runnable user tasks: those
    /// queued and the one running, with the time it has run since it was put on the CPU.
    fn runnable_vruntime(&self, c: CpuId) -> (i64, u32) {
        let cpu = &self.cpus[c];
        let mut sum = 0i64;
        let mut n = 0u32;
        for &u in cpu.runq.iter().chain(cpu.current.as_ref()) {
            let task = &self.tasks[u];
            if task.is_user() && task.state == TaskState::Runnable {
                sum += self.live_vruntime(u, c) as i64;
                n += 1;
            }
        }
        (sum, n)
    }

    /// Task `u`'s virtual runtime now: what it has banked, plus its run so far when it is
    /// CPU `c`'s running task (what `credit_run` will count when it leaves the CPU).
    fn live_vruntime(&self, u: TaskId, c: CpuId) -> u64 {
        let task = &self.tasks[u];
        let running = if self.cpus[c].current == Some(u) { self.run_so_far(c, task.clock).0 } else { 0 };
        task.vruntime + running
    }

    /// How long CPU `c`'s current task has run by `until`, from when it was put on the CPU.
    #[inline]
    pub(super) fn run_so_far(&self, c: CpuId, until: SimTime) -> SimDuration {
        until.since(self.cpus[c].run_from.min(until))
    }

    /// Whether CPU `c` runs nothing and has nothing queued: a task sleeping or waking
    /// there has no other task to compare with, the usual case of one task a CPU.
    #[inline(always)]
    fn alone(&self, c: CpuId) -> bool {
        let cpu = &self.cpus[c];
        cpu.current.is_none() && cpu.runq.is_empty()
    }

    /// The largest lag a task keeps: twice the base slice (`update_entity_lag`'s limit).
    fn lag_limit(&self) -> i64 {
        2 * self.slice.0 as i64
    }
}
