//! Building a simulation: devices, address spaces, tasks, the first CPU runs.

use super::reclaim::Kswapd;
use super::stream::Stream;
use super::task::{Cpu, Task, TaskState, UserStart};
use super::{Setup, Simulation, World};
use crate::block::BlockLayer;
use crate::error::SimError;
use crate::event::Event;
use crate::ids::{CpuId, SpaceId, TaskId};
use crate::mm::pagetable::PageTables;
use crate::mm::swap::{Swap, SwaponSpec};
use crate::mm::vmscan::DEF_PRIORITY;
use crate::mm::{Mm, MmParts};
use crate::stats::LatencyHistogram;
use crate::time::SimTime;
use crate::timeline::TimelineOp;
use crate::workload::TaskStart;

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
        for (i, op) in setup.timeline.iter().enumerate() {
            if let crate::timeline::Trigger::AfterAccesses { task, .. } = op.trigger {
                if task >= n_tasks {
                    return Err(SimError::Setup(format!(
                        "timeline[{i}]: task {task} does not exist (the setup has {n_tasks} tasks)"
                    )));
                }
            }
        }
        // Every start condition names something earlier, so that by induction every task
        // starts once the tasks before it have run.
        for (i, spec) in setup.tasks.iter().enumerate() {
            match spec.start {
                TaskStart::AtStart => {}
                TaskStart::AfterTask(j) if j < i => {}
                TaskStart::AfterTask(j) => {
                    return Err(SimError::Setup(format!(
                        "task {i} ({}): starts after task {j}, which is not an earlier task",
                        spec.name
                    )))
                }
                TaskStart::AfterEnds(n) if n >= 1 && n as usize <= i => {}
                TaskStart::AfterEnds(n) => {
                    return Err(SimError::Setup(format!(
                        "task {i} ({}): starts after {n} task ends, outside 1..={i} (the tasks before it)",
                        spec.name
                    )))
                }
            }
        }
        let timeline: Vec<TimelineOp> = setup.timeline;
        let mut pt = PageTables::new();
        pt.default_orders = cfg.thp.allowed(cfg.thp.implicit_madvise);
        pt.default_contents = pt.contents_id(&cfg.implicit_contents);
        let mut tasks = Vec::with_capacity(n_tasks);
        let mut streams = Vec::with_capacity(n_tasks);
        let mut after_task = Vec::new();
        let mut after_ends = Vec::new();
        // Tasks with the same address-space key share one space (threads of a process).
        let mut shared: std::collections::BTreeMap<u64, SpaceId> = std::collections::BTreeMap::new();
        for (i, spec) in setup.tasks.into_iter().enumerate() {
            let id = TaskId::from_index(i);
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
                pt.map_region(space, r.start, r.pages, orders, contents).map_err(|e| {
                    SimError::Setup(format!(
                        "task {}: region at page {} of {} pages: {e:?}",
                        spec.name, r.start.0, r.pages
                    ))
                })?;
            }
            match spec.start {
                TaskStart::AtStart => {}
                TaskStart::AfterTask(j) => after_task.push((TaskId::from_index(j), id)),
                TaskStart::AfterEnds(n) => after_ends.push((n, id)),
            }
            streams.push(Stream::new(spec.accesses));
            let start = UserStart {
                start: spec.start,
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
        let mut policies = setup.policies;
        let zswap_policy =
            std::mem::replace(&mut policies.zswap, Box::new(crate::policy::zswap::NoProtection));
        let mm = Mm::new(MmParts { cfg, pt, swap, block, total_pages, zswap_policy });
        let lru = crate::lru::build(mm.cfg.lru, &mm.cfg.lru_gen);
        if lru.wants_next_uses() {
            if let Some(i) = streams.iter().position(|s| !s.source.knows_next_uses()) {
                return Err(SimError::Setup(format!(
                    "lru = \"opt\": task {i} ({}) does not know when its pages are used next; \
                     Belady's policy needs a trace replayed with next uses (a generated workload has none)",
                    tasks[i].name
                )));
            }
        }
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
            timeline,
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
            window_scratch: Vec::new(),
            swapped_in: false,
            swapin_knobs_set: false,
        };
        for t in (0..sim.tasks.len()).map(TaskId::from_index) {
            if sim.tasks[t].state == TaskState::Runnable {
                let cpu = sim.tasks[t].cpu;
                sim.cpus[cpu].runq.push_back(t);
                sim.cpus[cpu].live_users += 1;
            }
        }
        for c in (0..sim.cpus.len()).map(CpuId::from_index) {
            if !sim.cpus[c].runq.is_empty() {
                sim.schedule(SimTime::ZERO, Event::CpuRun(c));
                sim.cpus[c].scheduled = true;
            }
        }
        sim.arm_next_op(SimTime::ZERO);
        Ok(Simulation { world: sim, streams })
    }
}
