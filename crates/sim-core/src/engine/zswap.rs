//! zswap's writers: `zswap_writeback_entry`, the memory-pressure shrinker reclaim calls
//! through `shrink_slab` (`zswap_shrinker_count`, `zswap_shrinker_scan` inside
//! `do_shrink_slab`'s batching and deferral), and the pool-limit worker
//! (`shrink_worker`). Which entries they write back is the protection policy's choice.
//!
//! On cgroup v1 the pool is charged to no group (the kernel's `objcg` is NULL without
//! kmem accounting), so the memory-pressure shrinker, which counts a group's charged
//! entries, never writes back there; the pool-limit worker, which walks every group's
//! list and the root's, does.
//!
//! The worker is a kworker of an unbound workqueue. On a housekeeping CPU
//! (`machine.housekeeping_cpus`: a CPU no task runs on, as on the validation machine, whose
//! workload is pinned to one of its two vCPUs) it runs beside the tasks: each refused store
//! queues it, and a store refused while a run goes on queues one run more, so that runs
//! follow each other as long as reclaim refuses stores. Wherever it runs, an idle worker
//! starts [`WORKER_WAKEUP_NS`] after it is queued. Without a housekeeping CPU it takes its
//! turns on the tasks' CPUs, between the tasks' (a CPU with no task runs it at once; on a
//! busy one it waits for the task there to finish a slice or to sleep), and a store refused
//! while it waits for a CPU queues it no more than once.
//!
//! Simplified: a written-back folio is charged to the memory cgroup without reclaim, as
//! the shrinker's charge is in reclaim context (`PF_MEMALLOC` forces it); the worker's
//! charge, which in the kernel may reclaim, is forced the same way.

use super::World;
use crate::block::PlugOwner;
use crate::event::Event;
use crate::ids::CpuId;
use crate::lru::Origin;
use crate::mm::vmscan::ScanControl;
use crate::policy::zswap::{ZswapLruView, ZswapVisit};
use crate::policy::zswap_writeback::MemcgVisit;
use crate::time::{SimDuration, SimTime};

/// `DEFAULT_SEEKS`, zswap's shrinker's seek cost.
const DEFAULT_SEEKS: u64 = 2;
/// `SHRINK_BATCH`: objects per `scan_objects` call (zswap leaves `batch` at 0).
const SHRINK_BATCH: u64 = 128;
/// `MAX_RECLAIM_RETRIES`: the worker's failures before it gives up.
const WORKER_MAX_FAILURES: u32 = 16;
/// From queueing the worker while it is idle to its run's start, in ns: a kworker woken
/// on an idle CPU (38 µs at the median on the validation machine, over 3,528 such
/// wake-ups; p10 15 µs, p90 65 µs).
const WORKER_WAKEUP_NS: u64 = 38_000;

/// Why a writeback failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WritebackError {
    /// The slot already has a folio in the swap cache: the page is hot (`-EEXIST`).
    Exists,
    /// No frame for the folio (`-ENOMEM`).
    NoMemory,
}

/// The pool-limit worker's state across its turns.
#[derive(Clone, Debug, Default)]
pub(crate) struct ZswapWorker {
    pub(crate) running: bool,
    pub(crate) clock: SimTime,
    /// Runs still to do, one per refused store.
    runs_owed: u32,
    failures: u32,
    attempts: u32,
    /// Memory cgroups without entries the walk has passed since it last reached the group.
    cursor: u32,
    /// When the current run took its first step; `None` before it.
    run_start: Option<SimTime>,
    /// The worker waited for a CPU since its last turn.
    waited_cpu: bool,
    /// The CPU of the turn going on and when that turn ends.
    turn: Option<(CpuId, SimTime)>,
    /// When the worker's pending event is for: an event at another time is stale (the
    /// worker was woken earlier, when a CPU fell idle).
    next_event: Option<SimTime>,
}

/// What one visit of the pool-limit worker did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WorkerVisit {
    /// The LRU is empty.
    Empty,
    Written,
    /// Rotated, or the writeback failed.
    Failed,
}

impl ZswapWorker {
    fn start_run(&mut self) {
        self.failures = 0;
        self.attempts = 0;
        self.run_start = None;
    }
}

