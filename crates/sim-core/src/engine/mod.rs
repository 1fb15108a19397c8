//! The engine: setup, the event loop, and the control flow around the memory model.
//!
//! Control flow lives here. Events are a closed enum ([`crate::event::Event`]) dispatched
//! by one `match` ([`Simulation::step`]). Tasks replay their access streams inline: an
//! access to a resident page only sets PTE bits and costs CPU time, with no event, and a
//! task runs ahead until its clock passes the next queued event. Events exist only for
//! what must wait: a CPU resuming a task, a block request completing, kswapd's next batch,
//! a timeline operation.
//!
//! The engine drives; the memory model ([`Mm`], `crate::mm`) performs the mechanics a
//! folio goes through; the [`Lru`] (built by `crate::lru::build`, so the engine names no
//! implementation) decides list placement, which folios reclaim sees, reference checks,
//! refaults and shadows. Costs of kernel work are charged from the CPU cost profile by
//! advancing `Mm::now`, the clock of whichever context (task or kswapd) is acting.
//!
//! Files, each named after what it models: `setup.rs` (building a simulation), `task.rs`
//! (tasks and CPUs), `sched.rs` (running tasks on CPUs, sleeping and waking), `fault.rs`
//! (the fault path: `do_anonymous_page`, `do_swap_page`, `swapin_readahead`), `charge.rs`
//! (memcg charging, the page allocator's watermarks, the OOM killer), `exit.rs`
//! (`exit_mmap`: tearing down an address space when its process exits or is killed),
//! `reclaim.rs` (reclaim drivers and kswapd), `invariants.rs`, `report.rs`, and `ops/`
//! (timeline operations, one file per family). Each file states what it simplifies;
//! ARCHITECTURE.md collects the list.

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
mod sched;
mod setup;
mod task;
#[cfg(test)]
mod tests;
mod zswap;
#[cfg(test)]
mod zswap_tests;

use crate::config::ValidatedConfig;
use crate::device::BlockDevice;
use crate::error::SimError;
use crate::event::Event;
use crate::ids::{Pfn, SwapSlot};
use crate::lru::Lru;
use crate::mm::frames::flag;
use crate::mm::Mm;
use crate::policy::Policies;
use crate::report::{Outcome, SimReport};
use crate::stats::LatencyHistogram;
use crate::time::{SimDuration, SimTime};
use crate::timeline::TimelineOp;
use crate::workload::TaskSpec;
use fault::PendingFault;
use reclaim::Kswapd;
use task::{Cpu, Task, TaskState};

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

/// What happened to an access.
pub(crate) enum Step {
    Done,
    Blocked(Wait),
    Oom,
}

/// Why a task is blocked.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    /// A swap fault waits for the read of `pfn`; the fault finishes when it completes.
    Frame { pfn: Pfn, fault: PendingFault },
    /// A charge waits for any writeback to complete, then the access is retried.
    Writeback,
    /// A kernel task waits for any I/O to complete, then looks again.
    AnyIo,
}

/// How many tasks sleep on writeback and on any I/O: a completion wakes them, and while
/// there are none it need not look at every task. Kept by [`Simulation::sleep`] and
/// `take_wait` (waking, the OOM kill), the only places a task's wait changes; the
/// invariants check it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sleepers {
    pub(crate) writeback: u32,
    pub(crate) any_io: u32,
}

impl Sleepers {
    fn count(&mut self, wait: &Wait) -> Option<&mut u32> {
        match wait {
            Wait::Frame { .. } => None,
            Wait::Writeback => Some(&mut self.writeback),
            Wait::AnyIo => Some(&mut self.any_io),
        }
    }

    pub(crate) fn add(&mut self, wait: &Wait) {
        if let Some(n) = self.count(wait) {
            *n += 1;
        }
    }

    pub(crate) fn remove(&mut self, wait: &Wait) {
        if let Some(n) = self.count(wait) {
            *n -= 1;
        }
    }
}

/// A simulation in progress. [`run`] drives one to completion; tests step it by hand to
/// check invariants after every event.
pub struct Simulation {
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
    kswapd_owner: usize,
    /// Plug owner of zswap's pool-limit worker.
    zswap_owner: usize,
    zswap_worker: zswap::ZswapWorker,
    timeline: Vec<Option<TimelineOp>>,
    /// Index of the next timeline operation to start.
    timeline_next: usize,
    /// The operation in progress and the counters when it started.
    op_running: Option<ops::RunningOp>,
    op_reports: Vec<crate::timeline::OpReport>,
    paused: bool,
    /// A hibernation from the freeze until the resume has thawed the tasks.
    hibernation: Option<ops::Hibernation>,
    workload_done: bool,
    /// User tasks in the setup, and how many of them have ended (finished their stream or
    /// were OOM-killed); the workload is over when the two are equal.
    n_user_tasks: usize,
    n_ended: usize,
    /// Tasks waiting for another to end, as (the task waited for, the waiting task), sorted.
    after_task: Vec<(usize, usize)>,
    /// Tasks waiting for a number of ends, as (ends, the waiting task), sorted.
    after_ends: Vec<(u32, usize)>,
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
            .field("now", &self.mm.queue.now())
            .field("events", &self.mm.events)
            .finish_non_exhaustive()
    }
}

