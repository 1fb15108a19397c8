//! Tasks on CPUs: picking the next task of a CPU, running it until it yields, sleeping on
//! I/O.
//!
//! A CPU's run ([`World::run_cpu`]) picks a task and hands it to the runner of its kind:
//! a user task replays its accesses inline ([`World::run_user`]), a kernel task takes
//! steps of its job ([`World::run_kernel`]). Each runs until it yields, and says why with
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
use super::stream::{Lookahead, NextUses, Stream};
use super::task::{Task, TaskKind, TaskState};
use super::wait::{Step, Wait};
use super::World;
use crate::error::{SimError, TraceError};
use crate::event::Event;
use crate::ids::{CpuId, TaskId};
use crate::mm::pagetable::{AccessView, PageId, PteState};
use crate::mm::swap::Swap;
use crate::mm::Mm;
use crate::time::{SimDuration, SimTime};
use crate::workload::{Access, TaskStart};

/// How many accesses ahead of the one it simulates a user task prefetches the PTE of.
const LOOKAHEAD: usize = 8;

/// The read-ahead step of access `at` of a task's buffer: prefetches the PTE of the access
/// [`LOOKAHEAD`] places on (recording its page in `pages`) and, halfway through that
/// distance, when the PTE has arrived, the slot entry of a swapped-out page, which its
/// fault reads first. The general path and the resident-hit loop both take it.
#[inline(always)]
fn read_ahead(
    accesses: &[Access],
    pages: &mut [Option<PageId>],
    at: usize,
    view: &mut AccessView<'_>,
    swap: &Swap,
) {
    if let Some(later) = accesses.get(at + LOOKAHEAD) {
        let page = view.peek_page(later.vpage);
        if let Some(page) = page {
            view.prefetch_pte(page);
        }
        pages[at + LOOKAHEAD] = page;
    }
    if let Some(&Some(page)) = pages.get(at + LOOKAHEAD / 2) {
        if let PteState::Swap(slot) = view.pte(page).state() {
            swap.prefetch_slot(slot);
        }
    }
}

/// Counts `k` completed accesses of `task` in `accesses`, the run's total, telling
/// `progress` the total at each multiple of [`super::PROGRESS_ACCESSES`], and in the task's
/// own; at the task's timeline checkpoint, schedules timeline operation `timeline_next`
/// and returns true. `k` must not pass a multiple or the checkpoint (see
/// [`counts_before_stop`]): only the last access counted can reach one.
#[inline(always)]
fn count_access(
    accesses: &mut u64,
    task: &mut Task,
    mm: &mut Mm,
    timeline_next: usize,
    progress: &mut dyn FnMut(u64),
    k: u64,
) -> bool {
    debug_assert!(k >= 1 && k <= counts_before_stop(*accesses, task));
    *accesses += k;
    if *accesses & (super::PROGRESS_ACCESSES - 1) == 0 {
        progress(*accesses);
    }
    task.accesses += k;
    if task.accesses != task.checkpoint_at {
        return false;
    }
    task.checkpoint_at = u64::MAX;
    let at = task.clock.max(mm.queue.now());
    mm.schedule(at, Event::Timeline(timeline_next as u32));
    true
}

/// How many accesses of `task` can be counted together: up to the next multiple of
/// [`super::PROGRESS_ACCESSES`] of the run's total `accesses`, or the task's timeline
/// checkpoint, whichever comes first. At least 1.
#[inline(always)]
fn counts_before_stop(accesses: u64, task: &Task) -> u64 {
    let to_progress = super::PROGRESS_ACCESSES - (accesses & (super::PROGRESS_ACCESSES - 1));
    // A checkpoint at or behind the task's count is never reached.
    let to_checkpoint = match task.checkpoint_at.checked_sub(task.accesses) {
        Some(d) if d > 0 => d,
        _ => u64::MAX,
    };
    to_progress.min(to_checkpoint)
}

