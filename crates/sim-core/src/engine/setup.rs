//! Setting up a simulation in two steps: [`Setup::validate`] checks everything that can be
//! wrong with a setup and maps the tasks' address spaces, giving a [`ValidSetup`]; building
//! the world from it cannot fail.

use super::reclaim::Kswapd;
use super::stream::Stream;
use super::task::{Cpu, Task, TaskState, UserStart};
use super::{Setup, Simulation, World};
use crate::block::BlockLayer;
use crate::error::{SetupError, SimError};
use crate::event::Event;
use crate::ids::{CpuId, SpaceId, TaskId};
use crate::lru::Lru;
use crate::mm::pagetable::PageTables;
use crate::mm::swap::{Swap, SwaponSpec};
use crate::mm::vmscan::DEF_PRIORITY;
use crate::mm::{Mm, MmParts};
use crate::stats::LatencyHistogram;
use crate::time::{SimDuration, SimTime};
use crate::workload::TaskStart;

/// A [`Setup`] that passed [`Setup::validate`]: its address spaces are mapped, each task
/// knows its space, and building a [`Simulation`] from it cannot fail.
#[derive(Debug)]
pub struct ValidSetup {
    setup: Setup,
    /// The tasks' address spaces, their declared regions mapped.
    pt: PageTables,
    /// The address space of each task, in setup order.
    spaces: Vec<SpaceId>,
    /// The LRU the configuration names.
    lru: Box<dyn Lru>,
}

impl Setup {
    /// Checks the setup against its configuration and itself, and maps the tasks'
    /// declared regions: one device model per configured device; every timeline trigger
    /// names a task that exists; every start condition names something earlier, so that by
    /// induction every task starts once those before it have run; regions fit and do not
    /// overlap within an address space; and, for Belady's policy, every task knows its
    /// next uses.
    pub fn validate(self) -> Result<ValidSetup, SetupError> {
        let cfg = self.config.get();
        if self.devices.len() != cfg.devices.len() {
            return Err(SetupError::DeviceModels { models: self.devices.len(), devices: cfg.devices.len() });
        }
        let n_tasks = self.tasks.len();
        for (i, op) in self.timeline.iter().enumerate() {
            if let crate::timeline::Trigger::AfterAccesses { task, .. } = op.trigger {
                if task.index() >= n_tasks {
                    return Err(SetupError::TimelineTask { op: i, task: task.index(), tasks: n_tasks });
                }
            }
        }
        // The processes before each task, other than its own: what `AfterExits` may wait for.
        let mut keys: Vec<Option<u64>> = Vec::with_capacity(n_tasks);
        for (i, spec) in self.tasks.iter().enumerate() {
            let name = || spec.name.clone();
            let own = spec.address_space;
            let mut others: Vec<Option<u64>> =
                keys.iter().copied().filter(|k| k.is_none() || *k != own).collect();
            others.sort_unstable();
            let n_others = others.iter().filter(|k| k.is_none()).count()
                + others.iter().filter(|k| k.is_some()).collect::<std::collections::BTreeSet<_>>().len();
            keys.push(own);
            match spec.start {
                TaskStart::AtStart => {}
                TaskStart::AfterTask(j) if j.index() < i => {}
                TaskStart::AfterTask(j) => {
                    return Err(SetupError::StartsAfterLater { task: i, name: name(), after: j.index() })
                }
                TaskStart::AfterEnds(n) if n >= 1 && n as usize <= i => {}
                TaskStart::AfterEnds(n) => {
                    return Err(SetupError::StartsAfterEnds { task: i, name: name(), ends: n })
                }
                TaskStart::AfterExits(n) if n >= 1 && n as usize <= n_others => {}
                TaskStart::AfterExits(n) => {
                    return Err(SetupError::StartsAfterExits {
                        task: i,
                        name: name(),
                        exits: n,
                        processes: n_others,
                    })
                }
            }
        }
        let lru = crate::lru::build(cfg.lru, &cfg.lru_gen, self.seed);
        if lru.wants_next_uses() {
            if let Some(i) = self.tasks.iter().position(|t| !t.accesses.knows_next_uses()) {
                return Err(SetupError::NoNextUses { task: i, name: self.tasks[i].name.clone() });
            }
        }
        let mut pt = PageTables::new();
        pt.default_orders = cfg.thp.allowed(cfg.thp.implicit_madvise);
        pt.default_contents = pt.contents_id(&cfg.implicit_contents);
        // Tasks with the same address-space key share one space (threads of a process).
        let mut shared: std::collections::BTreeMap<u64, SpaceId> = std::collections::BTreeMap::new();
        let mut spaces = Vec::with_capacity(n_tasks);
        for spec in &self.tasks {
            let space = match spec.address_space {
                Some(key) => *shared.entry(key).or_insert_with(|| pt.add_space()),
                None => pt.add_space(),
            };
            for r in &spec.regions {
                // A region another thread of the process already declared is not mapped twice.
                if pt.spaces[space.index()].regions.iter().any(|x| x.start == r.start && x.pages == r.pages) {
                    continue;
                }
                let orders = cfg.thp.allowed(r.thp);
                let contents = pt.contents_id(&r.contents);
                pt.map_region(space, r.start, r.pages, orders, contents).map_err(|reason| {
                    SetupError::Region { task: spec.name.clone(), start: r.start.0, pages: r.pages, reason }
                })?;
            }
            spaces.push(space);
        }
        Ok(ValidSetup { setup: self, pt, spaces, lru })
    }
}

