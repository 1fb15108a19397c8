//! The engine: setup, the event loop, and the control flow around the memory model.
//!
//! Control flow lives here. Events are a closed enum ([`crate::event::Event`]: a CPU
//! resuming a task, a block request completing, kswapd's next batch, zswap's pool-limit
//! worker's next batch, a timeline operation) dispatched by one `match` in `World::step`.
//! Tasks replay their access streams inline: an access to a resident page only sets PTE
//! bits and costs CPU time, with no event, and a task runs ahead until its clock passes
//! the next queued event.
//!
//! A [`Simulation`] is the [`World`] (the machine, its tasks, CPUs and timeline: a plain
//! clone, which is what a fork is) plus the user tasks' access streams. The engine drives;
//! the memory model ([`Mm`], `crate::mm`) performs the mechanics a folio goes through and
//! owns the event queue; the [`Lru`] (built by `crate::lru::build`, so the engine names
//! no implementation) decides list placement, which folios reclaim sees, reference
//! checks, refaults and shadows. Kernel work is charged from the CPU cost profile by
//! advancing the clock of the acting context (a task, kswapd or zswap's worker),
//! `Mm::now`, which the engine sets where control passes from one context to another.
//!
//! Files, each named after what it models:
//! - `setup.rs`: validating a setup and building a simulation from it;
//! - `wait.rs` and `job.rs`: plain data, the leaves (what a step ended in and what a task
//!   sleeps on; the state of each kernel task's job);
//! - `task.rs` (tasks and CPUs) and `stream.rs` (a user task's access stream and the
//!   accesses read ahead of it);
//! - `sched.rs`: running tasks on CPUs until they yield, sleeping and waking;
//! - `fault.rs` (`do_anonymous_page`, `do_swap_page`, `swapin_readahead`), `bypass.rs`
//!   (the swap-cache bypass on synchronous devices) and `mthp.rs` (large folios on faults);
//! - `charge.rs`: memcg charging, the page allocator's watermarks, the OOM killer;
//! - `exit.rs`: `exit_mmap`, tearing down an address space when its process exits or is
//!   killed;
//! - `reclaim.rs` (reclaim drivers and kswapd) and `zswap.rs` (zswap's writeback, its
//!   memory-pressure shrinker and its pool-limit worker);
//! - `ops/`: timeline operations, one file per family, run as kernel tasks' jobs;
//! - `sampler.rs`: the time series, sampled where the clock passes each boundary;
//! - `fork.rs` (forking and retuning a simulation), `invariants.rs`, `report.rs`.
//!
//! Each file states what it simplifies; ARCHITECTURE.md collects the list.

mod bypass;
mod charge;
mod exit;
mod fault;
mod fork;
#[cfg(test)]
mod fork_tests;
#[cfg(test)]
mod hibernate_tests;
mod invariants;
mod job;
#[cfg(test)]
mod mglru_tests;
mod mthp;
#[cfg(test)]
mod mthp_tests;
mod ops;
#[cfg(test)]
mod opt_tests;
mod reclaim;
mod report;
mod sampler;
mod sched;
mod setup;
mod stream;
mod task;
#[cfg(test)]
mod tests;
mod user;
mod wait;
mod wakeup;
#[cfg(test)]
mod wakeup_tests;
mod zswap;
#[cfg(test)]
mod zswap_tests;

use crate::block::PlugOwner;
use crate::config::ValidatedConfig;
use crate::device::BlockDevice;
use crate::error::SimError;
use crate::event::Event;
use crate::ids::{Pfn, SwapSlot, TaskId};
use crate::lru::Lru;
use crate::mm::frames::flag;
use crate::mm::Mm;
use crate::policy::Policies;
use crate::report::{Outcome, SimReport};
use crate::stats::LatencyHistogram;
use crate::time::{SimDuration, SimTime};
use crate::timeline::TimelineOp;
use crate::workload::TaskSpec;
use reclaim::Kswapd;
pub use setup::ValidSetup;
use stream::Stream;
use task::{Cpu, Task, TaskState};
use wait::{Sleepers, SwapinBy, Wait};

/// Everything a run needs.
#[derive(Debug)]
pub struct Setup {
    /// Checked core configuration.
    pub config: ValidatedConfig,
    /// Root seed.
    pub seed: u64,
    /// One latency model per configured swap device, in the same order.
    pub devices: Vec<Box<dyn BlockDevice>>,
    /// The policies, one per family; `Policies::default()` for the built-in ones.
    pub policies: Policies,
    /// Tasks to run.
    pub tasks: Vec<TaskSpec>,
    /// Operations to apply during the run, in order.
    pub timeline: Vec<TimelineOp>,
}