/// Simulates up to `budget` resident hits of a task from its read-ahead buffer, stopping
/// before the first access that is not one: the buffer needs a refill first, `clock` has
/// passed `next_event`, the access's page was not found when it was read ahead, or its
/// PTE is not present. Each hit does what the general path does (the same
/// [`read_ahead`], the think time, the PTE's bits). Returns how many it simulated.
#[inline(always)]
fn replay_hits(
    ahead: &mut Lookahead,
    view: &mut AccessView<'_>,
    swap: &Swap,
    clock: &mut SimTime,
    next_event: SimTime,
    access_ns: u64,
    budget: u64,
) -> u64 {
    let Lookahead { accesses, pages, at: at_out, .. } = ahead;
    let len = accesses.len();
    let pages = &mut pages[..len];
    let first = *at_out;
    // Past `end`, the buffer needs a refill or the budget is spent.
    let end = len
        .saturating_sub(LOOKAHEAD)
        .min(first.saturating_add(usize::try_from(budget).unwrap_or(usize::MAX)));
    let mut at = first;
    while at < end && *clock <= next_event {
        let Some(page) = pages[at] else { break };
        let access = accesses[at];
        // The hit's bits go in first: they change no PTE's state, which is all the
        // prefetches below look at.
        let pte = view.pte_mut(page);
        if !pte.is_present() {
            break;
        }
        pte.touch(access.write);
        read_ahead(accesses, pages, at, view, swap);
        at += 1;
        *clock += SimDuration(access.think_ns.unwrap_or(access_ns));
    }
    *at_out = at;
    (at - first) as u64
}

#[cfg(test)]
thread_local! {
    /// Set by a test to send every access through the general path, so that it can
    /// compare the runs of [`Simulation::run_resident_hits`] with the general path's.
    pub(super) static GENERAL_PATH_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

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
    /// A kernel task's job is over, with this result.
    Finished(Finish),
    /// Its charge found no memory after reclaim gave up: the OOM killer chooses a
    /// victim, its own process or another, and it retries its access if it lives.
    OutOfMemory,
}

