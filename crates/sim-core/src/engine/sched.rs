//! Tasks on CPUs: running a task's accesses inline until the next event, sleeping on
//! I/O, waking.
//!
//! Simplified: a task woken by an I/O completion pays a fixed `wakeup_ns` (interrupt,
//! wakeup, scheduling) rather than a modelled scheduler; kernel tasks started by the
//! timeline and kswapd run on CPUs of their own.

use super::task::{Lookahead, Task, TaskKind, TaskState};
use super::{Simulation, Step, Wait};
use crate::error::{SimError, TraceError};
use crate::event::Event;
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

impl Simulation {
    /// The next access of user task `t`, as its source gives it. The source is read in
    /// batches ([`super::task::Lookahead`]), one call for many accesses; and the PTE of the
    /// access [`LOOKAHEAD`] places further on is prefetched now, so that the host's cache
    /// miss on it overlaps the simulation of the accesses before it instead of stalling
    /// the access itself. What the task does is unchanged: a source's stream does not
    /// depend on when it is asked (`AccessSource`), and its end or error comes after the
    /// accesses before it.
    #[inline]
    fn next_access(&mut self, t: usize) -> Result<Option<(Access, Option<PageId>)>, TraceError> {
        let task = &mut self.tasks[t];
        let ahead = &mut task.ahead;
        if ahead.at + LOOKAHEAD >= ahead.accesses.len() {
            ahead.refill(&mut *task.source, self.track_next_use);
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

    pub(super) fn run_cpu(
        &mut self,
        c: usize,
        now: SimTime,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), SimError> {
        self.cpus[c].scheduled = false;
        if self.paused && c < self.mm.cfg.machine.cpus as usize {
            return Ok(());
        }
        loop {
            // Reclaim inside an earlier task's access may have processed events past the
            // time this CPU was woken at: a task picked up now starts no earlier than that.
            let now = now.max(self.mm.queue.now());
            let t = match self.cpus[c].current {
                Some(t) if self.tasks[t].state == TaskState::Killed => {
                    self.cpus[c].current = None;
                    continue;
                }
                Some(t) => t,
                None => {
                    let Some(t) = self.cpus[c].runq.pop_front() else { return Ok(()) };
                    if self.tasks[t].state == TaskState::Killed {
                        continue;
                    }
                    self.cpus[c].current = Some(t);
                    let task = &mut self.tasks[t];
                    task.clock = task.clock.max(now);
                    if self.cpus[c].last.is_some_and(|l| l != t) {
                        task.clock += SimDuration(self.mm.cfg.cpu.context_switch_ns);
                    }
                    self.cpus[c].last = Some(t);
                    t
                }
            };
            self.tasks[t].clock = self.tasks[t].clock.max(now);
            let access_ns = self.mm.cfg.cpu.access_ns;
            loop {
                let clock = self.tasks[t].clock;
                if self.mm.queue.peek_time().is_some_and(|next| clock > next) {
                    self.schedule(clock, Event::CpuRun(c as u32));
                    self.cpus[c].scheduled = true;
                    return Ok(());
                }
                if !matches!(self.tasks[t].kind, TaskKind::User) {
                    self.mm.now = self.tasks[t].clock;
                    let step = self.kernel_step(t);
                    self.tasks[t].clock = self.mm.now;
                    self.flush_dispatched();
                    if self.tasks[t].state == TaskState::Done {
                        self.cpus[c].current = None;
                        self.after_io();
                        self.op_finished(self.tasks[t].clock);
                        break;
                    }
                    if let Step::Blocked(wait) = step {
                        self.sleep(t, c, wait);
                        break;
                    }
                    self.after_io();
                    continue;
                }
                if self.tasks[t].retry.is_none() && self.run_resident_hits(t, progress) > 0 {
                    // The clock moved: look at the queue again before the next access.
                    continue;
                }
                let (access, peeked) = match self.tasks[t].retry.take() {
                    Some(a) => (a, None),
                    None => {
                        let next = self.next_access(t);
                        let task = &mut self.tasks[t];
                        match next {
                            Ok(Some((a, peeked))) => {
                                task.clock += SimDuration(a.think_ns.unwrap_or(access_ns));
                                (a, peeked)
                            }
                            Ok(None) => {
                                task.state = TaskState::Done;
                                self.end = self.end.max(task.clock);
                                self.cpus[c].current = None;
                                let at = task.clock;
                                if self.tasks[t].exit_on_end {
                                    self.exit_mm(t);
                                }
                                self.task_ended(t, at, c);
                                self.check_workload_done(at);
                                break;
                            }
                            Err(source) => return Err(SimError::Trace { task: task.name.clone(), source }),
                        }
                    }
                };
                self.mm.now = self.tasks[t].clock;
                let step =
                    if self.resident_hit(&access, peeked) { Step::Done } else { self.access(t, access)? };
                self.tasks[t].clock = self.mm.now;
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
                        self.sleep(t, c, wait);
                        break;
                    }
                    Step::Oom => {
                        self.oom_kill(t);
                        self.cpus[c].current = None;
                        self.after_io();
                        let at = self.tasks[t].clock;
                        // The kill took every task of the process, waiting ones included.
                        let space = self.tasks[t].space;
                        for u in 0..self.tasks.len() {
                            if self.tasks[u].space == space && self.tasks[u].state == TaskState::Killed {
                                self.task_ended(u, at, c);
                            }
                        }
                        self.check_workload_done(at);
                        break;
                    }
                }
            }
        }
    }

