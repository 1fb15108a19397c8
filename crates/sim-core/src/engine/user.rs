//! A user task's turn: its accesses, read ahead from its stream, replayed until it yields.
//!
//! [`World::run_user`] runs resident hits in a tight loop ([`World::run_resident_hits`])
//! and every other access through the general path ([`World::access`] in `fault.rs`),
//! counting each; `sched.rs` picks the task and handles why it yielded.

use super::sched::Yield;
use super::stream::{Lookahead, NextUses, Stream};
use super::task::Task;
use super::wait::{Step, Wait};
use super::World;
use crate::error::{SimError, TraceError};
use crate::event::Event;
use crate::ids::TaskId;
use crate::mm::pagetable::{AccessView, PageId, PteState};
use crate::mm::swap::Swap;
use crate::mm::zswap::Zswap;
use crate::mm::Mm;
use crate::time::{SimDuration, SimTime};
use crate::workload::Access;

/// How many accesses ahead of the one it simulates a user task prefetches the PTE of.
const LOOKAHEAD: usize = 8;

/// The read-ahead step of access `at` of a task's buffer: prefetches the PTE of the access
/// [`LOOKAHEAD`] places on (recording its page in `pages`) and, halfway through that
/// distance, when the PTE has arrived, the slot entry of a swapped-out page, which its
/// fault reads first (with zswap on, the slot's zswap word too); and, [`ZSWAP_AHEAD`]
/// accesses ahead, when that word has arrived, the zswap entry it names, which a zswap
/// load reads first. The general path and the resident-hit loop both take it.
///
/// `ZSWAP` is whether zswap is on, decided once per run of hits rather than per access.
#[inline(always)]
fn read_ahead<const ZSWAP: bool>(
    accesses: &[Access],
    pages: &mut [Option<PageId>],
    at: usize,
    view: &mut AccessView<'_>,
    slots: Slots<'_>,
) {
    let Slots { swap, zswap } = slots;
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
            if ZSWAP {
                swap.prefetch_zswap_word(slot);
            }
        }
    }
    if ZSWAP {
        if let Some(&Some(page)) = pages.get(at + ZSWAP_AHEAD) {
            if let PteState::Swap(slot) = view.pte(page).state() {
                if let Some(e) = swap.zswap_entry(slot) {
                    zswap.prefetch_entry(e);
                }
            }
        }
    }
}

/// Where a swapped-out page's slot and zswap entry are, for [`read_ahead`] to prefetch.
#[derive(Clone, Copy)]
struct Slots<'a> {
    swap: &'a Swap,
    zswap: &'a Zswap,
}

/// How many accesses ahead of the one it simulates a user task prefetches the zswap entry
/// of a page stored in zswap: after its slot's zswap word, [`LOOKAHEAD`] / 2 ahead.
const ZSWAP_AHEAD: usize = 2;

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
fn replay_hits<const ZSWAP: bool>(
    ahead: &mut Lookahead,
    view: &mut AccessView<'_>,
    slots: Slots<'_>,
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
        read_ahead::<ZSWAP>(accesses, pages, at, view, slots);
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
        let slots = Slots { swap: &self.mm.swap, zswap: &self.mm.zswap };
        if slots.swap.zswap_on {
            read_ahead::<true>(&ahead.accesses, &mut ahead.pages, at, &mut view, slots);
        } else {
            read_ahead::<false>(&ahead.accesses, &mut ahead.pages, at, &mut view, slots);
        }
        ahead.at = at + 1;
        self.lru.warm_tails(&self.mm);
        Ok(Some((access, ahead.pages[at])))
    }

    /// Runs user task `t`, reading `stream`, until it yields.
    #[inline(never)]
    pub(super) fn run_user(
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
            if !self.resident_hit(&access, peeked) {
                match self.faulting_access(t, access, progress)? {
                    Some(why) => return Ok(why),
                    None => continue,
                }
            }
            self.tasks[t].clock = self.mm.now();
            self.flush_dispatched();
            self.count_access(t, progress);
            self.after_io();
        }
    }

    /// An access of user task `t` that is not a resident hit ([`World::counted_access`]),
    /// taken to the point the general path of [`World::run_user`] goes on from: `None`
    /// when the task runs on, else why it yields. Completions absorbed during the access
    /// are delivered once the task's own state is final, so that a read it waits on can
    /// wake it.
    #[inline]
    fn faulting_access(
        &mut self,
        t: TaskId,
        access: Access,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Option<Yield>, Box<SimError>> {
        let step = self.counted_access(t, access)?;
        self.tasks[t].clock = self.mm.now();
        self.flush_dispatched();
        match step {
            Step::Done => {
                self.count_access(t, progress);
                self.after_io();
                Ok(None)
            }
            // The access completes when the read does.
            Step::WaitRead => {
                self.count_access(t, progress);
                Ok(Some(Yield::Slept))
            }
            // The access is retried once writeback makes room.
            Step::WaitWriteback => {
                self.tasks[t].retry = Some(access);
                self.tasks[t].wait = Some(Wait::Writeback);
                Ok(Some(Yield::Slept))
            }
            Step::Oom => {
                self.tasks[t].retry = Some(access);
                Ok(Some(Yield::OutOfMemory))
            }
        }
    }

    /// [`World::access`], counting the faults, major faults and swap-ins it made in the
    /// task's own figures.
    fn counted_access(&mut self, t: TaskId, access: Access) -> Result<Step, Box<SimError>> {
        let before = (self.mm.vmstat.pgfault, self.mm.vmstat.pgmajfault, self.mm.vmstat.pswpin);
        let step = self.access(t, access)?;
        let v = &self.mm.vmstat;
        let faults = &mut self.tasks[t].faults;
        faults.faults += v.pgfault - before.0;
        faults.major += v.pgmajfault - before.1;
        faults.swapins += v.pswpin - before.2;
        Ok(step)
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
            let slots = Slots { swap: &mm.swap, zswap: &mm.zswap };
            let k = if slots.swap.zswap_on {
                replay_hits::<true>(ahead, &mut view, slots, &mut task.clock, next_event, access_ns, budget)
            } else {
                replay_hits::<false>(ahead, &mut view, slots, &mut task.clock, next_event, access_ns, budget)
            };
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
}
