//! Tasks on CPUs: picking the next task of a CPU, running it until it yields, sleeping on
//! I/O.
//!
//! A CPU's run ([`World::run_cpu`]) picks a task and hands it to the runner of its kind:
//! a user task replays its accesses inline ([`World::run_user`], `user.rs`), a kernel task
//! takes steps of its job ([`World::run_kernel`]). Each runs until it yields, and says why with
//! a [`Yield`], which `run_cpu` handles in one place: preempted by the queue's next event,
//! asleep on I/O, ended, or killed.
//!
//! Waking, and whether the woken task preempts the running one, is `wakeup.rs`.
//!
//! Simplified: tasks take turns of a base slice in run-queue order, not by EEVDF's virtual
//! deadlines; a task woken by an I/O completion pays a fixed `wakeup_ns` (interrupt,
//! wakeup, scheduling); kernel tasks started by the timeline and kswapd run on CPUs of
//! their own.

use super::job::{Finish, JobStep};
use super::stream::Stream;
use super::task::{TaskKind, TaskState};
use super::wait::Wait;
use super::World;
use crate::error::SimError;
use crate::event::Event;
use crate::ids::{CpuId, TaskId};
use crate::time::{SimDuration, SimTime};
use crate::workload::TaskStart;

/// Why a task stopped running on its CPU.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Yield {
    /// Its clock passed the queue's next event: the CPU runs it again at its clock.
    Preempted,
    /// Its slice is over and another task waits on its CPU's run queue: it goes to the
    /// queue's tail and the next task takes the CPU.
    SliceEnd,
    /// It sleeps until what it waits for completes (its `wait`, which the runner set).
    Slept,
    /// A user task's stream is over.
    Ended,
    /// Its charge found no memory after reclaim gave up: the OOM killer chooses a
    /// victim, its own process or another, and it retries its access if it lives.
    OutOfMemory,
}

/// How a turn of a task ended. A user task's turn is a [`Yield`], which carries no data
/// so that [`World::run_user`] returns it in registers: a value written to memory by the
/// callee and read back at once, wider than the stores that wrote it, stalls the host
/// at every turn.
#[derive(Clone, Copy, Debug)]
enum TurnEnd {
    /// The task yielded.
    Yield(Yield),
    /// A kernel task's job is over, with this result.
    Finished(Finish),
}

impl World {
    /// Runs CPU `c` from `now`: picks tasks and runs each until it yields, until the CPU
    /// has nothing to run or its task was preempted by the queue's next event.
    pub(super) fn run_cpu(
        &mut self,
        c: CpuId,
        now: SimTime,
        streams: &mut [Stream],
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), SimError> {
        self.cpus[c].scheduled = false;
        if self.paused && c.index() < self.mm.cfg.machine.cpus as usize {
            return Ok(());
        }
        loop {
            // Reclaim inside an earlier task's access may have processed events past the
            // time this CPU was woken at: a task picked up now starts no earlier than that.
            let now = now.max(self.mm.queue.now());
            let Some(t) = self.pick_next(c, now) else {
                self.zswap_worker_cpu_idle(c);
                return Ok(());
            };
            self.tasks[t].clock = self.tasks[t].clock.max(now);
            let why = match self.tasks[t].kind {
                TaskKind::User => {
                    TurnEnd::Yield(self.run_user(t, &mut streams[t.index()], progress).map_err(|e| *e)?)
                }
                _ => self.run_kernel(t),
            };
            match why {
                TurnEnd::Yield(Yield::Preempted) => {
                    let clock = self.tasks[t].clock;
                    self.schedule(clock, Event::CpuRun(c));
                    self.cpus[c].scheduled = true;
                    return Ok(());
                }
                TurnEnd::Yield(Yield::SliceEnd) => {
                    self.leave_cpu(t, c);
                    self.enqueue(c, t);
                }
                TurnEnd::Yield(Yield::Slept) => self.sleep(t, c),
                TurnEnd::Yield(Yield::Ended) => self.end_task(t, c),
                TurnEnd::Finished(finish) => self.end_job(t, c, finish),
                TurnEnd::Yield(Yield::OutOfMemory) => self.out_of_memory(t, c),
            }
        }
    }

