//! The engine: tasks on CPUs, the fault path, reclaim, kswapd and the event loop.
//!
//! Control flow lives here. Events are a closed enum dispatched by one `match`
//! ([`Simulation::step`]). Tasks replay their access streams inline: an access to a
//! resident page only sets PTE bits and costs CPU time, with no event, and a task runs
//! ahead until its clock passes the next queued event. Events exist only for what must
//! wait: a CPU resuming a task, a block request completing, kswapd's next batch.
//!
//! [`Mm`] holds the mechanics a folio goes through (`do_anonymous_page`, `do_swap_page`,
//! `swapin_readahead`, `shrink_folio_list`, writeback completion, workingset shadows); the
//! [`Lru`] decides list placement and which folios reclaim sees. Costs of kernel work are
//! charged from the CPU cost profile by advancing `Mm::now`, the clock of whichever
//! context (task or kswapd) is acting.
//!
//! Simplified relative to the kernel (also listed in ARCHITECTURE.md): one memory cgroup
//! and one NUMA node with one zone; no file pages; a reclaimer that meets a folio it
//! already queued for writeback keeps it instead of waiting (v1) or activates it (v2); a
//! charge that cannot be satisfied while writes are in flight blocks the task until a
//! write completes and then retries; readahead pages that cannot be charged without
//! blocking are skipped; the target page of a swap fault is charged before its
//! neighbours; kswapd runs on a CPU of its own; synchronous devices (zram) take the
//! swap-cache path, as after the kernel's swap-table rework, rather than the 6.12–6.18
//! bypass, and read only the faulting page.

use crate::block::{Bio, BlockLayer, Dispatched, ReqId};
use crate::config::{CoreConfig, CpuCosts, LruModel, SwapoffHits, ValidatedConfig};
use crate::device::{BlockDevice, IoDir};
use crate::error::SimError;
use crate::ids::{DeviceId, Pfn, SwapSlot, TaskId, VirtPage};
use crate::lru::classic::{ClassicLru, SWAP_CLUSTER_MAX};
use crate::lru::{Fate, Lru, Placement, Reclaimer, ScanControl};
use crate::mm::frames::{flag, Frames};
use crate::mm::pagetable::{MapError, PageId, PageTables, Pte, PteState};
use crate::mm::swap::{Shadow, Swap, SwaponSpec, SHADOW_CLOCK_BITS};
use crate::policy::readahead::{FaultView, ReadaheadPlan};
use crate::policy::{Feedback, Policies};
use crate::queue::EventQueue;
use crate::report::{FaultLatency, Outcome, SimReport, TaskReport};
use crate::stats::{Gauges, LatencyHistogram, Vmstat};
use crate::time::{SimDuration, SimTime};
use crate::timeline::TimelineOp;
use crate::workload::{Access, AccessSource, TaskSpec};

/// `DEF_PRIORITY`.
const DEF_PRIORITY: u32 = 12;
/// `MAX_RECLAIM_RETRIES`.
const MAX_RECLAIM_RETRIES: u32 = 16;
/// How long kswapd naps after a full priority sweep freed nothing.
const KSWAPD_BACKOFF: SimDuration = SimDuration(100_000_000);

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
    let strict = cfg!(feature = "strict-invariants");
    let mut sim = Simulation::new(setup)?;
    while sim.step()? {
        if strict {
            sim.check_invariants();
        }
    }
    Ok(sim.into_report())
}

/// The closed set of things that can happen at a future time.
#[derive(Debug, Clone, Copy)]
enum Event {
    /// A CPU resumes running its current or next runnable task.
    CpuRun(u32),
    /// A block request completes.
    IoComplete(ReqId),
    /// kswapd runs its next reclaim batch.
    KswapdRun,
    /// The timeline operation with this index starts.
    Timeline(u32),
}

/// Result of trying to get a charged frame.
enum Alloc {
    Got(Pfn),
    /// Nothing reclaimable now, but writeback is in flight: wait for it and retry.
    Wait,
    /// Out of memory and swap.
    Oom,
}

/// What happened to an access.
enum Step {
    Done,
    Blocked(Wait),
    Oom,
}

/// Why a task is blocked.
#[derive(Clone, Copy, Debug)]
enum Wait {
    /// A swap fault waits for the read of `pfn`; the fault finishes when it completes.
    Frame { pfn: Pfn, fault: PendingFault },
    /// A charge waits for any writeback to complete, then the access is retried.
    Writeback,
    /// A kernel task waits for any I/O to complete, then looks again.
    AnyIo,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FaultKind {
    Major,
    Minor,
}

#[derive(Clone, Copy, Debug)]
struct PendingFault {
    page: PageId,
    slot: SwapSlot,
    write: bool,
    start: SimTime,
    kind: FaultKind,
    /// Swapoff's `unuse_pte` rather than a fault: the PTE is installed old and the slot
    /// freed, and no fault is counted.
    unuse: bool,
}

/// A swap-in to perform: by task `t` (whose CPU and plug are used) of `page` in address
/// space `space`.
#[derive(Clone, Copy, Debug)]
struct SwapIn {
    t: usize,
    space: usize,
    page: PageId,
    region_idx: usize,
    vpage: VirtPage,
    slot: SwapSlot,
    write: bool,
    swapoff: bool,
}

/// Results of one `shrink_folio_list` call.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ShrinkResult {
    pub(crate) reclaimed: u64,
    pub(crate) pageouts: u64,
}

/// Watermarks in pages (`__setup_per_zone_wmarks`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Watermarks {
    pub(crate) min: u64,
    pub(crate) low: u64,
    pub(crate) high: u64,
}

impl Watermarks {
    /// Derives the watermarks from RAM as the kernel does: `min_free_kbytes` =
    /// sqrt(16 × RAM in KiB) clamped to [128, 262144] KiB, then
    /// gap = max(min/4, RAM × watermark_scale_factor / 10000), low = min + gap,
    /// high = min + 2 × gap.
    pub(crate) fn derive(total_pages: u64, min_free_kbytes: Option<u64>, scale_factor: u32) -> Watermarks {
        let kib = total_pages * 4;
        let min_kb = min_free_kbytes.unwrap_or_else(|| (16 * kib).isqrt().clamp(128, 262_144));
        let min = (min_kb / 4).min(total_pages / 2);
        let gap = (min / 4).max(total_pages * u64::from(scale_factor) / 10_000);
        Watermarks { min, low: min + gap, high: min + 2 * gap }
    }
}