impl World {
    /// `zswap_writeback_entry`: decompresses entry `e` into a new swap-cache folio, frees
    /// the entry and starts an asynchronous write of the folio (`zswpwb`, `pswpout`). The
    /// folio goes to the tail of the inactive list when the write ends, for reclaim to
    /// free.
    fn zswap_writeback_entry(&mut self, e: u32, owner: PlugOwner) -> Result<(), WritebackError> {
        let slot = self.mm.zswap.slot(e);
        if self.mm.swap.cached_frame(slot).is_some() {
            return Err(WritebackError::Exists);
        }
        let Some(pfn) = self.mm.frames.alloc() else { return Err(WritebackError::NoMemory) };
        self.mm.charge(1);
        self.swap_cache_add(slot, pfn, Origin::Other);
        let id = self.mm.zswap.contents(e);
        let cost = self.mm.cfg.zswap.compressor.decompress_ns(&self.mm.pt.contents[id as usize]);
        self.mm.spend(cost);
        // Besides decompressing, the entry costs what a load's does (the lookup, the
        // zsmalloc mapping, freeing the entry, the folio's memory cgroup charge and refault
        // bookkeeping: `zswap_load_ns`) and what a swap-in's allocation does (the folio and
        // its swap-cache insert of `__read_swap_cache_async`: `swapin_submit_ns`); its
        // write's submission is `pageout`'s.
        let entry_work = self.mm.cost().zswap_load_ns + self.mm.cost().swapin_submit_ns;
        self.mm.spend(entry_work);
        self.mm.swap.set_zswap_entry(slot, None);
        self.mm.zswap.free_entry(e);
        self.mm.vmstat.zswpwb += 1;
        self.mm.zswap.counts.written_back_pages += 1;
        self.mm.pageout(pfn, slot, owner);
        self.mm.zswap_sync();
        Ok(())
    }

    /// `shrink_memcg_cb` on the oldest entry: the policy rotates it or has it written
    /// back. `Some(true)` when written back, `Some(false)` when only rotated or the
    /// writeback failed, `None` when the LRU is empty; `exists` reports an `-EEXIST`.
    fn zswap_visit_oldest(&mut self, owner: PlugOwner, exists: &mut bool) -> Option<bool> {
        let e = self.mm.zswap.lru_first()?;
        self.mm.zswap.counts.shrinker_scanned += 1;
        let mut referenced = *self.mm.zswap.referenced_mut(e);
        let visit = self.mm.zswap.policy.visit(&mut referenced);
        *self.mm.zswap.referenced_mut(e) = referenced;
        self.mm.zswap.rotate(e);
        match visit {
            ZswapVisit::Rotate => {
                self.mm.spend(self.mm.cost().zswap_visit_ns);
                Some(false)
            }
            ZswapVisit::Writeback => match self.zswap_writeback_entry(e, owner) {
                Ok(()) => Some(true),
                Err(err) => {
                    self.mm.spend(self.mm.cost().zswap_visit_ns);
                    self.mm.zswap.counts.reject_reclaim_fail += 1;
                    self.mm.zswap.policy.writeback_failed();
                    *exists = err == WritebackError::Exists;
                    Some(false)
                }
            },
        }
    }

    fn zswap_lru_view(&self) -> ZswapLruView {
        let z = &self.mm.zswap;
        ZswapLruView::new(z.lru_len, z.bytes / crate::ids::PAGE_SIZE, z.stored)
    }

    /// `shrink_slab` for zswap's shrinker after an LRU pass of `sc`: `do_shrink_slab`'s
    /// count, priority scaling, deferral and batches around `zswap_shrinker_scan`.
    pub(super) fn zswap_shrink_slab(&mut self, sc: &ScanControl) {
        self.mm.zswap.knobs_read = true;
        // On cgroup v1 zswap charges nothing to the group (no kmem accounting: the pool
        // stays outside the limit, as measured), so its entries sit on the root's list
        // and the group's counts (`MEMCG_ZSWAPPED`) stay 0: the shrinker finds nothing.
        if !self.mm.zswap_on()
            || !self.mm.cfg.zswap.shrinker_enabled
            || !self.mm.cfg.memcg.zswap_writeback
            || self.mm.cfg.memcg.version == 1
        {
            return;
        }
        self.mm.zswap_sync();
        let view = self.zswap_lru_view();
        if view.nr_stored == 0 || view.lru_size == 0 {
            return;
        }
        let freeable = self.mm.zswap.policy.count(&view);
        if freeable == 0 {
            return;
        }
        let nr = std::mem::take(&mut self.shrinker_deferred);
        let delta = (freeable >> sc.priority) * 4 / DEFAULT_SEEKS;
        let mut total_scan = ((nr >> sc.priority) + delta).min(2 * freeable);
        let mut scanned = 0;
        while total_scan >= SHRINK_BATCH || total_scan >= freeable {
            let nr_to_scan = SHRINK_BATCH.min(total_scan);
            let view = self.zswap_lru_view();
            if !self.mm.zswap.policy.may_scan(&view, nr_to_scan) {
                break;
            }
            let mut freed = 0;
            let mut exists = false;
            for _ in 0..nr_to_scan {
                match self.zswap_visit_oldest(sc.owner, &mut exists) {
                    None => break,
                    Some(w) => freed += u64::from(w),
                }
                if exists {
                    break;
                }
            }
            total_scan -= nr_to_scan;
            scanned += nr_to_scan;
            // SHRINK_STOP when the walk met a hot page or freed nothing.
            if exists || freed == 0 {
                break;
            }
        }
        let next = (nr + delta).saturating_sub(scanned).min(2 * freeable);
        self.shrinker_deferred = next;
        self.flush_dispatched();
    }