/// Runs a simulation to completion and returns its report.
pub fn run(setup: Setup) -> Result<SimReport, SimError> {
    run_with_progress(setup, &mut |_| {})
}

/// How often [`run_with_progress`] reports: every this many accesses. A power of two, so
/// that the check on the access path is a mask and a compare.
pub const PROGRESS_ACCESSES: u64 = 1 << 16;
const _: () = assert!(PROGRESS_ACCESSES.is_power_of_two(), "count_access masks with it");

/// Runs a simulation to completion like [`run`], and calls `progress` with the number of
/// accesses replayed so far each time it reaches a multiple of [`PROGRESS_ACCESSES`].
///
/// `progress` only observes: it is handed a count, never the simulation, so the report is
/// the one [`run`] gives. It is called from inside the event loop (a task may replay
/// millions of resident accesses within one event), so keep it cheap: store the count,
/// update a progress bar. Work that is not an access (swapoff, reclaim to a goal) makes
/// no calls.
pub fn run_with_progress(setup: Setup, progress: &mut dyn FnMut(u64)) -> Result<SimReport, SimError> {
    let strict = cfg!(feature = "strict-invariants");
    let mut sim = Simulation::new(setup)?;
    while sim.step_observed(progress)? {
        if strict {
            sim.check_invariants();
        }
    }
    Ok(sim.into_report())
}

/// A simulation in progress. [`run`] drives one to completion; tests step it by hand to
/// check invariants after every event.
///
/// It is the simulated world (`World`) plus the user tasks' access streams, which are kept apart
/// because a stream may not be copyable: the world is a plain clone, and
/// [`Simulation::fork`] copies the streams through [`crate::AccessSource::fork`].
pub struct Simulation {
    world: World,
    /// The access stream of each user task, indexed by its [`TaskId`] (kernel tasks, which
    /// come after the user tasks, have none).
    streams: Vec<Stream>,
}

/// Everything simulated but the access streams: the machine, its tasks and CPUs, the
/// timeline and the counts. A fork of the simulation is a clone of it.
#[derive(Clone)]
pub(crate) struct World {
    mm: Mm,
    lru: Box<dyn Lru>,
    /// The LRU wants to hear of every resident access (the exact and OPT reference models).
    track_access: bool,
    /// The LRU wants each access's next use (OPT only); implies `track_access`.
    track_next_use: bool,
    policies: Policies,
    tasks: Vec<Task>,
    /// How many of `tasks` sleep on writeback and on any I/O.
    sleepers: Sleepers,
    cpus: Vec<Cpu>,
    kswapd: Kswapd,
    accesses: u64,
    outcome: Option<Outcome>,
    lat_major: LatencyHistogram,
    lat_minor: LatencyHistogram,
    lat_anon: LatencyHistogram,
    end: SimTime,
    kswapd_owner: PlugOwner,
    /// Plug owner of zswap's pool-limit worker.
    zswap_owner: PlugOwner,
    zswap_worker: zswap::ZswapWorker,
    /// zswap's memory-pressure shrinker's deferred work (`nr_deferred`).
    shrinker_deferred: u64,
    timeline: Vec<TimelineOp>,
    /// Index of the next timeline operation to start.
    timeline_next: usize,
    /// The operation in progress and the counters when it started.
    op_running: Option<ops::RunningOp>,
    op_reports: Vec<crate::timeline::OpReport>,
    paused: bool,
    /// The tasks a hibernation froze, from the freeze until the thaw.
    frozen: Option<job::Frozen>,
    /// The hibernation image on disk while the machine is off, until resume takes it.
    image: Option<job::Image>,
    workload_done: bool,
    /// User tasks in the setup, and how many of them have ended (finished their stream or
    /// were OOM-killed); the workload is over when the two are equal.
    n_user_tasks: usize,
    n_ended: usize,
    /// Tasks waiting for another to end, as (the task waited for, the waiting task), sorted.
    after_task: Vec<(TaskId, TaskId)>,
    /// Tasks waiting for a number of ends, as (ends, the waiting task), sorted.
    after_ends: Vec<(u32, TaskId)>,
    /// Tasks waiting for a number of process exits, as (exits, the waiting task), sorted.
    after_exits: Vec<(u32, TaskId)>,
    /// Processes (address spaces of user tasks) whose last task has ended.
    n_exits: u32,
    /// The simulated time a run may reach (`limits.max_sim_seconds`).
    time_limit: SimTime,
    /// The time series being sampled (`[report] sample_every`), if any.
    sampler: Option<Box<sampler::Sampler>>,
    /// The next sampling boundary; `SimTime::MAX` when not sampling.
    next_sample_at: SimTime,
    /// The earlier of `time_limit` and `next_sample_at`: a task's clock past it must stop
    /// for the limit or take a sample (one compare for both where the clock moves).
    clock_stop: SimTime,
    /// The scheduler's base slice (`machine.base_slice_ns`).
    slice: SimDuration,
    /// Scratch for a swap fault's readahead window, kept so that a fault allocates none.
    window_scratch: Vec<SwapSlot>,
    /// A page has been swapped in (a swap fault or swapoff began): the swap-in knobs have
    /// been read, so [`Simulation::retune_swapin`] would change the past.
    swapped_in: bool,
    /// A timeline operation has set a swap-in knob (page-cluster, the readahead policy),
    /// which a retuned fork would lose.
    swapin_knobs_set: bool,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("now", &self.world.mm.queue.now())
            .field("events", &self.world.mm.events())
            .finish_non_exhaustive()
    }
}