/// The mechanics of memory management, everything but the LRU lists.
#[derive(Debug)]
pub(crate) struct Mm {
    pub(crate) frames: Frames,
    pub(crate) pt: PageTables,
    pub(crate) swap: Swap,
    pub(crate) block: BlockLayer,
    pub(crate) vmstat: Vmstat,
    cfg: CoreConfig,
    /// Clock of the acting context; kernel work advances it.
    pub(crate) now: SimTime,
    /// `lruvec->nonresident_age`.
    nonresident_age: u64,
    memcg_limit: Option<u64>,
    memcg_usage: u64,
    nr_writeback: u64,
    wmark: Watermarks,
    /// Requests issued to devices whose completions must be scheduled.
    dispatched: Vec<Dispatched>,
    /// The event queue; Mm owns it so that reclaim can absorb I/O completions that fall
    /// due while it scans.
    queue: EventQueue<Event>,
    /// Events taken off the queue.
    events: u64,
    /// Folios whose writeback ended with `RECLAIM` set, for the LRU to rotate.
    pub(crate) rotations: Vec<Pfn>,
    /// Reads that completed for folios a task sleeps on, with the completion time.
    reads_done: Vec<(Pfn, SimTime)>,
    /// The latest write completion not yet announced to tasks waiting on writeback.
    write_done: Option<SimTime>,
    /// The latest completion of any kind not yet announced to kernel tasks waiting on I/O.
    io_done: Option<SimTime>,
}

impl Mm {
    pub(crate) fn cost(&self) -> &CpuCosts {
        &self.cfg.cpu
    }

    /// Charges modelled kernel CPU time to the acting context.
    #[inline]
    pub(crate) fn spend(&mut self, ns: u64) {
        self.now += SimDuration(ns);
    }

    /// `workingset_age_nonresident`.
    pub(crate) fn workingset_age(&mut self, n: u64) {
        self.nonresident_age += n;
    }

    /// Anonymous pages can be reclaimed only while swap has free slots.
    pub(crate) fn can_reclaim_anon(&self) -> bool {
        self.swap.free_slots() > 0
    }

    /// The rmap walk of `folio_referenced`: tests and clears the young bit of the PTE
    /// mapping `pfn`.
    pub(crate) fn folio_referenced(&mut self, pfn: Pfn) -> bool {
        let Some(page) = self.frames.owner(pfn) else { return false };
        let pte = self.pt.pte_mut(page);
        let young = pte.accessed();
        pte.clear_accessed();
        young
    }

    /// `activate_locked` in `shrink_folio_list`.
    fn activate_locked(&mut self, pfn: Pfn) {
        if self.swap.vm_swap_full() {
            self.folio_free_swap(pfn);
        }
        self.frames.set(pfn, flag::ACTIVE);
        self.vmstat.pgactivate += 1;
    }

    /// `folio_free_swap`: drops the swap-cache copy of a mapped folio whose slot no PTE
    /// references; the folio becomes dirty since no other copy exists.
    fn folio_free_swap(&mut self, pfn: Pfn) -> bool {
        let Some(slot) = self.frames.swap_slot(pfn) else { return false };
        if self.frames.test(pfn, flag::WRITEBACK | flag::LOCKED) || self.swap.count(slot) != 0 {
            return false;
        }
        self.swap.cache_delete(slot, None);
        self.frames.set_swap_slot(pfn, None);
        self.frames.set(pfn, flag::DIRTY);
        true
    }

    fn count_scan(&mut self, sc: &ScanControl, n: u64) {
        self.vmstat.pgscan_anon += n;
        match sc.reclaimer {
            Reclaimer::Kswapd => self.vmstat.pgscan_kswapd += n,
            Reclaimer::Direct => self.vmstat.pgscan_direct += n,
            Reclaimer::Memcg => {}
        }
    }

    fn count_steal(&mut self, sc: &ScanControl, n: u64) {
        self.vmstat.pgsteal_anon += n;
        match sc.reclaimer {
            Reclaimer::Kswapd => self.vmstat.pgsteal_kswapd += n,
            Reclaimer::Direct => self.vmstat.pgsteal_direct += n,
            Reclaimer::Memcg => {}
        }
    }

    /// `shrink_folio_list` for isolated anonymous folios. `fates[i]` receives what
    /// happened to `folios[i]`; survivors carry the `ACTIVE` flag of the list they must
    /// return to.
    pub(crate) fn shrink_folio_list(
        &mut self,
        folios: &[Pfn],
        sc: &ScanControl,
        fates: &mut Vec<Fate>,
    ) -> ShrinkResult {
        fates.clear();
        let mut res = ShrinkResult::default();
        self.count_scan(sc, folios.len() as u64);
        for &pfn in folios {
            let fate = self.shrink_folio(pfn, sc, &mut res);
            fates.push(fate);
        }
        self.count_steal(sc, res.reclaimed);
        res
    }

    fn shrink_folio(&mut self, pfn: Pfn, sc: &ScanControl, res: &mut ShrinkResult) -> Fate {
        self.spend(self.cfg.cpu.reclaim_scan_ns);
        let f = self.frames.flags(pfn);
        if f & flag::LOCKED != 0 {
            // A read is in flight: the trylock fails and the folio is kept.
            return Fate::Putback;
        }
        if f & flag::WRITEBACK != 0 {
            self.frames.set(pfn, flag::RECLAIM);
            if self.cfg.memcg.version == 2 || sc.reclaimer != Reclaimer::Memcg {
                self.activate_locked(pfn);
            }
            return Fate::Putback;
        }
        let young = sc.check_references && self.folio_referenced(pfn);
        let referenced_before = self.frames.test_and_clear(pfn, flag::REFERENCED);
        if young {
            self.frames.set(pfn, flag::REFERENCED);
            if referenced_before {
                self.activate_locked(pfn);
            }
            return Fate::Putback;
        }
        // Reclaim. Give the folio a swap slot if it has none (folio_alloc_swap).
        let slot = match self.frames.swap_slot(pfn) {
            Some(s) => s,
            None => match self.swap.alloc(sc.cpu, pfn) {
                Some(s) => {
                    self.frames.set_swap_slot(pfn, Some(s));
                    self.frames.set(pfn, flag::DIRTY);
                    s
                }
                None => {
                    self.activate_locked(pfn);
                    return Fate::Putback;
                }
            },
        };
        // try_to_unmap: the PTE becomes a swap entry; its dirty bit moves to the folio.
        if let Some(page) = self.frames.owner(pfn) {
            if self.pt.pte(page).dirty() {
                self.frames.set(pfn, flag::DIRTY);
            }
            *self.pt.pte_mut(page) = Pte::swap(slot);
            self.swap.inc_count(slot);
            self.frames.set_owner(pfn, None);
        }
        if self.frames.test_and_clear(pfn, flag::DIRTY) {
            // pageout(): write to the slot.
            self.vmstat.pswpout += 1;
            self.vmstat.pgpgout += 4;
            res.pageouts += 1;
            self.spend(self.cfg.cpu.swapout_submit_ns);
            let now = self.now;
            let bio = Bio { device: slot.device, dir: IoDir::Write, offset: slot.offset, pfn };
            if self.block.is_synchronous(slot.device) {
                // The write completed in this context: the folio is clean now and is
                // freed in the same pass.
                self.now = self.block.submit_sync(bio, now);
            } else {
                // The folio is freed by a later scan, after the write completes.
                self.frames.set(pfn, flag::WRITEBACK | flag::RECLAIM);
                self.nr_writeback += 1;
                self.block.submit(sc.owner, bio, now, &mut self.dispatched);
                return Fate::Putback;
            }
        }
        // Clean: __remove_mapping leaves a workingset shadow in the swap cache.
        let shadow = Shadow {
            eviction: (self.nonresident_age & ((1 << SHADOW_CLOCK_BITS) - 1)) as u32,
            workingset: self.frames.test(pfn, flag::WORKINGSET),
        };
        self.workingset_age(1);
        self.swap.cache_delete(slot, Some(shadow));
        self.frames.set_swap_slot(pfn, None);
        self.free_frame(pfn);
        self.spend(self.cfg.cpu.reclaim_free_ns);
        res.reclaimed += 1;
        Fate::Freed
    }