    /// Simulates the accesses of user task `t` that come next and are resident hits, as
    /// the general path of [`Simulation::run_cpu`] would (the same reading ahead and
    /// prefetches, think time, PTE bits and counts), in a loop that keeps the task and the
    /// memory model borrowed instead of indexing them again for every step; returns how
    /// many it simulated. It stops, leaving the access unread, at the first access that
    /// is not a hit, when the read-ahead buffer needs a refill and when the task's clock
    /// has passed the queue's next event, the general path taking it from there; and after
    /// an access that reached a timeline checkpoint, whose scheduled operation may be the
    /// queue's next event. It runs only when nothing is waiting to be delivered and the
    /// LRU does not follow accesses: a hit then changes nothing but its PTE, the clocks
    /// and the counts, so until a checkpoint the queue's next event stays where it was.
    fn run_resident_hits(&mut self, t: usize, progress: &mut dyn FnMut(u64)) -> u64 {
        if self.track_access || !self.mm.dispatched.is_empty() || self.io_pending() {
            return 0;
        }
        #[cfg(test)]
        if GENERAL_PATH_ONLY.with(std::cell::Cell::get) {
            return 0;
        }
        let Simulation { tasks, mm, lru, accesses, timeline_next, .. } = self;
        let task = &mut tasks[t];
        // The first access's tests, before anything is set up for a run: most calls on
        // a fault-heavy stream end here.
        let ahead = &task.ahead;
        match ahead.pages.get(ahead.at) {
            Some(&Some(page))
                if ahead.at + LOOKAHEAD < ahead.accesses.len() && mm.pt.pte(page).is_present() => {}
            _ => return 0,
        }
        let next_event = mm.queue.peek_time().unwrap_or(SimTime(u64::MAX));
        let access_ns = mm.cfg.cpu.access_ns;
        let mut n = 0;
        loop {
            // Hits run up to the next count that does more than add.
            let budget = counts_before_stop(*accesses, task);
            let mut view = mm.pt.access_view(task.space);
            let k = replay_hits(
                &mut task.ahead,
                &mut view,
                &mm.swap,
                &mut task.clock,
                next_event,
                access_ns,
                budget,
            );
            if k == 0 {
                return n;
            }
            // The LRU's steps for the accesses read, after them rather than between
            // (hits isolate nothing, so the steps are the same).
            for _ in 0..(k as usize).min(lru.warm_steps_left()) {
                lru.warm_tails(mm);
            }
            mm.now = task.clock;
            n += k;
            if count_access(accesses, task, mm, *timeline_next, progress, k) || k < budget {
                return n;
            }
        }
    }