    /// Starts the pool-limit worker if stores found the pool full and it is not running.
    pub(super) fn zswap_kick_worker(&mut self) {
        if self.mm.zswap.worker_kicks == 0 || self.zswap_worker.running {
            return;
        }
        self.zswap_worker.running = true;
        let (kicks, first_kick) = self.mm.zswap.take_kicks();
        // On a housekeeping CPU the work item runs as soon as it is woken: the stores
        // refused before it starts find it pending, and queue it no more.
        self.zswap_worker.runs_owed = if self.zswap_on_housekeeping() { 1 } else { kicks };
        self.zswap_worker.start_run();
        self.mm.zswap.counts.shrink_worker_runs += 1;
        // Woken at the first refusal on a housekeeping CPU, which runs it while the task
        // goes on; on the tasks' CPUs, once the reclaimer is done.
        let queued = match first_kick {
            Some(at) if self.zswap_on_housekeeping() => at,
            _ => self.mm.now(),
        };
        let woken = queued.max(self.mm.queue.now()) + SimDuration(WORKER_WAKEUP_NS);
        let at = woken.max(self.zswap_worker.clock);
        self.zswap_worker_schedule(at);
    }

    /// The worker's next step is at `at`; an earlier pending event becomes stale.
    pub(super) fn zswap_worker_schedule(&mut self, at: SimTime) {
        self.zswap_worker.next_event = Some(at);
        self.schedule(at, Event::ZswapShrink);
    }

    /// CPU `c` has no task left to run: a worker waiting for a CPU takes it now.
    pub(super) fn zswap_worker_cpu_idle(&mut self, c: CpuId) {
        let w = &self.zswap_worker;
        if !w.waited_cpu || w.turn.is_some() || c.index() >= self.mm.cfg.machine.cpus as usize {
            return;
        }
        let at = self.cpus[c].busy_until.max(self.mm.queue.now()).max(w.clock);
        if w.next_event.is_some_and(|next| next > at) {
            self.zswap_worker_schedule(at);
        }
    }

    /// `shrink_memcg_cb` for the pool-limit worker on the oldest entry.
    fn zswap_worker_visit(&mut self, owner: PlugOwner) -> WorkerVisit {
        let mut exists = false;
        match self.zswap_visit_oldest(owner, &mut exists) {
            None => WorkerVisit::Empty,
            Some(true) => WorkerVisit::Written,
            Some(false) => WorkerVisit::Failed,
        }
    }

    /// One step of `shrink_worker`'s walk over the memory cgroups: a cgroup the trigger
    /// says holds no entry (the walk's cursor persists across runs, as
    /// `zswap_next_shrink` does), or the group's turn (`shrink_memcg`: one entry) and the
    /// return to the start of the hierarchy. Failures are counted as the trigger says.
    /// False when the trigger holds writeback back: the worker sleeps until `sleep_until`.
    fn zswap_worker_step(&mut self, owner: PlugOwner, sleep_until: &mut Option<SimTime>) -> bool {
        let position = self.zswap_worker.cursor;
        if position < self.mm.zswap.trigger.empty_memcgs() {
            if self.mm.zswap.trigger.restarting_offline_memcg() == Some(position) {
                // mem_cgroup_tryget_online failed: the cursor goes back to the root.
                self.zswap_worker.cursor = 0;
                self.zswap_worker_count(MemcgVisit::Offline);
            } else {
                self.zswap_worker.cursor += 1;
                self.zswap_worker_count(MemcgVisit::NoEntries);
            }
            return true;
        }
        let now = self.mm.now();
        let delay = self.mm.zswap.trigger.writeback_delay(now);
        if delay.0 > 0 {
            *sleep_until = Some(now + delay);
            return false;
        }
        let visit = match self.zswap_worker_visit(owner) {
            WorkerVisit::Empty => MemcgVisit::NoEntries,
            WorkerVisit::Written => MemcgVisit::Written,
            WorkerVisit::Failed => MemcgVisit::Failed,
        };
        if visit != MemcgVisit::NoEntries {
            self.zswap_worker.attempts += 1;
        }
        self.zswap_worker_count(visit);
        // The end of a pass over the hierarchy.
        let attempts = std::mem::take(&mut self.zswap_worker.attempts);
        self.zswap_worker_count(MemcgVisit::EndOfWalk { attempts });
        self.zswap_worker.cursor = 0;
        true
    }