    fn free_frame(&mut self, pfn: Pfn) {
        self.frames.free(pfn);
        self.memcg_usage -= 1;
    }

    /// `workingset_refault` for an anonymous folio whose slot held `shadow`; returns
    /// where the folio goes on the LRU.
    fn workingset_refault(&mut self, pfn: Pfn, shadow: Shadow, active_anon: u64) -> Placement {
        self.vmstat.workingset_refault_anon += 1;
        let mask = (1u64 << SHADOW_CLOCK_BITS) - 1;
        let distance = (self.nonresident_age.wrapping_sub(u64::from(shadow.eviction))) & mask;
        // workingset_test_recent: anon refaults compete with the file lists (empty here)
        // and with active anon while swap has room.
        let workingset_size = if self.can_reclaim_anon() { active_anon } else { 0 };
        if distance > workingset_size {
            return Placement::Inactive;
        }
        self.workingset_age(1);
        self.vmstat.workingset_activate_anon += 1;
        if shadow.workingset {
            self.frames.set(pfn, flag::WORKINGSET);
            self.vmstat.workingset_restore_anon += 1;
        }
        Placement::Active
    }

    /// Maps a swap-cache folio at `page` after its read completed (end of
    /// `do_swap_page`), freeing the slot when the kernel would.
    fn map_swapped(&mut self, page: PageId, pfn: Pfn, slot: SwapSlot, write: bool) {
        debug_assert_eq!(self.pt.pte(page).state(), PteState::Swap(slot));
        *self.pt.pte_mut(page) = Pte::present(pfn, true, write);
        self.frames.set_owner(pfn, Some(page));
        self.frames.clear(pfn, flag::READAHEAD);
        self.swap.dec_count(slot);
        // should_try_to_free_swap: swap is getting full, or a write fault on an exclusive
        // folio (its slot copy is about to be stale).
        if self.swap.vm_swap_full() || write {
            self.folio_free_swap(pfn);
        }
        self.spend(self.cfg.cpu.swapin_map_ns);
    }

    fn schedule(&mut self, at: SimTime, ev: Event) {
        if let Err(e) = self.queue.schedule(at, ev) {
            panic!("engine invariant broken: {e} (event {ev:?})");
        }
    }

    /// Schedules the completions of requests the block layer issued.
    fn flush_dispatched(&mut self) {
        let mut d = std::mem::take(&mut self.dispatched);
        for x in d.drain(..) {
            self.schedule(x.at, Event::IoComplete(x.req));
        }
        self.dispatched = d;
    }

    /// A block request completed at `now`: unlock read folios, end writeback of written
    /// ones, and record what the LRU and sleeping tasks must learn.
    fn complete_io(&mut self, req: ReqId, now: SimTime) {
        let mut out = std::mem::take(&mut self.dispatched);
        let done = self.block.complete(req, now, &mut out);
        self.dispatched = out;
        match done.dir {
            IoDir::Read => {
                for &pfn in &done.frames {
                    if self.frames.test(pfn, flag::WAITED) {
                        self.reads_done.push((pfn, now));
                    } else {
                        self.frames.clear(pfn, flag::LOCKED);
                    }
                }
            }
            IoDir::Write => {
                for &pfn in &done.frames {
                    self.frames.clear(pfn, flag::WRITEBACK);
                    self.nr_writeback -= 1;
                    if self.frames.test_and_clear(pfn, flag::RECLAIM) {
                        self.rotations.push(pfn);
                    }
                }
                self.write_done = Some(now);
            }
        }
        self.io_done = Some(now);
        self.flush_dispatched();
    }

    /// Processes I/O completions that fell due while the acting context ran ahead, as
    /// long as they are the earliest pending events. Reclaim calls this between batches,
    /// so that writes completing during a long scan free their folios as in the kernel.
    pub(crate) fn poll_io(&mut self) {
        self.flush_dispatched();
        while let Some((at, &Event::IoComplete(req))) = self.queue.peek() {
            if at > self.now {
                break;
            }
            self.queue.pop();
            self.events += 1;
            self.complete_io(req, at);
        }
    }

    /// Swapoff's `unuse_pte`: map the folio with an old (not young) PTE, drop the PTE's
    /// reference to the slot and free the slot; the folio is dirty from then on.
    fn unuse_pte(&mut self, page: PageId, pfn: Pfn, slot: SwapSlot) {
        debug_assert_eq!(self.pt.pte(page).state(), PteState::Swap(slot));
        *self.pt.pte_mut(page) = Pte::present(pfn, false, false);
        self.frames.set_owner(pfn, Some(page));
        self.frames.clear(pfn, flag::READAHEAD);
        self.swap.dec_count(slot);
        self.folio_free_swap(pfn);
        self.spend(self.cfg.cpu.swapin_map_ns);
    }

    fn memcg_over(&self) -> bool {
        self.memcg_limit.is_some_and(|l| self.memcg_usage >= l)
    }
}