impl Simulation {
    /// Processes one event. Returns `Ok(false)` when the run is over.
    pub fn step(&mut self) -> Result<bool, SimError> {
        self.step_observed(&mut |_| {})
    }

    /// [`Simulation::step`], telling `progress` the accesses replayed at each multiple of
    /// [`PROGRESS_ACCESSES`] reached during the event.
    fn step_observed(&mut self, progress: &mut dyn FnMut(u64)) -> Result<bool, SimError> {
        self.world.step(&mut self.streams, progress)
    }

    /// Recounts every structure from scratch and checks that they agree: frames, LRU
    /// lists, swap slots, swap cache and page tables; every page is in exactly one place.
    /// Panics with a description on the first violation.
    pub fn check_invariants(&self) {
        self.world.check_invariants();
    }

    /// Finishes the run and builds the report.
    pub fn into_report(self) -> SimReport {
        self.world.into_report()
    }
}

impl World {
    pub(super) fn schedule(&mut self, at: SimTime, ev: Event) {
        self.mm.schedule(at, ev);
    }

    #[inline]
    pub(super) fn flush_dispatched(&mut self) {
        self.mm.flush_dispatched();
    }

    /// Delivers what I/O completions left for the LRU and for sleeping tasks: rotations
    /// of written folios, finished swap faults, and retries after writeback.
    #[inline]
    pub(super) fn after_io(&mut self) {
        if self.io_pending() {
            self.deliver_io();
        }
    }

    /// Whether I/O completions left something for [`World::after_io`] to deliver.
    #[inline]
    pub(super) fn io_pending(&self) -> bool {
        !self.mm.news().is_empty()
    }

    /// Runs `f` on behalf of another context acting from `at` (a sleeper whose swap fault
    /// is finished as it wakes), and gives the acting context its own clock back after.
    /// Returns what `f` returned and the other context's clock when it was done.
    #[inline(always)]
    fn acting_at<R>(&mut self, at: SimTime, f: impl FnOnce(&mut World) -> R) -> (R, SimTime) {
        let own = self.mm.now();
        self.mm.act_at(at);
        let out = f(self);
        let end = self.mm.now();
        self.mm.act_at(own);
        (out, end)
    }

    /// [`World::after_io`] once something is to be delivered.
    #[inline(never)]
    fn deliver_io(&mut self) {
        if !self.mm.news().rotations.is_empty() {
            let rotations = self.mm.take_rotations();
            for &pfn in &rotations {
                self.lru.rotate_reclaimable(&mut self.mm, pfn);
            }
            self.mm.recycle_rotations(rotations);
        }
        if !self.mm.news().reads_done.is_empty() {
            let reads_done = self.mm.take_reads_done();
            self.finish_reads(&reads_done);
            self.mm.recycle_reads_done(reads_done);
        }
        if let Some(at) = self.mm.take_write_done().filter(|_| self.sleepers.writeback > 0) {
            for t in (0..self.tasks.len()).map(TaskId::from_index) {
                if matches!(self.tasks[t].wait, Some(Wait::Writeback)) {
                    self.wake(t, at, at);
                }
            }
        }
        if let Some(at) = self.mm.take_io_done().filter(|_| self.sleepers.any_io > 0) {
            for t in (0..self.tasks.len()).map(TaskId::from_index) {
                if matches!(self.tasks[t].wait, Some(Wait::AnyIo)) {
                    self.wake(t, at, at);
                }
            }
        }
    }