    /// The task CPU `c` runs next: the one it was running, else the head of its run
    /// queue, which starts no earlier than the CPU finished its last work and pays a
    /// context switch if another task ran last, with a new slice. Killed tasks are
    /// dropped on the way. `None`: nothing to run.
    fn pick_next(&mut self, c: CpuId, now: SimTime) -> Option<TaskId> {
        loop {
            match self.cpus[c].current {
                Some(t) if self.tasks[t].state == TaskState::Killed => self.cpus[c].current = None,
                Some(t) => return Some(t),
                None => {
                    let t = self.cpus[c].runq.pop_front()?;
                    if self.tasks[t].state == TaskState::Killed {
                        continue;
                    }
                    let cpu = &mut self.cpus[c];
                    cpu.current = Some(t);
                    let task = &mut self.tasks[t];
                    // What the task owes its CPU runs from when both were free, which may be
                    // before this pick when the engine saw the wake-up late; the task itself
                    // runs no earlier than now.
                    let owed = std::mem::replace(&mut task.owed_cpu, SimDuration::ZERO);
                    let start = if owed > SimDuration::ZERO { task.clock } else { task.clock.max(now) };
                    let switch = if cpu.last.is_some_and(|l| l != t) {
                        SimDuration(self.mm.cfg.cpu.context_switch_ns)
                    } else {
                        SimDuration::ZERO
                    };
                    task.clock = (start.max(cpu.busy_until) + switch + owed).max(now);
                    cpu.busy += switch + owed;
                    task.vruntime += owed.0;
                    cpu.run_from = task.clock;
                    cpu.last = Some(t);
                    cpu.slice_start = task.clock;
                    cpu.slice_end =
                        if cpu.runq.is_empty() { SimTime::MAX } else { cpu.slice_start + self.slice };
                    return Some(t);
                }
            }
        }
    }

    /// Puts task `t` at the tail of CPU `c`'s run queue. The task running there, if any,
    /// now has a competitor: its slice ends `base_slice` after it began.
    pub(super) fn enqueue(&mut self, c: CpuId, t: TaskId) {
        let cpu = &mut self.cpus[c];
        cpu.runq.push_back(t);
        if cpu.current.is_some() && cpu.slice_end == SimTime::MAX {
            cpu.slice_end = cpu.slice_start + self.slice;
        }
    }

    /// Task `t` leaves CPU `c`, which was busy with it until its clock.
    pub(super) fn leave_cpu(&mut self, t: TaskId, c: CpuId) {
        let clock = self.tasks[t].clock;
        self.credit_run(c, t, clock);
        let cpu = &mut self.cpus[c];
        cpu.current = None;
        cpu.busy_until = cpu.busy_until.max(clock);
    }

    /// Task `t`, CPU `c`'s current task, ran there from when it was put on the CPU until
    /// `until`: the CPU's busy time and the task's virtual runtime both count it.
    pub(super) fn credit_run(&mut self, c: CpuId, t: TaskId, until: SimTime) {
        let ran = self.run_so_far(c, until);
        self.cpus[c].busy += ran;
        self.tasks[t].vruntime += ran.0;
    }

    /// Whether task `t` must stop running now: its clock has passed the queue's next
    /// event, which must come first, or the time limit (think time in a trace can carry a
    /// task there between events; the queue then ends the run at the limit), both
    /// [`Yield::Preempted`]; or the end of its slice while another task waits for its CPU
    /// ([`Yield::SliceEnd`]). Past a sampling boundary otherwise, it samples and goes on.
    #[inline]
    pub(super) fn must_yield(&mut self, t: TaskId) -> Option<Yield> {
        let clock = self.tasks[t].clock;
        let preempted = clock > self.mm.queue.next_time();
        if preempted || (clock > self.clock_stop && !self.sampled_below_limit(clock)) {
            return Some(Yield::Preempted);
        }
        (clock > self.cpus[self.tasks[t].cpu].slice_end).then_some(Yield::SliceEnd)
    }