/// kswapd's state.
#[derive(Debug)]
struct Kswapd {
    awake: bool,
    priority: u32,
    failures: u32,
    clock: SimTime,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TaskState {
    Runnable,
    Blocked,
    Done,
    Killed,
}

struct Task {
    name: String,
    kind: TaskKind,
    space: usize,
    cpu: usize,
    /// Plug owner index in the block layer.
    owner: usize,
    source: Box<dyn AccessSource>,
    /// An access to retry after a wait.
    retry: Option<Access>,
    state: TaskState,
    wait: Option<Wait>,
    clock: SimTime,
    accesses: u64,
    /// Fire the waiting timeline operation when `accesses` reaches this (`u64::MAX`: none).
    checkpoint_at: u64,
    blocked_since: SimTime,
    io_wait: SimDuration,
}

/// What a task runs: a user access stream, or kernel work started by the timeline.
#[derive(Debug)]
enum TaskKind {
    User,
    Swapoff(ops::SwapoffState),
    /// Reclaim until memcg usage is at most `goal` pages, or everything that can go.
    Reclaim {
        goal: Option<u64>,
    },
}

#[derive(Debug, Default)]
struct Cpu {
    current: Option<usize>,
    runq: std::collections::VecDeque<usize>,
    /// A `CpuRun` event for this CPU is pending.
    scheduled: bool,
    last: Option<usize>,
}

/// A simulation in progress. [`run`] drives one to completion; tests step it by hand to
/// check invariants after every event.
pub struct Simulation {
    mm: Mm,
    lru: Box<dyn Lru>,
    /// The LRU wants to hear of every resident access (exact LRU only).
    track_access: bool,
    policies: Policies,
    tasks: Vec<Task>,
    cpus: Vec<Cpu>,
    kswapd: Kswapd,
    accesses: u64,
    outcome: Option<Outcome>,
    lat_major: LatencyHistogram,
    lat_minor: LatencyHistogram,
    lat_anon: LatencyHistogram,
    end: SimTime,
    kswapd_owner: usize,
    timeline: Vec<Option<TimelineOp>>,
    /// Index of the next timeline operation to start.
    timeline_next: usize,
    /// The operation in progress and the counters when it started.
    op_running: Option<ops::RunningOp>,
    op_reports: Vec<crate::timeline::OpReport>,
    paused: bool,
    workload_done: bool,
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
    /// Builds the machine, maps the tasks' regions and queues the first CPU runs.
    pub fn new(setup: Setup) -> Result<Simulation, SimError> {
        let cfg = setup.config.get().clone();
        if setup.devices.len() != cfg.devices.len() {
            return Err(SimError::Setup(format!(
                "{} device models for {} configured swap devices",
                setup.devices.len(),
                cfg.devices.len()
            )));
        }
        let cpus = cfg.machine.cpus as usize;
        let total_pages = cfg.machine.memory.pages();
        let mut swap = Swap::default();
        let mut models = Vec::new();
        for (spec, model) in cfg.devices.iter().zip(setup.devices) {
            let traits = model.traits();
            swap.swapon(SwaponSpec {
                slots: spec.size.pages() as u32,
                priority: spec.priority,
                rotational: traits.rotational,
                cluster_slots: cfg.swap.cluster_slots,
                cpus: cpus + 1,
            });
            models.push((spec.name.clone(), model));
        }
        let n_tasks = setup.tasks.len();
        let block = BlockLayer::new(cfg.block.clone(), models, n_tasks + 1);
        for (i, op) in setup.timeline.iter().enumerate() {
            if let crate::timeline::Trigger::AfterAccesses { task, .. } = op.trigger {
                if task >= n_tasks {
                    return Err(SimError::Setup(format!(
                        "timeline[{i}]: task {task} does not exist (the setup has {n_tasks} tasks)"
                    )));
                }
            }
        }
        let timeline: Vec<Option<TimelineOp>> = setup.timeline.into_iter().map(Some).collect();
        let mut pt = PageTables::new();
        let mut tasks = Vec::with_capacity(n_tasks);
        // Tasks with the same address-space key share one space (threads of a process).
        let mut shared: std::collections::BTreeMap<u64, usize> = std::collections::BTreeMap::new();
        for (i, spec) in setup.tasks.into_iter().enumerate() {
            let space = match spec.address_space {
                Some(key) => *shared.entry(key).or_insert_with(|| pt.add_space()),
                None => pt.add_space(),
            };
            for r in &spec.regions {
                // A region another thread of the process already declared is not mapped twice.
                if pt.spaces[space].regions.iter().any(|x| x.start == r.start && x.pages == r.pages) {
                    continue;
                }
                pt.map_region(space, r.start, r.pages).map_err(|e| {
                    SimError::Setup(format!(
                        "task {}: region at page {} of {} pages: {e:?}",
                        spec.name, r.start.0, r.pages
                    ))
                })?;
            }
            tasks.push(Task {
                name: spec.name,
                kind: TaskKind::User,
                space,
                cpu: i % cpus,
                owner: i,
                source: spec.accesses,
                retry: None,
                state: TaskState::Runnable,
                wait: None,
                clock: SimTime::ZERO,
                accesses: 0,
                checkpoint_at: u64::MAX,
                blocked_since: SimTime::ZERO,
                io_wait: SimDuration::ZERO,
            });
        }
        let wmark =
            Watermarks::derive(total_pages, cfg.machine.min_free_kbytes, cfg.machine.watermark_scale_factor);
        let memcg_limit = cfg.memcg.limit.map(|l| l.pages());
        let lru_model = cfg.lru;
        let mm = Mm {
            frames: Frames::new(total_pages),
            pt,
            swap,
            block,
            vmstat: Vmstat::default(),
            cfg,
            now: SimTime::ZERO,
            nonresident_age: 0,
            memcg_limit,
            memcg_usage: 0,
            nr_writeback: 0,
            wmark,
            dispatched: Vec::new(),
            queue: EventQueue::default(),
            events: 0,
            rotations: Vec::new(),
            reads_done: Vec::new(),
            write_done: None,
            io_done: None,
        };
        let mut sim = Simulation {
            mm,
            lru: match lru_model {
                LruModel::Classic => Box::new(ClassicLru::default()),
                LruModel::Exact => Box::new(ClassicLru::exact()),
            },
            track_access: lru_model == LruModel::Exact,
            policies: setup.policies,
            tasks,
            cpus: (0..cpus).map(|_| Cpu::default()).collect(),
            kswapd: Kswapd { awake: false, priority: DEF_PRIORITY, failures: 0, clock: SimTime::ZERO },
            accesses: 0,
            outcome: None,
            lat_major: LatencyHistogram::default(),
            lat_minor: LatencyHistogram::default(),
            lat_anon: LatencyHistogram::default(),
            end: SimTime::ZERO,
            kswapd_owner: n_tasks,
            timeline,
            timeline_next: 0,
            op_running: None,
            op_reports: Vec::new(),
            paused: false,
            workload_done: n_tasks == 0,
        };
        for t in 0..sim.tasks.len() {
            let cpu = sim.tasks[t].cpu;
            sim.cpus[cpu].runq.push_back(t);
        }
        for c in 0..sim.cpus.len() {
            if !sim.cpus[c].runq.is_empty() {
                sim.schedule(SimTime::ZERO, Event::CpuRun(c as u32));
                sim.cpus[c].scheduled = true;
            }
        }
        sim.arm_next_op(SimTime::ZERO);
        Ok(sim)
    }

    fn schedule(&mut self, at: SimTime, ev: Event) {
        self.mm.schedule(at, ev);
    }

    fn flush_dispatched(&mut self) {
        self.mm.flush_dispatched();
    }