    /// Wakes the tasks that sleep on the folios whose reads completed, finishing their
    /// swap faults.
    #[inline]
    fn finish_reads(&mut self, reads_done: &[(Pfn, SimTime)]) {
        for &(pfn, at) in reads_done {
            if !self.mm.frames.test(pfn, flag::WAITED) {
                // The OOM killer took its only waiter between the read's completion and
                // this delivery: the folio stays in the swap cache, unlocked.
                self.mm.frames.clear(pfn, flag::LOCKED);
                continue;
            }
            self.mm.frames.clear(pfn, flag::LOCKED | flag::WAITED);
            // Every task waiting on the folio wakes (threads of one process can fault
            // on the same page, and swapoff on a page a task faults on), in task
            // order; the first maps it, and the others find it mapped.
            let mut woken = false;
            for t in (0..self.tasks.len()).map(TaskId::from_index) {
                let Some(fault) = self.tasks[t].waits_on(pfn) else { continue };
                let mut start_map = at.max(self.tasks[t].blocked_since);
                if fault.by == SwapinBy::Fault {
                    start_map += SimDuration(self.mm.cfg.cpu.fault_retry_ns);
                }
                let ((), end) = self.acting_at(start_map, |w| w.finish_swap_fault(pfn, fault));
                self.wake(t, end, at);
                woken = true;
            }
            assert!(woken, "a WAITED folio has a sleeping task");
        }
    }

    /// With nothing left on the event queue: the user tasks that have not finished, if
    /// any, and why they cannot.
    fn unfinished(&self) -> Option<Outcome> {
        let left = |t: &&Task| {
            matches!(t.kind, task::TaskKind::User)
                && matches!(t.state, TaskState::Waiting | TaskState::Starting | TaskState::Runnable)
        };
        let tasks = self.tasks.iter().filter(left).count() as u64;
        if tasks == 0 {
            return None;
        }
        let reason = if self.paused && self.tasks.iter().filter(left).any(|t| t.state == TaskState::Runnable)
        {
            "tasks paused by the timeline (pause-tasks) and never resumed"
        } else {
            "tasks waiting to start on a condition that never held"
        };
        Some(Outcome::Unfinished { tasks, reason: reason.to_string() })
    }

    /// Processes one event, the user tasks reading `streams`. Returns `Ok(false)` when the
    /// run is over.
    fn step(&mut self, streams: &mut [Stream], progress: &mut dyn FnMut(u64)) -> Result<bool, SimError> {
        let Some((now, ev)) = self.mm.pop_event() else {
            if let Some(t) = self.tasks.iter().find(|t| t.state == TaskState::Blocked) {
                panic!(
                    "engine invariant broken: task {} sleeps ({:?}) with nothing left to wake it at {}; \
                     nr_writeback {}",
                    t.name,
                    t.wait,
                    self.end,
                    self.mm.nr_writeback()
                );
            }
            if self.outcome.is_none() {
                self.outcome = Some(self.unfinished().unwrap_or(Outcome::Completed));
            }
            return Ok(false);
        };
        if now > self.time_limit {
            // The run stops at the limit, not at the later event that crossed it.
            self.end = self.end.max(self.time_limit);
            self.outcome = Some(Outcome::TimeLimit);
            return Ok(false);
        }
        self.end = self.end.max(now);
        if self.mm.events() > self.mm.cfg.limits.max_events {
            self.outcome = Some(Outcome::EventLimit);
            return Ok(false);
        }
        if now > self.next_sample_at {
            // The event just taken is handled after the samples.
            self.sample_until(now, 1);
        }
        match ev {
            Event::CpuRun(c) => self.run_cpu(c, now, streams, progress)?,
            Event::IoComplete(req) => {
                self.mm.complete_io(req, now);
                self.after_io();
            }
            // kswapd and zswap's worker are freezable: they wait while the machine hibernates.
            Event::KswapdRun | Event::ZswapShrink => match &mut self.frozen {
                Some(frozen) => frozen.deferred.push(ev),
                None if matches!(ev, Event::KswapdRun) => self.kswapd_run(now),
                None => self.zswap_worker_run(now),
            },
            Event::Timeline(i) => self.start_op(i as usize, now),
            Event::Start(t) => self.start_now(t, now, None),
        }
        Ok(true)
    }
}