    /// Runs kernel task `t`'s job, step by step, until it yields. The steps work on the
    /// job taken out of the task, which goes back when the task yields.
    #[inline(never)]
    fn run_kernel(&mut self, t: TaskId) -> TurnEnd {
        let mut job = self.take_job(t);
        let why = loop {
            if let Some(why) = self.must_yield(t) {
                break TurnEnd::Yield(why);
            }
            self.mm.act_at(self.tasks[t].clock);
            let step = self.job_step(t, &mut job);
            self.tasks[t].clock = self.mm.now();
            self.flush_dispatched();
            match step {
                JobStep::Continue => self.after_io(),
                JobStep::Wait(wait) => {
                    self.tasks[t].wait = Some(wait);
                    break TurnEnd::Yield(Yield::Slept);
                }
                JobStep::Finished(finish) => break TurnEnd::Finished(finish),
            }
        };
        if let TaskKind::Kernel(slot) = &mut self.tasks[t].kind {
            *slot = job;
        }
        why
    }

    /// User task `t` on CPU `c` has ended its stream: its process exits if its end is
    /// the exit, and tasks waiting for its end start.
    fn end_task(&mut self, t: TaskId, c: CpuId) {
        self.tasks[t].state = TaskState::Done;
        if self.tasks[t].exit_on_end {
            // The teardown runs in the exiting task, before its parent sees it exit.
            let pages = self.exit_mm(t);
            self.tasks[t].clock += SimDuration(pages.saturating_mul(self.mm.cfg.cpu.exit_page_ns));
        }
        let at = self.tasks[t].clock;
        self.end = self.end.max(at);
        self.leave_cpu(t, c);
        self.task_ended(t, at, Some(c));
        self.check_workload_done(at);
    }

    /// Kernel task `t` on CPU `c` has finished its job: its operation's report closes
    /// and the timeline moves on.
    fn end_job(&mut self, t: TaskId, c: CpuId, finish: Finish) {
        self.tasks[t].state = TaskState::Done;
        self.leave_cpu(t, c);
        self.after_io();
        self.job_finished(t, finish, self.tasks[t].clock);
    }

    /// User task `t` on CPU `c` found no memory: the memory cgroup's OOM killer
    /// (`mem_cgroup_out_of_memory`) kills the process with the most memory, and every task
    /// of it ends. When that is another process, `t` keeps the CPU and retries its access;
    /// when it is its own, `t` is gone.
    fn out_of_memory(&mut self, t: TaskId, c: CpuId) {
        let space = self.tasks[t].space;
        let victim = self.oom_victim().unwrap_or(space);
        let at = self.tasks[t].clock;
        self.oom_kill(victim, at);
        if victim == space {
            self.leave_cpu(t, c);
        }
        self.after_io();
        // The kill took every task of the process, waiting ones included.
        self.process_ended(victim, at, Some(c));
    }

    /// Counts the end of every task of address space `space` the OOM killer took, at
    /// `at`, as CPU `c` (if any) saw it, and checks whether the workload is over.
    pub(super) fn process_ended(&mut self, space: crate::ids::SpaceId, at: SimTime, c: Option<CpuId>) {
        for u in (0..self.tasks.len()).map(TaskId::from_index) {
            if self.tasks[u].space == space && self.tasks[u].state == TaskState::Killed {
                self.task_ended(u, at, c);
            }
        }
        self.check_workload_done(at);
    }

    /// Task `t` leaves CPU `c` to sleep on what its `wait` says; completions absorbed
    /// meanwhile are delivered after its state is final, so that a read it waits on can
    /// wake it.
    pub(super) fn sleep(&mut self, t: TaskId, c: CpuId) {
        let task = &mut self.tasks[t];
        task.state = TaskState::Blocked;
        if let Some(wait) = &task.wait {
            self.sleepers.add(wait);
        }
        task.blocked_since = task.clock;
        self.leave_cpu(t, c);
        self.note_lag(t, c);
        self.after_io();
    }

    /// Ends what task `t` sleeps on, if anything, and returns it; the sleeper counts follow.
    pub(super) fn take_wait(&mut self, t: TaskId) -> Option<Wait> {
        let wait = self.tasks[t].wait.take();
        if let Some(wait) = &wait {
            self.sleepers.remove(wait);
        }
        wait
    }