    fn zswap_worker_count(&mut self, visit: MemcgVisit) {
        if self.mm.zswap.trigger.counts_failure(visit) {
            self.zswap_worker.failures += 1;
        }
    }

    /// The machine's CPU the worker's next turn runs on, and when it may start there: a
    /// housekeeping CPU (`machine.housekeeping_cpus`, beyond the tasks' CPUs) at once; else
    /// a CPU with no task on it at once; else at the end of the slice the task there is in
    /// (a kworker waits its turn under the fair scheduler), the earliest first.
    fn zswap_worker_cpu(&self, at: SimTime) -> (CpuId, SimTime) {
        if self.zswap_on_housekeeping() {
            return (CpuId::from_index(self.cpus.len()), at);
        }
        let cpus = (self.mm.cfg.machine.cpus as usize).clamp(1, self.cpus.len());
        (0..cpus)
            .map(|i| {
                let c = CpuId::from_index(i);
                let cpu = &self.cpus[c];
                let avail = match cpu.current {
                    None => at,
                    // EEVDF lets the task finish the slice it is in (RUN_TO_PARITY): a task
                    // running alone starts a new one at each deadline.
                    Some(_) => {
                        let slice = self.slice.0.max(1);
                        let into = at.since(cpu.slice_start.min(at)).0;
                        cpu.slice_start + SimDuration(into.div_ceil(slice).max(1) * slice)
                    }
                };
                (avail, c)
            })
            .min()
            .map_or((CpuId(0), at), |(avail, c)| (c, avail))
    }

    /// A run gave up after its failures: whether the work item was queued again. On a
    /// housekeeping CPU, `queue_work` on the running item queued it once more if a store
    /// was refused after the run began (whether or not the reclaimer has counted that
    /// refusal as a kick yet); on the tasks' CPUs, each kick owed a run.
    fn zswap_runs_again(&mut self) -> bool {
        if self.zswap_on_housekeeping() {
            let again = self.zswap_worker.run_start.is_some_and(|began| self.mm.zswap.last_kick_at > began);
            if again {
                self.mm.zswap.take_kicks();
            }
            again
        } else if self.zswap_worker.runs_owed > 1 {
            self.zswap_worker.runs_owed -= 1;
            true
        } else {
            false
        }
    }

    /// The worker runs on a CPU no task runs on (`machine.housekeeping_cpus`).
    fn zswap_on_housekeeping(&self) -> bool {
        self.mm.cfg.machine.housekeeping_cpus > 0
    }

    /// The worker ran on CPU `c` from `start` to `end`: the CPU was busy, and the task on
    /// it, kept off meanwhile, runs again after a context switch with a new slice.
    fn zswap_worker_ran(&mut self, c: CpuId, start: SimTime, end: SimTime, turn_over: bool) {
        if c.index() >= self.cpus.len() {
            // A housekeeping CPU: no task to keep off.
            return;
        }
        let switch = SimDuration(self.mm.cfg.cpu.context_switch_ns);
        // The task's own time up to the worker's turn, then the worker's.
        if let Some(t) = self.cpus[c].current {
            self.credit_run(c, t, start);
        }
        let cpu = &mut self.cpus[c];
        cpu.busy += end.since(start);
        cpu.busy_until = cpu.busy_until.max(end);
        if let Some(t) = cpu.current {
            let task = &mut self.tasks[t];
            task.clock = task.clock.max(end);
            if turn_over {
                task.clock += switch;
                cpu.busy += switch;
                cpu.slice_start = task.clock;
            }
            cpu.run_from = task.clock;
        }
    }