impl Simulation {
    /// Validates `setup` ([`Setup::validate`]) and builds the simulation from it.
    pub fn new(setup: Setup) -> Result<Simulation, SimError> {
        Ok(Simulation::build(setup.validate()?))
    }

    /// Builds the machine from a validated setup and queues the first CPU runs.
    pub fn build(valid: ValidSetup) -> Simulation {
        let ValidSetup { setup, pt, spaces, lru } = valid;
        let cfg = setup.config.get().clone();
        let cpus = cfg.machine.cpus as usize;
        let total_pages = cfg.machine.memory.pages();
        let mut policies = setup.policies;
        let allocator =
            std::mem::replace(&mut policies.allocator, Box::new(crate::policy::allocator::ClusterAllocator));
        let mut swap = Swap::new(allocator);
        swap.zswap_on = cfg.zswap.enabled;
        let mut models = Vec::new();
        for (spec, model) in cfg.devices.iter().zip(setup.devices) {
            let traits = model.traits();
            swap.swapon(SwaponSpec {
                blkdev: spec.backing.map_or(traits.synchronous, |b| b == crate::config::SwapBacking::Block),
                slots: spec.size.pages() as u32,
                priority: spec.priority,
                rotational: traits.rotational,
                cluster_slots: cfg.swap.cluster_slots,
                cpus: cpus + 1,
            });
            models.push((spec.name.clone(), model));
        }
        let n_tasks = setup.tasks.len();
        let mut block = BlockLayer::new(cfg.block.clone(), models);
        let mut tasks = Vec::with_capacity(n_tasks);
        let mut streams = Vec::with_capacity(n_tasks);
        let mut after_task = Vec::new();
        let mut after_ends = Vec::new();
        let mut after_exits = Vec::new();
        let mut start_at_delays = Vec::new();
        for (i, (spec, space)) in setup.tasks.into_iter().zip(spaces).enumerate() {
            let id = TaskId::from_index(i);
            match spec.start {
                TaskStart::AtStart if spec.start_delay > SimDuration::ZERO => start_at_delays.push(id),
                TaskStart::AtStart => {}
                TaskStart::AfterTask(j) => after_task.push((j, id)),
                TaskStart::AfterEnds(n) => after_ends.push((n, id)),
                TaskStart::AfterExits(n) => after_exits.push((n, id)),
            }
            streams.push(Stream::new(spec.accesses));
            let start = UserStart {
                start: spec.start,
                start_delay: spec.start_delay,
                exec: spec.exec,
                exit_on_end: spec.exit_on_end,
                reads_create: spec.reads_create,
            };
            tasks.push(Task::user(
                spec.name,
                space,
                CpuId::from_index(i % cpus),
                block.add_plug_owner(),
                start,
            ));
        }
        let kswapd_owner = block.add_plug_owner();
        let zswap_owner = block.add_plug_owner();
        let zswap_policy =
            std::mem::replace(&mut policies.zswap, Box::new(crate::policy::zswap::NoProtection));
        let zswap_trigger = std::mem::replace(
            &mut policies.zswap_writeback,
            Box::new(crate::policy::zswap_writeback::KernelWriteback),
        );
        // Below the end of time, so that a clock that saturated there is past the limit.
        let mm_time_limit = cfg.limits.max_sim_seconds.saturating_mul(1_000_000_000).min(u64::MAX - 1);
        let base_slice = cfg.machine.base_slice();
        let mm = Mm::new(MmParts { cfg, pt, swap, block, total_pages, zswap_policy, zswap_trigger });
        let mut sim = World {
            mm,
            track_access: lru.tracks_accesses(),
            track_next_use: lru.wants_next_uses(),
            lru,
            policies,
            tasks,
            sleepers: Default::default(),
            cpus: (0..cpus).map(|_| Cpu::default()).collect(),
            kswapd: Kswapd { awake: false, priority: DEF_PRIORITY, failures: 0, clock: SimTime::ZERO },
            accesses: 0,
            outcome: None,
            lat_major: LatencyHistogram::default(),
            lat_minor: LatencyHistogram::default(),
            lat_anon: LatencyHistogram::default(),
            end: SimTime::ZERO,
            kswapd_owner,
            zswap_owner,
            zswap_worker: Default::default(),
            shrinker_deferred: 0,
            timeline: setup.timeline,
            timeline_next: 0,
            op_running: None,
            op_reports: Vec::new(),
            paused: false,
            frozen: None,
            image: None,
            workload_done: n_tasks == 0,
            n_user_tasks: n_tasks,
            n_ended: 0,
            // Stable sorts: tasks waiting on the same condition start in index order.
            after_task: {
                after_task.sort_by_key(|&(j, _)| j);
                after_task
            },
            after_ends: {
                after_ends.sort_by_key(|&(n, _)| n);
                after_ends
            },
            after_exits: {
                after_exits.sort_by_key(|&(n, _)| n);
                after_exits
            },
            n_exits: 0,
            time_limit: SimTime(mm_time_limit),
            sampler: None,
            next_sample_at: SimTime::MAX,
            clock_stop: SimTime(mm_time_limit),
            slice: SimDuration(base_slice),
            window_scratch: Vec::new(),
            swapped_in: false,
            swapin_knobs_set: false,
        };
        for t in (0..sim.tasks.len()).map(TaskId::from_index) {
            if sim.tasks[t].state == TaskState::Runnable {
                let cpu = sim.tasks[t].cpu;
                sim.cpus[cpu].runq.push_back(t);
                sim.cpus[cpu].live_users += 1;
                sim.exec(t);
            }
        }
        for t in start_at_delays {
            sim.tasks[t].state = TaskState::Starting;
            let at = SimTime::ZERO + sim.tasks[t].start_delay;
            sim.schedule(at, Event::Start(t));
        }
        for c in (0..sim.cpus.len()).map(CpuId::from_index) {
            if !sim.cpus[c].runq.is_empty() {
                sim.schedule(SimTime::ZERO, Event::CpuRun(c));
                sim.cpus[c].scheduled = true;
            }
        }
        sim.arm_next_op(SimTime::ZERO);
        sim.start_sampling();
        Simulation { world: sim, streams }
    }
}