    /// Delivers what I/O completions left for the LRU and for sleeping tasks: rotations
    /// of written folios, finished swap faults, and retries after writeback.
    fn after_io(&mut self) {
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
                let t = (0..self.tasks.len())
                    .find(|&t| matches!(self.tasks[t].wait, Some(Wait::Frame { pfn: p, .. }) if p == pfn))
                    .expect("a WAITED folio has a sleeping task");
                let Some(Wait::Frame { fault, .. }) = self.tasks[t].wait else {
                    unreachable!("matched above")
                };
                self.mm.frames.clear(pfn, flag::LOCKED | flag::WAITED);
                self.finish_swap_fault(pfn, fault, at.max(self.tasks[t].blocked_since));
                let end = self.mm.now;
                self.wake(t, end, at);
            }
            self.mm.now = saved_now;
            done.clear();
            self.mm.reads_done = done;
        }
        if let Some(at) = self.mm.write_done.take() {
            for t in 0..self.tasks.len() {
                if matches!(self.tasks[t].wait, Some(Wait::Writeback)) {
                    self.wake(t, at, at);
                }
            }
        }
        if let Some(at) = self.mm.io_done.take() {
            for t in 0..self.tasks.len() {
                if matches!(self.tasks[t].wait, Some(Wait::AnyIo)) {
                    self.wake(t, at, at);
                }
            }
        }
    }

    /// Processes one event. Returns `Ok(false)` when the run is over.
    pub fn step(&mut self) -> Result<bool, SimError> {
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
            Event::CpuRun(c) => self.run_cpu(c as usize, now)?,
            Event::IoComplete(req) => {
                self.mm.complete_io(req, now);
                self.after_io();
            }
            Event::KswapdRun => self.kswapd_run(now),
            Event::Timeline(i) => self.start_op(i as usize, now),
        }
        Ok(true)
    }

    fn run_cpu(&mut self, c: usize, now: SimTime) -> Result<(), SimError> {
        self.cpus[c].scheduled = false;
        if self.paused && c < self.mm.cfg.machine.cpus as usize {
            return Ok(());
        }
        loop {
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
                let access = match self.tasks[t].retry.take() {
                    Some(a) => a,
                    None => {
                        let task = &mut self.tasks[t];
                        match task.source.next_access() {
                            Ok(Some(a)) => {
                                task.clock += SimDuration(a.think_ns.unwrap_or(access_ns));
                                a
                            }
                            Ok(None) => {
                                task.state = TaskState::Done;
                                self.end = self.end.max(task.clock);
                                self.cpus[c].current = None;
                                let at = task.clock;
                                self.check_workload_done(at);
                                break;
                            }
                            Err(source) => return Err(SimError::Trace { task: task.name.clone(), source }),
                        }
                    }
                };
                self.mm.now = self.tasks[t].clock;
                let step = self.access(t, access)?;
                self.tasks[t].clock = self.mm.now;
                self.flush_dispatched();
                // Completions absorbed during this access are delivered once the task's
                // own state is final, so that a read it waits on can wake it.
                match step {
                    Step::Done => {
                        self.count_access(t);
                        self.after_io();
                    }
                    Step::Blocked(wait) => {
                        match wait {
                            // The access completes when the read does.
                            Wait::Frame { .. } => self.count_access(t),
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
                        self.check_workload_done(at);
                        break;
                    }
                }
            }
        }
    }

    /// Counts a completed access of task `t` and fires a timeline checkpoint it reached.
    #[inline]
    fn count_access(&mut self, t: usize) {
        self.accesses += 1;
        let task = &mut self.tasks[t];
        task.accesses += 1;
        if task.accesses == task.checkpoint_at {
            task.checkpoint_at = u64::MAX;
            let at = task.clock.max(self.mm.queue.now());
            self.schedule(at, Event::Timeline(self.timeline_next as u32));
        }
    }

    /// Task `t` leaves CPU `c` to sleep on `wait`; completions absorbed meanwhile are
    /// delivered after its state is final, so that a read it waits on can wake it.
    fn sleep(&mut self, t: usize, c: usize, wait: Wait) {
        let task = &mut self.tasks[t];
        task.state = TaskState::Blocked;
        task.wait = Some(wait);
        task.blocked_since = task.clock;
        self.cpus[c].current = None;
        self.after_io();
    }

    /// Handles one access by task `t`. Resident pages take the fast path.
    fn access(&mut self, t: usize, a: Access) -> Result<Step, SimError> {
        let space = self.tasks[t].space;
        let look = match self.mm.pt.lookup(space, a.vpage) {
            Some(l) => l,
            None => {
                let idx =
                    self.mm.pt.map_implicit(space, a.vpage).map_err(|e| self.map_error(t, a.vpage, e))?;
                crate::mm::pagetable::Lookup { region_idx: idx, page: None }
            }
        };
        let page = match look.page {
            Some(p) => {
                let pte = self.mm.pt.pte_mut(p);
                if pte.is_present() {
                    pte.touch(a.write);
                    if self.track_access {
                        if let PteState::Present(pfn) = self.mm.pt.pte(p).state() {
                            self.lru.accessed(&mut self.mm, pfn);
                        }
                    }
                    return Ok(Step::Done);
                }
                p
            }
            None => self
                .mm
                .pt
                .page_for(space, look.region_idx, a.vpage)
                .map_err(|e| self.map_error(t, a.vpage, e))?,
        };
        match self.mm.pt.pte(page).state() {
            PteState::Present(_) => unreachable!("handled on the fast path"),
            PteState::Zero if !a.write => {
                self.mm.pt.pte_mut(page).touch(false);
                Ok(Step::Done)
            }
            PteState::None if !a.write => {
                // A read of untouched anonymous memory maps the shared zero page.
                self.mm.vmstat.pgfault += 1;
                self.mm.spend(self.mm.cfg.cpu.fault_ns);
                *self.mm.pt.pte_mut(page) = Pte::zero();
                Ok(Step::Done)
            }
            PteState::None | PteState::Zero => Ok(self.anon_fault(t, page)),
            PteState::Swap(slot) => Ok(self.swap_fault(SwapIn {
                t,
                space,
                page,
                region_idx: look.region_idx,
                vpage: a.vpage,
                slot,
                write: a.write,
                swapoff: false,
            })),
        }
    }

    fn map_error(&self, t: usize, vpage: VirtPage, e: MapError) -> SimError {
        SimError::Setup(format!("task {}: cannot map virtual page {:#x}: {e:?}", self.tasks[t].name, vpage.0))
    }

    /// `do_anonymous_page` for a write (or the copy of the zero page on a write).
    fn anon_fault(&mut self, t: usize, page: PageId) -> Step {
        let start = self.mm.now;
        let pfn = match self.alloc_frame(t, true) {
            Alloc::Got(p) => p,
            Alloc::Wait => return Step::Blocked(Wait::Writeback),
            Alloc::Oom => return Step::Oom,
        };
        self.mm.vmstat.pgfault += 1;
        self.mm.spend(self.mm.cfg.cpu.fault_ns + self.mm.cfg.cpu.anon_fault_ns);
        *self.mm.pt.pte_mut(page) = Pte::present(pfn, true, true);
        self.mm.frames.set_owner(pfn, Some(page));
        self.lru.add(&mut self.mm, pfn, Placement::Inactive);
        self.lat_anon.record(self.mm.now.since(start).0);
        Step::Done
    }

    /// `do_swap_page` (or swapoff's `unuse_pte_range` step): a swap-cache hit is a minor
    /// fault; a miss reads the page and its readahead window and blocks the task until the
    /// target's read completes.
    fn swap_fault(&mut self, f: SwapIn) -> Step {
        let SwapIn { t, space, page, region_idx, vpage, slot, write, swapoff } = f;
        // Swapoff is not a fault: no fault counters, and the readahead bookkeeping on a
        // hit only if the kernel modelled credits it.
        let credit_hits = !swapoff || self.mm.cfg.swap.swapoff_readahead_hits == SwapoffHits::Credited;
        let start = self.mm.now;
        let owner = self.tasks[t].owner;
        let region = self.mm.pt.spaces[space].regions[region_idx].id;
        if let Some(pfn) = self.mm.swap.cached_frame(slot) {
            if !swapoff {
                self.mm.vmstat.pgfault += 1;
                self.mm.spend(self.mm.cfg.cpu.fault_ns);
            }
            if credit_hits {
                let readahead = self.mm.frames.test_and_clear(pfn, flag::READAHEAD);
                if readahead {
                    self.mm.vmstat.swap_ra_hit += 1;
                }
                self.policies.readahead.observe(&Feedback::SwapCacheHit { region, vpage, readahead });
            }
            let fault = PendingFault { page, slot, write, start, kind: FaultKind::Minor, unuse: swapoff };
            if self.mm.frames.test(pfn, flag::LOCKED) {
                self.mm.frames.set(pfn, flag::WAITED);
                return Step::Blocked(Wait::Frame { pfn, fault });
            }
            self.finish_swap_fault(pfn, fault, self.mm.now);
            return Step::Done;
        }
        let target = match self.alloc_frame(t, true) {
            Alloc::Got(p) => p,
            Alloc::Wait => return Step::Blocked(Wait::Writeback),
            Alloc::Oom => return Step::Oom,
        };
        if !swapoff {
            self.mm.vmstat.pgfault += 1;
            self.mm.vmstat.pgmajfault += 1;
            self.mm.spend(self.mm.cfg.cpu.fault_ns);
        }
        let view = {
            let r = &self.mm.pt.spaces[space].regions[region_idx];
            FaultView {
                task: TaskId(space as u32),
                region,
                region_start: r.start,
                region_end: r.end(),
                vpage,
                device: slot.device,
                offset: slot.offset,
                device_slots: self.mm.swap.devices[slot.device.0 as usize].max(),
                page_cluster: self.mm.cfg.swap.page_cluster,
                swapoff,
            }
        };
        let fault = PendingFault { page, slot, write, start, kind: FaultKind::Major, unuse: swapoff };
        // The task will sleep on the target; a read that completes early (a plug flushed
        // by size, then polled by nested reclaim) must still wake it.
        self.mm.frames.set(target, flag::WAITED);
        if self.mm.block.is_synchronous(slot.device) {
            // Synchronous devices read only the faulting page, in this context (the
            // kernel's swap-cache bypass path has no readahead).
            self.mm.frames.clear(target, flag::WAITED);
            self.read_swap_cache(owner, space, slot, target, true);
            let now = self.mm.now;
            let bio = Bio { device: slot.device, dir: IoDir::Read, offset: slot.offset, pfn: target };
            self.mm.now = self.mm.block.submit_sync(bio, now);
            self.mm.frames.clear(target, flag::LOCKED);
            self.finish_swap_fault(target, fault, self.mm.now);
            return Step::Done;
        }
        let plan = self.policies.readahead.plan(&view);
        let window = self.window(space, region_idx, slot, plan);
        self.mm.block.start_plug(owner);
        for s in window {
            if s == slot {
                self.read_swap_cache(owner, space, s, target, true);
            } else if self.mm.swap.count(s) > 0 && self.mm.swap.cached_frame(s).is_none() {
                // A neighbour: skip it rather than block if memory is short.
                if let Alloc::Got(pfn) = self.alloc_frame(t, false) {
                    self.read_swap_cache(owner, space, s, pfn, false);
                }
            }
        }
        let now = self.mm.now;
        self.mm.block.finish_plug(owner, now, &mut self.mm.dispatched);
        Step::Blocked(Wait::Frame { pfn: target, fault })
    }

    /// The slots a readahead plan covers, in the order the kernel visits them, clamped to
    /// the device (cluster plans) or to chunks that exist (VMA plans).
    fn window(
        &self,
        space: usize,
        region_idx: usize,
        target: SwapSlot,
        plan: ReadaheadPlan,
    ) -> Vec<SwapSlot> {
        match plan {
            ReadaheadPlan::TargetOnly => vec![target],
            ReadaheadPlan::Slots { first, last } => {
                let max = self.mm.swap.devices[target.device.0 as usize].max();
                let first = first.max(1);
                let last = last.min(max - 1);
                let mut v: Vec<SwapSlot> =
                    (first..=last).map(|o| SwapSlot { device: target.device, offset: o }).collect();
                if !v.contains(&target) {
                    v.push(target);
                }
                v
            }
            ReadaheadPlan::Pages { first, last } => {
                let mut v = Vec::new();
                let mut has_target = false;
                for vp in first.0..=last.0 {
                    if let Some(p) = self.mm.pt.existing_page(space, region_idx, VirtPage(vp)) {
                        if let PteState::Swap(s) = self.mm.pt.pte(p).state() {
                            has_target |= s == target;
                            v.push(s);
                        }
                    }
                }
                if !has_target {
                    v.push(target);
                }
                v
            }
        }
    }

    /// `__read_swap_cache_async` plus `swap_read_folio` for one slot, on behalf of plug
    /// owner `owner`, for address space `space`.
    fn read_swap_cache(&mut self, owner: usize, space: usize, slot: SwapSlot, pfn: Pfn, target: bool) {
        let shadow = self.mm.swap.cache_insert(slot, pfn);
        self.mm.frames.set_swap_slot(pfn, Some(slot));
        self.mm.frames.set(pfn, flag::LOCKED);
        let placement = match shadow {
            Some(s) => {
                let placement = self.mm.workingset_refault(pfn, s, self.lru.sizes().active_anon);
                let activated = placement == Placement::Active;
                let feedback = Feedback::Refault { task: TaskId(space as u32), slot, activated };
                self.policies.readahead.observe(&feedback);
                placement
            }
            None => Placement::Inactive,
        };
        self.lru.add(&mut self.mm, pfn, placement);
        if !target {
            self.mm.frames.set(pfn, flag::READAHEAD);
            self.mm.vmstat.swap_ra += 1;
        }
        self.mm.vmstat.pswpin += 1;
        self.mm.vmstat.pgpgin += 4;
        self.mm.spend(self.mm.cfg.cpu.swapin_submit_ns);
        if self.mm.block.is_synchronous(slot.device) {
            return;
        }
        let now = self.mm.now;
        self.mm.block.submit(
            owner,
            Bio { device: slot.device, dir: IoDir::Read, offset: slot.offset, pfn },
            now,
            &mut self.mm.dispatched,
        );
    }

    fn finish_swap_fault(&mut self, pfn: Pfn, f: PendingFault, start_map: SimTime) {
        self.mm.now = start_map;
        if f.unuse {
            self.mm.unuse_pte(f.page, pfn, f.slot);
            return;
        }
        self.mm.map_swapped(f.page, pfn, f.slot, f.write);
        let lat = self.mm.now.since(f.start).0;
        match f.kind {
            FaultKind::Major => self.lat_major.record(lat),
            FaultKind::Minor => self.lat_minor.record(lat),
        }
    }

    /// Charges the memory cgroup and takes a frame, reclaiming as the kernel would
    /// (`try_charge_memcg`, then the page allocator's watermark checks). With
    /// `may_wait` false the caller skips the page instead of blocking.
    fn alloc_frame(&mut self, t: usize, may_wait: bool) -> Alloc {
        let cpu = self.tasks[t].cpu;
        let owner = self.tasks[t].owner;
        let mut retries = 0;
        loop {
            if self.mm.memcg_over() {
                let got = self.reclaim(owner, cpu, Reclaimer::Memcg, SWAP_CLUSTER_MAX);
                if self.mm.memcg_over() {
                    if got == 0 {
                        if !may_wait {
                            return Alloc::Wait;
                        }
                        if self.mm.nr_writeback > 0 {
                            return Alloc::Wait;
                        }
                        retries += 1;
                        if retries >= MAX_RECLAIM_RETRIES {
                            return Alloc::Oom;
                        }
                    }
                    continue;
                }
            }
            let free = self.mm.frames.free_pages();
            if free <= self.mm.wmark.low {
                self.wake_kswapd();
            }
            if free <= self.mm.wmark.min {
                self.mm.vmstat.allocstall_normal += 1;
                let got = self.reclaim(owner, cpu, Reclaimer::Direct, SWAP_CLUSTER_MAX);
                let free = self.mm.frames.free_pages();
                if got == 0 && free <= self.mm.wmark.min {
                    match (may_wait, self.mm.nr_writeback > 0) {
                        // A neighbour may still take one of the last frames above zero.
                        (false, _) if free > 0 => {}
                        (false, _) | (true, true) => return Alloc::Wait,
                        (true, false) => {
                            retries += 1;
                            if retries >= MAX_RECLAIM_RETRIES {
                                return Alloc::Oom;
                            }
                            continue;
                        }
                    }
                }
            }
            match self.mm.frames.alloc() {
                Some(p) => {
                    self.mm.memcg_usage += 1;
                    return Alloc::Got(p);
                }
                None => {
                    if !may_wait || self.mm.nr_writeback > 0 {
                        return Alloc::Wait;
                    }
                    retries += 1;
                    if retries >= MAX_RECLAIM_RETRIES {
                        return Alloc::Oom;
                    }
                }
            }
        }
    }

    /// `do_try_to_free_pages`: shrink the LRU at decreasing priority until
    /// `nr_to_reclaim` folios were freed. Each priority level runs under its own plug
    /// (`shrink_lruvec` plugs). Returns the folios freed.
    fn reclaim(&mut self, owner: usize, cpu: usize, reclaimer: Reclaimer, nr_to_reclaim: u64) -> u64 {
        let mut sc = ScanControl {
            reclaimer,
            priority: DEF_PRIORITY,
            nr_to_reclaim,
            nr_scanned: 0,
            nr_reclaimed: 0,
            swappiness: self.mm.cfg.memcg.swappiness,
            owner,
            cpu,
            check_references: self.lru.checks_references(),
        };
        loop {
            self.mm.block.start_plug(owner);
            self.lru.shrink(&mut self.mm, &mut sc);
            let now = self.mm.now;
            self.mm.block.finish_plug(owner, now, &mut self.mm.dispatched);
            if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.priority == 0 {
                break;
            }
            sc.priority -= 1;
        }
        sc.nr_reclaimed
    }

    fn wake_kswapd(&mut self) {
        if !self.kswapd.awake {
            self.kswapd.awake = true;
            self.mm.vmstat.pageoutrun += 1;
            let at = self.mm.now.max(self.mm.queue.now());
            self.schedule(at, Event::KswapdRun);
        }
    }

    /// One batch of `balance_pgdat`: shrink at the current priority until free memory
    /// reaches the high watermark.
    fn kswapd_run(&mut self, now: SimTime) {
        let kswapd_owner = self.kswapd_owner;
        let kswapd_cpu = self.mm.cfg.machine.cpus as usize;
        let start = self.kswapd.clock.max(now);
        self.mm.now = start;
        let free = self.mm.frames.free_pages();
        if free >= self.mm.wmark.high {
            self.kswapd.awake = false;
            self.kswapd.priority = DEF_PRIORITY;
            self.kswapd.clock = start;
            return;
        }
        let target = (self.mm.wmark.high - free).max(SWAP_CLUSTER_MAX);
        let mut sc = ScanControl {
            reclaimer: Reclaimer::Kswapd,
            priority: self.kswapd.priority,
            nr_to_reclaim: target,
            nr_scanned: 0,
            nr_reclaimed: 0,
            swappiness: self.mm.cfg.memcg.swappiness,
            owner: kswapd_owner,
            cpu: kswapd_cpu,
            check_references: self.lru.checks_references(),
        };
        self.mm.block.start_plug(kswapd_owner);
        self.lru.shrink(&mut self.mm, &mut sc);
        let t = self.mm.now;
        self.mm.block.finish_plug(kswapd_owner, t, &mut self.mm.dispatched);
        self.flush_dispatched();
        self.after_io();
        // Spend at least some time so that a futile loop still advances.
        let mut next = self.mm.now.max(start + SimDuration(1_000));
        if sc.nr_reclaimed == 0 {
            if self.kswapd.priority > 1 {
                self.kswapd.priority -= 1;
            } else {
                self.kswapd.failures += 1;
                self.kswapd.priority = DEF_PRIORITY;
                next += KSWAPD_BACKOFF;
            }
        }
        self.kswapd.clock = next;
        if self.kswapd.failures >= MAX_RECLAIM_RETRIES && self.mm.nr_writeback == 0 {
            // "Hopeless" node: kswapd stops until woken again.
            self.kswapd.awake = false;
            self.kswapd.failures = 0;
            return;
        }
        self.schedule(next, Event::KswapdRun);
    }

    /// Makes a blocked task runnable at `clock`.
    fn wake(&mut self, t: usize, clock: SimTime, now: SimTime) {
        let task = &mut self.tasks[t];
        task.io_wait += now.since(task.blocked_since);
        task.wait = None;
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

    /// The OOM killer: records the outcome and releases the task's memory and swap.
    fn oom_kill(&mut self, t: usize) {
        self.mm.vmstat.oom_kill += 1;
        let at = self.tasks[t].clock;
        if self.outcome.is_none() {
            self.outcome =
                Some(Outcome::OomKilled { task: self.tasks[t].name.clone(), at_s: at.as_secs_f64() });
        }
        // The whole process goes: every task sharing the address space.
        let space = self.tasks[t].space;
        for u in 0..self.tasks.len() {
            if self.tasks[u].space != space || !matches!(self.tasks[u].kind, TaskKind::User) {
                continue;
            }
            if let Some(Wait::Frame { pfn, .. }) = self.tasks[u].wait.take() {
                // The read completes unobserved; the folio stays in the swap cache.
                self.mm.frames.clear(pfn, flag::WAITED);
            }
            self.tasks[u].state = TaskState::Killed;
        }
        self.end = self.end.max(at);
        for page in self.space_pages(space) {
            match self.mm.pt.pte(page).state() {
                PteState::Present(pfn) => {
                    self.mm.frames.set_owner(pfn, None);
                    self.drop_unmapped(pfn);
                }
                PteState::Swap(slot) => {
                    self.mm.swap.dec_count(slot);
                    if let Some(pfn) = self.mm.swap.cached_frame(slot) {
                        self.drop_unmapped(pfn);
                    }
                }
                PteState::None | PteState::Zero => {}
            }
            *self.mm.pt.pte_mut(page) = Pte::default();
        }
    }

    /// Frees an unmapped folio unless I/O holds it; reclaim drops the rest later.
    fn drop_unmapped(&mut self, pfn: Pfn) {
        if self.mm.frames.test(pfn, flag::WRITEBACK | flag::LOCKED) {
            return;
        }
        self.lru.remove(&mut self.mm, pfn);
        if let Some(slot) = self.mm.frames.swap_slot(pfn) {
            if self.mm.swap.count(slot) > 0 {
                // Another reference keeps the slot; leave the folio cached.
                self.lru.add(&mut self.mm, pfn, Placement::Inactive);
                return;
            }
            self.mm.swap.cache_delete(slot, None);
            self.mm.frames.set_swap_slot(pfn, None);
        }
        self.mm.free_frame(pfn);
    }

    fn space_pages(&self, space: usize) -> Vec<PageId> {
        self.mm.pt.space_pages(space)
    }

    /// Recounts every structure from scratch and checks that they agree: frames, LRU
    /// lists, swap slots, swap cache and page tables; every page is in exactly one place.
    /// Panics with a description on the first violation.
    pub fn check_invariants(&self) {
        let mm = &self.mm;
        mm.swap.check_invariants();
        self.lru.check_invariants(mm);
        assert_eq!(mm.memcg_usage, mm.frames.used(), "memcg usage vs frames in use");
        if let Some(limit) = mm.memcg_limit {
            assert!(mm.memcg_usage <= limit + 1, "memcg usage {} exceeds limit {limit}", mm.memcg_usage);
        }
        // Slot references from PTEs must equal the swap counts exactly.
        let mut refs: Vec<Vec<u8>> = mm.swap.devices.iter().map(|d| vec![0u8; d.max() as usize]).collect();
        for (i, pte) in mm.pt.ptes.iter().enumerate() {
            let page = PageId(i as u32);
            match pte.state() {
                PteState::Present(pfn) => {
                    assert!(mm.frames.test(pfn, flag::IN_USE), "page {i} maps free frame {}", pfn.0);
                    assert_eq!(
                        mm.frames.owner(pfn),
                        Some(page),
                        "frame {} does not point back to page {i}",
                        pfn.0
                    );
                    if let Some(s) = mm.frames.swap_slot(pfn) {
                        assert_eq!(mm.swap.count(s), 0, "mapped page {i} still counted in {s}");
                    }
                }
                PteState::Swap(s) => {
                    refs[s.device.0 as usize][s.offset as usize] += 1;
                    if let Some(pfn) = mm.swap.cached_frame(s) {
                        assert_eq!(
                            mm.frames.owner(pfn),
                            None,
                            "page {i}: cached frame of {s} is mapped elsewhere"
                        );
                    }
                }
                PteState::None | PteState::Zero => {}
            }
        }
        for (d, dev_refs) in refs.iter().enumerate() {
            for (off, &n) in dev_refs.iter().enumerate().skip(1) {
                let slot = SwapSlot { device: DeviceId(d as u8), offset: off as u32 };
                assert_eq!(mm.swap.count(slot), n, "{slot}: swap count vs PTE references");
            }
        }
        let mut wb = 0;
        let live: Vec<(IoDir, Pfn)> = mm.block.live_frames().collect();
        for pfn in mm.frames.in_use() {
            let f = mm.frames.flags(pfn);
            assert!(f & flag::LRU != 0, "frame {} in use but on no LRU list", pfn.0);
            let slot = mm.frames.swap_slot(pfn);
            if let Some(s) = slot {
                assert_eq!(
                    mm.swap.cached_frame(s),
                    Some(pfn),
                    "frame {} claims {s} but the swap cache disagrees",
                    pfn.0
                );
            }
            assert!(
                mm.frames.owner(pfn).is_some() || slot.is_some(),
                "frame {} is neither mapped nor cached",
                pfn.0
            );
            if f & flag::WRITEBACK != 0 {
                wb += 1;
                assert!(
                    live.contains(&(IoDir::Write, pfn)),
                    "frame {} under writeback without a write request",
                    pfn.0
                );
            }
            if f & flag::WAITED != 0 {
                assert!(f & flag::LOCKED != 0, "frame {} waited on but not locked", pfn.0);
                let waiters = self
                    .tasks
                    .iter()
                    .filter(|t| matches!(t.wait, Some(Wait::Frame { pfn: p, .. }) if p == pfn))
                    .count();
                assert_eq!(waiters, 1, "frame {} waited on by {waiters} tasks", pfn.0);
            }
            if f & flag::LOCKED != 0 {
                assert!(live.contains(&(IoDir::Read, pfn)), "frame {} locked without a read request", pfn.0);
            }
        }
        assert_eq!(wb, mm.nr_writeback, "nr_writeback counter");
        assert!(
            self.tasks.iter().all(|t| t.state != TaskState::Runnable || t.wait.is_none()),
            "runnable task with a wait"
        );
    }

    /// Finishes the run and builds the report.
    pub fn into_report(self) -> SimReport {
        let mm = &self.mm;
        let sizes = self.lru.sizes();
        let mut rss = 0;
        let mut swapped = 0;
        for pte in &mm.pt.ptes {
            match pte.state() {
                PteState::Present(_) => rss += 1,
                PteState::Swap(_) => swapped += 1,
                _ => {}
            }
        }
        let swapcached = mm.frames.in_use().filter(|&p| mm.frames.swap_slot(p).is_some()).count() as u64;
        let at_end = Gauges {
            nr_free_pages: mm.frames.free_pages(),
            nr_inactive_anon: sizes.inactive_anon,
            nr_active_anon: sizes.active_anon,
            nr_anon_pages: rss,
            nr_swapcached: swapcached,
            nr_writeback: mm.nr_writeback,
            memcg_usage_pages: mm.memcg_usage,
            rss_pages: rss,
            swap_pages: swapped,
            swap_slots_used: mm.swap.used_slots(),
        };
        SimReport {
            outcome: self.outcome.clone().unwrap_or(Outcome::Completed),
            sim_time_s: self.end.as_secs_f64(),
            events: self.mm.events,
            accesses: self.accesses,
            readahead: self.policies.readahead.kind().to_string(),
            operations: self.op_reports(),
            vmstat: mm.vmstat.clone(),
            at_end,
            block: mm.block.stats(),
            fault_latency: FaultLatency {
                major: self.lat_major.summary(),
                minor_swap: self.lat_minor.summary(),
                anon: self.lat_anon.summary(),
            },
            tasks: self
                .tasks
                .iter()
                .map(|t| TaskReport {
                    name: t.name.clone(),
                    accesses: t.accesses,
                    end_s: t.clock.as_secs_f64(),
                    io_wait_s: t.io_wait.as_secs_f64(),
                })
                .collect(),
        }
    }
}

mod ops;
#[cfg(test)]
mod tests;