    /// A turn of `shrink_worker` on a CPU of the machine: each run writes back until the
    /// pool falls to the accept threshold, round-robin over the memory cgroups (here the
    /// root, which holds no entries, and the one group), and gives up after 16 failures.
    ///
    /// The worker is a kworker of an unbound workqueue. On a housekeeping CPU it runs
    /// beside the tasks: a run per wake-up, and the next at once while stores were
    /// refused after the current one began (the time of the last refusal, which the
    /// reclaimer may count only when its reclaim ends, decides). Otherwise it runs on the
    /// tasks' CPUs. On a task CPU with no task it starts at once and, since one of its runs
    /// takes far less time than a store, the model gives it one run per refused store,
    /// back to back (the refusals of one reclaim are apart in the kernel, each queueing
    /// the work item after the last run ended). On a CPU a task runs on, it waits for the
    /// end of the slice that task is in, or for the task to sleep, then has at most a
    /// slice of its own, after which the task runs again with a new slice; the stores
    /// refused while it waited queued the work item once (`queue_work` on a pending item
    /// does nothing): one run, and one more if its run had begun. Simplified: the kernel's
    /// scheduler (EEVDF) orders the two by virtual deadlines and lag; the model alternates
    /// slices, as it does between tasks, and does not let a waking task preempt the
    /// worker's turn.
    pub(super) fn zswap_worker_run(&mut self, now: SimTime) {
        if self.zswap_worker.next_event != Some(now) {
            return;
        }
        self.zswap_worker.next_event = None;
        let owner = self.zswap_owner;
        let mut start = self.zswap_worker.clock.max(now);
        let c = match self.zswap_worker.turn {
            Some((c, end)) if start < end => c,
            _ => {
                self.zswap_worker.turn = None;
                let (c, avail) = self.zswap_worker_cpu(start);
                if avail > start {
                    self.zswap_worker.waited_cpu = true;
                    self.zswap_worker_schedule(avail);
                    return;
                }
                let cpu = self.cpus.get(c.index());
                if let Some(t) = cpu.and_then(|cpu| cpu.current) {
                    // The task's access under way ends first.
                    start = start.max(self.tasks[t].clock) + SimDuration(self.mm.cfg.cpu.context_switch_ns);
                }
                let competitor = cpu.is_some_and(|cpu| cpu.current.is_some() || !cpu.runq.is_empty());
                let end = if competitor { start + self.slice } else { SimTime::MAX };
                self.zswap_worker.turn = Some((c, end));
                if std::mem::take(&mut self.zswap_worker.waited_cpu) {
                    let more = self.zswap_worker.run_start.is_some()
                        && (self.zswap_worker.runs_owed > 1 || self.mm.zswap.worker_kicks > 0);
                    self.zswap_worker.runs_owed = 1 + u32::from(more);
                    self.mm.zswap.take_kicks();
                }
                c
            }
        };
        let turn_end = self.zswap_worker.turn.map_or(SimTime::MAX, |(_, end)| end);
        self.mm.act_at(start);
        self.mm.zswap_sync();
        let mut steps = 0;
        let mut finished = !self.mm.cfg.memcg.zswap_writeback;
        let mut sleep_until = None;
        while !finished {
            // Other contexts act between the worker's steps: it yields once its clock has
            // passed the queue's next event, as a task does, or its slice is over.
            if steps > 0
                && (self.mm.now() >= turn_end
                    || self.mm.queue.peek_time().is_some_and(|next| self.mm.now() > next))
            {
                break;
            }
            steps += 1;
            let now = self.mm.now();
            self.zswap_worker.run_start.get_or_insert(now);
            if !self.zswap_worker_step(owner, &mut sleep_until) {
                break;
            }
            if self.mm.zswap.pool.total_pages() <= self.mm.zswap.accept_pages {
                // Below the threshold stores succeed again and queue nothing more: the
                // runs the refused stores queued would have found the pool there too.
                finished = true;
            } else if self.zswap_worker.failures >= WORKER_MAX_FAILURES {
                if self.zswap_runs_again() {
                    self.zswap_worker.start_run();
                    self.mm.zswap.counts.shrink_worker_runs += 1;
                } else {
                    finished = true;
                }
            }
        }
        self.flush_dispatched();
        let end = self.mm.now().max(start + SimDuration(1));
        self.zswap_worker.clock = end;
        let turn_over = finished || sleep_until.is_some() || end >= turn_end;
        self.zswap_worker_ran(c, start, end, turn_over);
        if turn_over {
            self.zswap_worker.turn = None;
        }
        if finished {
            self.zswap_worker.running = false;
            self.zswap_kick_worker();
        } else {
            self.zswap_worker_schedule(sleep_until.unwrap_or(end).max(end));
        }
    }
}