impl World {
    /// The next access of user task `t`, as its stream gives it. The source is read in
    /// batches ([`Lookahead`]), one call for many accesses; and the PTE of the
    /// access [`LOOKAHEAD`] places further on is prefetched now, so that the host's cache
    /// miss on it overlaps the simulation of the accesses before it instead of stalling
    /// the access itself. What the task does is unchanged: a source's stream does not
    /// depend on when it is asked (`AccessSource`), and its end or error comes after the
    /// accesses before it.
    #[inline]
    fn next_access(
        &mut self,
        t: TaskId,
        stream: &mut Stream,
    ) -> Result<Option<(Access, Option<PageId>)>, TraceError> {
        let task = &mut self.tasks[t];
        let ahead = &mut stream.ahead;
        if ahead.at + LOOKAHEAD >= ahead.accesses.len() {
            let next_uses = if self.track_next_use { NextUses::Read } else { NextUses::Skip };
            ahead.refill(&mut *stream.source, next_uses);
        }
        let at = ahead.at;
        let Some(&access) = ahead.accesses.get(at) else {
            // The stream's end, or its error: handed out once.
            return match ahead.end.replace(Ok(())) {
                Some(Err(err)) => Err(err),
                _ => Ok(None),
            };
        };
        if self.track_next_use {
            task.next_use = ahead.next_uses[at];
        }
        let mut view = self.mm.pt.access_view(task.space);
        read_ahead(&ahead.accesses, &mut ahead.pages, at, &mut view, &self.mm.swap);
        ahead.at = at + 1;
        self.lru.warm_tails(&self.mm);
        Ok(Some((access, ahead.pages[at])))
    }

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
                TaskKind::User => self.run_user(t, &mut streams[t.index()], progress).map_err(|e| *e)?,
                _ => self.run_kernel(t),
            };
            match why {
                Yield::Preempted => {
                    let clock = self.tasks[t].clock;
                    self.schedule(clock, Event::CpuRun(c));
                    self.cpus[c].scheduled = true;
                    return Ok(());
                }
                Yield::SliceEnd => {
                    self.leave_cpu(t, c);
                    self.enqueue(c, t);
                }
                Yield::Slept => self.sleep(t, c),
                Yield::Ended => self.end_task(t, c),
                Yield::Finished(finish) => self.end_job(t, c, finish),
                Yield::OutOfMemory => self.out_of_memory(t, c),
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
    fn must_yield(&mut self, t: TaskId) -> Option<Yield> {
        let clock = self.tasks[t].clock;
        let preempted = clock > self.mm.queue.next_time();
        if preempted || (clock > self.clock_stop && !self.sampled_below_limit(clock)) {
            return Some(Yield::Preempted);
        }
        (clock > self.cpus[self.tasks[t].cpu].slice_end).then_some(Yield::SliceEnd)
    }

    /// Runs user task `t`, reading `stream`, until it yields.
    #[inline(never)]
    fn run_user(
        &mut self,
        t: TaskId,
        stream: &mut Stream,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Yield, Box<SimError>> {
        // The error is boxed: the turn's result comes back in registers, not through memory.
        let access_ns = self.mm.cfg.cpu.access_ns;
        loop {
            if let Some(why) = self.must_yield(t) {
                return Ok(why);
            }
            if self.tasks[t].retry.is_none() && self.run_resident_hits(t, &mut stream.ahead, progress) > 0 {
                // The clock moved: look at the queue again before the next access.
                continue;
            }
            let (access, peeked) = match self.tasks[t].retry.take() {
                Some(a) => (a, None),
                None => match self.next_access(t, stream) {
                    Ok(Some((a, peeked))) => {
                        self.tasks[t].clock += SimDuration(a.think_ns.unwrap_or(access_ns));
                        if self.tasks[t].clock > self.time_limit {
                            // The access would come after the limit: it is not made.
                            self.tasks[t].retry = Some(a);
                            return Ok(Yield::Preempted);
                        }
                        (a, peeked)
                    }
                    Ok(None) => return Ok(Yield::Ended),
                    Err(source) => Err(SimError::Trace { task: self.tasks[t].name.clone(), source })?,
                },
            };
            self.mm.act_at(self.tasks[t].clock);
            let step =
                if self.resident_hit(&access, peeked) { Step::Done } else { self.counted_access(t, access)? };
            self.tasks[t].clock = self.mm.now();
            self.flush_dispatched();
            // Completions absorbed during this access are delivered once the task's
            // own state is final, so that a read it waits on can wake it.
            match step {
                Step::Done => {
                    self.count_access(t, progress);
                    self.after_io();
                }
                Step::Blocked(wait) => {
                    match wait {
                        // The access completes when the read does.
                        Wait::Frame { .. } => self.count_access(t, progress),
                        // The access is retried once writeback makes room.
                        Wait::Writeback | Wait::AnyIo => self.tasks[t].retry = Some(access),
                    }
                    self.tasks[t].wait = Some(wait);
                    return Ok(Yield::Slept);
                }
                Step::Oom => {
                    self.tasks[t].retry = Some(access);
                    return Ok(Yield::OutOfMemory);
                }
            }
        }
    }

    /// [`World::access`], counting the faults, major faults and swap-ins it made in the
    /// task's own figures.
    fn counted_access(&mut self, t: TaskId, access: Access) -> Result<Step, SimError> {
        let before = (self.mm.vmstat.pgfault, self.mm.vmstat.pgmajfault, self.mm.vmstat.pswpin);
        let step = self.access(t, access)?;
        let v = &self.mm.vmstat;
        let faults = &mut self.tasks[t].faults;
        faults.faults += v.pgfault - before.0;
        faults.major += v.pgmajfault - before.1;
        faults.swapins += v.pswpin - before.2;
        Ok(step)
    }

    /// Runs kernel task `t`'s job, step by step, until it yields. The steps work on the
    /// job taken out of the task, which goes back when the task yields.
    #[inline(never)]
    fn run_kernel(&mut self, t: TaskId) -> Yield {
        let mut job = self.take_job(t);
        let why = loop {
            if let Some(why) = self.must_yield(t) {
                break why;
            }
            self.mm.act_at(self.tasks[t].clock);
            let step = self.job_step(t, &mut job);
            self.tasks[t].clock = self.mm.now();
            self.flush_dispatched();
            match step {
                JobStep::Continue => self.after_io(),
                JobStep::Wait(wait) => {
                    self.tasks[t].wait = Some(wait);
                    break Yield::Slept;
                }
                JobStep::Finished(finish) => break Yield::Finished(finish),
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

    /// Simulates the accesses of user task `t` that come next and are resident hits, as
    /// the general path of [`World::run_user`] would (the same reading ahead and
    /// prefetches, think time, PTE bits and counts), in a loop that keeps the task and the
    /// memory model borrowed instead of indexing them again for every step; returns how
    /// many it simulated. It stops, leaving the access unread, at the first access that
    /// is not a hit, when the read-ahead buffer needs a refill and when the task's clock
    /// has passed the queue's next event, the general path taking it from there; and after
    /// an access that reached a timeline checkpoint, whose scheduled operation may be the
    /// queue's next event. It runs only when nothing is waiting to be delivered and the
    /// LRU does not follow accesses: a hit then changes nothing but its PTE, the clocks
    /// and the counts, so until a checkpoint the queue's next event stays where it was.
    fn run_resident_hits(&mut self, t: TaskId, ahead: &mut Lookahead, progress: &mut dyn FnMut(u64)) -> u64 {
        if self.track_access || self.mm.has_dispatched() || self.io_pending() {
            return 0;
        }
        #[cfg(test)]
        if GENERAL_PATH_ONLY.with(std::cell::Cell::get) {
            return 0;
        }
        let World { tasks, mm, lru, accesses, timeline_next, cpus, clock_stop, .. } = self;
        let task = &mut tasks[t];
        // The first access's tests, before anything is set up for a run: most calls on
        // a fault-heavy stream end here.
        match ahead.pages.get(ahead.at) {
            Some(&Some(page))
                if ahead.at + LOOKAHEAD < ahead.accesses.len() && mm.pt.pte(page).is_present() => {}
            _ => return 0,
        }
        // Hits stop at the queue's next event, at the slice's end while another task
        // waits for the CPU, and at the time limit or the next sampling boundary.
        let next_event = mm.queue.next_time().min(cpus[task.cpu].slice_end).min(*clock_stop);
        let access_ns = mm.cfg.cpu.access_ns;
        let mut n = 0;
        loop {
            // Hits run up to the next count that does more than add.
            let budget = counts_before_stop(*accesses, task);
            let mut view = mm.pt.access_view(task.space);
            let k = replay_hits(ahead, &mut view, &mm.swap, &mut task.clock, next_event, access_ns, budget);
            if k == 0 {
                return n;
            }
            // The LRU's steps for the accesses read, after them rather than between
            // (hits isolate nothing, so the steps are the same).
            for _ in 0..(k as usize).min(lru.warm_steps_left()) {
                lru.warm_tails(mm);
            }
            mm.act_at(task.clock);
            n += k;
            if count_access(accesses, task, mm, *timeline_next, progress, k) || k < budget {
                return n;
            }
        }
    }

    /// Counts a completed access of task `t` ([`count_access`]).
    #[inline]
    pub(super) fn count_access(&mut self, t: TaskId, progress: &mut dyn FnMut(u64)) {
        let World { accesses, tasks, mm, timeline_next, .. } = self;
        count_access(accesses, &mut tasks[t], mm, *timeline_next, progress, 1);
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