    /// Counts a completed access of task `t` ([`count_access`]).
    #[inline]
    pub(super) fn count_access(&mut self, t: usize, progress: &mut dyn FnMut(u64)) {
        let Simulation { accesses, tasks, mm, timeline_next, .. } = self;
        count_access(accesses, &mut tasks[t], mm, *timeline_next, progress, 1);
    }

    /// Task `t` leaves CPU `c` to sleep on `wait`; completions absorbed meanwhile are
    /// delivered after its state is final, so that a read it waits on can wake it.
    pub(super) fn sleep(&mut self, t: usize, c: usize, wait: Wait) {
        let task = &mut self.tasks[t];
        task.state = TaskState::Blocked;
        self.sleepers.add(&wait);
        task.wait = Some(wait);
        task.blocked_since = task.clock;
        self.cpus[c].current = None;
        self.after_io();
    }

    /// Ends what task `t` sleeps on, if anything, and returns it; the sleeper counts follow.
    pub(super) fn take_wait(&mut self, t: usize) -> Option<Wait> {
        let wait = self.tasks[t].wait.take();
        if let Some(wait) = &wait {
            self.sleepers.remove(wait);
        }
        wait
    }

    /// Makes a blocked task runnable at `clock`.
    pub(super) fn wake(&mut self, t: usize, clock: SimTime, now: SimTime) {
        self.take_wait(t);
        let task = &mut self.tasks[t];
        task.io_wait += now.since(task.blocked_since);
        task.state = TaskState::Runnable;
        task.clock = task.clock.max(clock) + SimDuration(self.mm.cfg.cpu.wakeup_ns);
        let c = task.cpu;
        self.cpus[c].runq.push_back(t);
        if self.cpus[c].current.is_none() && !self.cpus[c].scheduled {
            self.cpus[c].scheduled = true;
            let at = now.max(self.mm.queue.now());
            self.schedule(at, Event::CpuRun(c as u32));
        }
    }

    /// Counts the end of user task `t` at `at` (its stream finished or it was killed) and
    /// starts the tasks that were waiting for it: those waiting for `t` itself, then those
    /// waiting for this many ends, each group in index order. Counting twice is a no-op,
    /// so a kill can report every task of the process, whatever ended before. `running`
    /// is the CPU whose run loop saw the end; it picks up a task started on it without an
    /// event.
    pub(super) fn task_ended(&mut self, t: usize, at: SimTime, running: usize) {
        let task = &mut self.tasks[t];
        if task.ended_at.is_some() || !matches!(task.kind, TaskKind::User) {
            return;
        }
        task.ended_at = Some(at);
        if task.started_at.is_some() {
            self.cpus[task.cpu].live_users -= 1;
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
    }

    /// Starts waiting task `t` at `at` on the user CPU with the fewest live user tasks
    /// (the lowest-numbered among equals), as `wake_up_new_task` places a new task on an
    /// idle CPU when there is one. A task the OOM killer took before it started stays
    /// killed.
    fn start_task(&mut self, t: usize, at: SimTime, running: usize) {
        if self.tasks[t].state != TaskState::Waiting {
            return;
        }
        debug_assert!(self.tasks[t].start != TaskStart::AtStart, "only waiting tasks start late");
        let n_user_cpus = self.mm.cfg.machine.cpus as usize;
        let c = (0..n_user_cpus).min_by_key(|&c| self.cpus[c].live_users).expect("at least one CPU");
        self.cpus[c].live_users += 1;
        let at = at.max(self.mm.queue.now());
        let task = &mut self.tasks[t];
        task.cpu = c;
        task.state = TaskState::Runnable;
        task.clock = at;
        task.blocked_since = at;
        task.started_at = Some(at);
        self.cpus[c].runq.push_back(t);
        if c != running && self.cpus[c].current.is_none() && !self.cpus[c].scheduled {
            self.cpus[c].scheduled = true;
            self.schedule(at, Event::CpuRun(c as u32));
        }
    }
}