impl Simulation {
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

    /// Whether I/O completions left something for [`Simulation::after_io`] to deliver.
    #[inline]
    pub(super) fn io_pending(&self) -> bool {
        !self.mm.rotations.is_empty()
            || !self.mm.reads_done.is_empty()
            || self.mm.write_done.is_some()
            || self.mm.io_done.is_some()
    }

    /// [`Simulation::after_io`] once something is to be delivered.
    #[inline(never)]
    fn deliver_io(&mut self) {
        if !self.mm.rotations.is_empty() {
            let mut rot = std::mem::take(&mut self.mm.rotations);
            for &pfn in &rot {
                self.lru.rotate_reclaimable(&mut self.mm, pfn);
            }
            rot.clear();
            self.mm.rotations = rot;
        }
        if !self.mm.reads_done.is_empty() {
            let mut done = std::mem::take(&mut self.mm.reads_done);
            let saved_now = self.mm.now;
            for &(pfn, at) in &done {
                self.mm.frames.clear(pfn, flag::LOCKED | flag::WAITED);
                // Every task waiting on the folio wakes (threads of one process can fault
                // on the same page, and swapoff on a page a task faults on), in task
                // order; the first maps it, and the others find it mapped.
                let mut woken = false;
                for t in 0..self.tasks.len() {
                    let Some(fault) = self.tasks[t].waits_on(pfn) else { continue };
                    let mut start_map = at.max(self.tasks[t].blocked_since);
                    if !fault.unuse {
                        start_map += SimDuration(self.mm.cfg.cpu.fault_retry_ns);
                    }
                    self.finish_swap_fault(pfn, fault, start_map);
                    let end = self.mm.now;
                    self.wake(t, end, at);
                    woken = true;
                }
                assert!(woken, "a WAITED folio has a sleeping task");
            }
            self.mm.now = saved_now;
            done.clear();
            self.mm.reads_done = done;
        }
        if let Some(at) = self.mm.write_done.take().filter(|_| self.sleepers.writeback > 0) {
            for t in 0..self.tasks.len() {
                if matches!(self.tasks[t].wait, Some(Wait::Writeback)) {
                    self.wake(t, at, at);
                }
            }
        }
        if let Some(at) = self.mm.io_done.take().filter(|_| self.sleepers.any_io > 0) {
            for t in 0..self.tasks.len() {
                if matches!(self.tasks[t].wait, Some(Wait::AnyIo)) {
                    self.wake(t, at, at);
                }
            }
        }
    }

    /// Processes one event. Returns `Ok(false)` when the run is over.
    pub fn step(&mut self) -> Result<bool, SimError> {
        self.step_observed(&mut |_| {})
    }

    /// [`Simulation::step`], telling `progress` the accesses replayed at each multiple of
    /// [`PROGRESS_ACCESSES`] reached during the event.
    fn step_observed(&mut self, progress: &mut dyn FnMut(u64)) -> Result<bool, SimError> {
        let Some((now, ev)) = self.mm.queue.pop() else {
            if let Some(t) = self.tasks.iter().find(|t| t.state == TaskState::Blocked) {
                panic!(
                    "engine invariant broken: task {} sleeps ({:?}) with nothing left to wake it at {}; \
                     nr_writeback {}",
                    t.name, t.wait, self.end, self.mm.nr_writeback
                );
            }
            if self.outcome.is_none() {
                self.outcome = Some(Outcome::Completed);
            }
            return Ok(false);
        };
        self.mm.events += 1;
        self.end = self.end.max(now);
        let limits = &self.mm.cfg.limits;
        if self.mm.events > limits.max_events {
            self.outcome = Some(Outcome::EventLimit);
            return Ok(false);
        }
        if now.0 > limits.max_sim_seconds.saturating_mul(1_000_000_000) {
            self.outcome = Some(Outcome::TimeLimit);
            return Ok(false);
        }
        match ev {
            Event::CpuRun(c) => self.run_cpu(c as usize, now, progress)?,
            Event::IoComplete(req) => {
                self.mm.complete_io(req, now);
                self.after_io();
            }
            // kswapd and zswap's worker are freezable: they wait while the machine hibernates.
            Event::KswapdRun | Event::ZswapShrink if self.hibernation.is_some() => self.defer_frozen(ev),
            Event::KswapdRun => self.kswapd_run(now),
            Event::ZswapShrink => self.zswap_worker_run(now),
            Event::Timeline(i) => self.start_op(i as usize, now),
        }
        Ok(true)
    }
}