    /// Counts the end of user task `t` at `at` (its stream finished or it was killed) and
    /// starts the tasks that were waiting for it: those waiting for `t` itself, then those
    /// waiting for this many ends, each group in index order; and when `t` was the last
    /// task of its process, those waiting for this many process exits. Counting twice is
    /// a no-op, so a kill can report every task of the process, whatever ended before.
    /// `running` is the CPU whose run loop saw the end, if one did; it picks up a task
    /// started on it without an event.
    pub(super) fn task_ended(&mut self, t: TaskId, at: SimTime, running: Option<CpuId>) {
        let task = &mut self.tasks[t];
        if task.ended_at.is_some() || !task.is_user() {
            return;
        }
        task.ended_at = Some(at);
        if task.started_at.is_some() {
            let live = &mut self.cpus[task.cpu].live_users;
            assert!(*live > 0, "a started user task ends on a CPU that counts it");
            *live -= 1;
        }
        self.n_ended += 1;
        let first = self.after_task.partition_point(|&(j, _)| j < t);
        let last = self.after_task.partition_point(|&(j, _)| j <= t);
        for k in first..last {
            let (_, u) = self.after_task[k];
            self.start_task(u, at, running);
        }
        let n = self.n_ended;
        let first = self.after_ends.partition_point(|&(m, _)| (m as usize) < n);
        let last = self.after_ends.partition_point(|&(m, _)| m as usize <= n);
        for k in first..last {
            let (_, u) = self.after_ends[k];
            self.start_task(u, at, running);
        }
        let space = self.tasks[t].space;
        let process_over =
            self.tasks.iter().all(|u| !u.is_user() || u.space != space || u.ended_at.is_some());
        if process_over {
            self.n_exits += 1;
            let n = self.n_exits;
            let first = self.after_exits.partition_point(|&(m, _)| m < n);
            let last = self.after_exits.partition_point(|&(m, _)| m <= n);
            for k in first..last {
                let (_, u) = self.after_exits[k];
                self.start_task(u, at, running);
            }
        }
    }

    /// Waiting task `t`'s start condition held at `at`: it starts then, or after its start
    /// delay (an `Event::Start`). A task the OOM killer took before it started stays
    /// killed.
    fn start_task(&mut self, t: TaskId, at: SimTime, running: Option<CpuId>) {
        if self.tasks[t].state != TaskState::Waiting {
            return;
        }
        let delay = self.tasks[t].start_delay;
        if delay > SimDuration::ZERO {
            self.tasks[t].state = TaskState::Starting;
            let at = at.max(self.mm.queue.now()) + delay;
            self.schedule(at, Event::Start(t));
            return;
        }
        self.start_now(t, at, running);
    }

    /// Starts task `t` at `at` on the user CPU with the fewest live user tasks (the
    /// lowest-numbered among equals), as `wake_up_new_task` places a new task on an idle
    /// CPU when there is one. A task killed meanwhile stays killed.
    pub(super) fn start_now(&mut self, t: TaskId, at: SimTime, running: Option<CpuId>) {
        if !matches!(self.tasks[t].state, TaskState::Waiting | TaskState::Starting) {
            return;
        }
        debug_assert!(
            self.tasks[t].start != TaskStart::AtStart || self.tasks[t].start_delay > SimDuration::ZERO,
            "only waiting tasks start late"
        );
        let n_user_cpus = self.mm.cfg.machine.cpus as usize;
        let c = (1..n_user_cpus).map(CpuId::from_index).fold(CpuId(0), |best, c| {
            if self.cpus[c].live_users < self.cpus[best].live_users {
                c
            } else {
                best
            }
        });
        self.cpus[c].live_users += 1;
        let at = at.max(self.mm.queue.now());
        let task = &mut self.tasks[t];
        task.cpu = c;
        task.state = TaskState::Runnable;
        task.clock = at;
        task.blocked_since = at;
        task.started_at = Some(at);
        self.exec(t);
        self.place_new(t, c);
        self.enqueue(c, t);
        if Some(c) != running && self.cpus[c].current.is_none() && !self.cpus[c].scheduled {
            self.cpus[c].scheduled = true;
            self.schedule(at, Event::CpuRun(c));
        }
    }

    /// A task whose process starts by `exec` pays for it before its first access: the
    /// CPU time of `cpu.exec_ns` and the start-up's `cpu.exec_faults` page faults.
    pub(super) fn exec(&mut self, t: TaskId) {
        if !self.tasks[t].exec {
            return;
        }
        let cpu = &self.mm.cfg.cpu;
        let (exec_ns, exec_faults) = (cpu.exec_ns, cpu.exec_faults);
        let task = &mut self.tasks[t];
        task.owed_cpu += SimDuration(exec_ns);
        task.faults.faults += exec_faults;
        self.mm.vmstat.pgfault += exec_faults;
    }
}
