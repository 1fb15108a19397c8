//! Sampling the machine at fixed intervals of simulated time (`[report] sample_every`)
//! into the report's [`Series`].
//!
//! The engine samples where simulated time already moves past a boundary, and nowhere
//! else: when it takes an event later than the next boundary (`World::step`), and when a
//! running task's clock passes it between events (`World::must_yield`, which already
//! compares the clock with the time limit: the two share one bound, `clock_stop`, so
//! that a run without sampling compares no more than before). The resident-hit loop stops
//! at that bound as it stops at the time limit, and carries on from the same place after
//! the sample. A sample at a boundary is taken only once every event at or before it has
//! been handled: a task whose clock passed the queue's next event yields first, and the
//! boundary is sampled when that event or a later task passes it.
//!
//! Sampling only reads: it changes no state that the run reads, schedules no event and
//! draws no random number, so a run's report is the same with and without it (the
//! `series` field aside). When several boundaries pass between two events, one sample is
//! taken per boundary, with the same gauges; each costs a pass over the touched PTEs
//! (for the resident and swapped page counts), which is why the state is read once for
//! all of them.
//!
//! Simplified: work is counted in the interval where it began (an access or a fault
//! whose kernel work carried its task's clock past a boundary falls wholly before it).

use super::task::TaskState;
use super::World;
use crate::ids::TaskId;
use crate::series::{Sample, Series, TaskPhase, TaskSample, MAX_SAMPLES};
use crate::stats::{BlockTotals, Vmstat};
use crate::time::{SimDuration, SimTime};

/// The sampler's state: the series so far and the counts at the last sample.
#[derive(Clone, Debug)]
pub(super) struct Sampler {
    every: SimDuration,
    series: Series,
    /// The user tasks, in the order of each sample's tasks.
    user_tasks: Vec<TaskId>,
    last_at: SimTime,
    last_vmstat: Vmstat,
    last_events: u64,
    last_accesses: u64,
    /// The block layer's totals at the last sample.
    last_block: BlockTotals,
    /// Per user task, its stall at the last sample.
    last_stall: Vec<SimDuration>,
}

/// The state the engine is in, read once for every sample of one call.
struct Gauges {
    memcg_usage_pages: u64,
    rss_pages: u64,
    swap_pages: u64,
    swap_slots_used: u64,
    nr_writeback: u64,
    zswap_pool_bytes: u64,
    zswap_stored_pages: u64,
    tasks: Vec<TaskSample>,
}

impl World {
    /// Starts sampling when the configuration asks for it; otherwise the next sample is
    /// at the end of time and nothing is ever sampled.
    pub(super) fn start_sampling(&mut self) {
        self.next_sample_at = SimTime::MAX;
        if let Some(every) = self.mm.cfg.report.sample_every {
            assert!(every.0 > 0, "a validated sampling interval is positive");
            let user_tasks: Vec<TaskId> =
                (0..self.tasks.len()).map(TaskId::from_index).filter(|&t| self.tasks[t].is_user()).collect();
            self.sampler = Some(Box::new(Sampler {
                every,
                series: Series {
                    interval_ns: every.0,
                    task_names: user_tasks.iter().map(|&t| self.tasks[t].name.clone()).collect(),
                    samples: Vec::new(),
                    truncated: false,
                },
                last_stall: vec![SimDuration::ZERO; user_tasks.len()],
                user_tasks,
                last_at: SimTime::ZERO,
                last_vmstat: Vmstat::default(),
                last_events: 0,
                last_accesses: 0,
                last_block: BlockTotals::default(),
            }));
            self.next_sample_at = SimTime::ZERO + every;
        }
        self.clock_stop = self.time_limit.min(self.next_sample_at);
    }

    /// A running task's clock has passed `clock_stop`, every event before it handled:
    /// below the time limit, takes the samples due and returns true; past it, false (the
    /// task must yield).
    #[inline]
    pub(super) fn sampled_below_limit(&mut self, clock: SimTime) -> bool {
        if clock > self.time_limit {
            return false;
        }
        self.sample_until(clock, 0);
        true
    }

    /// Takes a sample at every boundary before `now`, which the engine has passed; of the
    /// events counted so far, the last `unhandled` are not handled yet and belong after.
    #[cold]
    #[inline(never)]
    pub(super) fn sample_until(&mut self, now: SimTime, unhandled: u64) {
        let Some(mut sampler) = self.sampler.take() else { return };
        let gauges = self.sample_gauges(&sampler.user_tasks);
        while self.next_sample_at < now {
            let at = self.next_sample_at;
            if !self.push_sample(&mut sampler, at, unhandled, &gauges) {
                self.next_sample_at = SimTime::MAX;
                break;
            }
            self.next_sample_at = at + sampler.every;
        }
        self.clock_stop = self.time_limit.min(self.next_sample_at);
        self.sampler = Some(sampler);
    }

    /// At the end of the run: the samples due up to its end and a last, shorter one at
    /// the end itself; `None` when the run was not sampled.
    pub(super) fn finish_series(&mut self) -> Option<Series> {
        let end = self.end;
        self.sample_until(end, 0);
        let mut sampler = self.sampler.take()?;
        if end > sampler.last_at && !sampler.series.truncated {
            let gauges = self.sample_gauges(&sampler.user_tasks);
            self.push_sample(&mut sampler, end, 0, &gauges);
        }
        self.next_sample_at = SimTime::MAX;
        self.clock_stop = self.time_limit;
        Some(sampler.series)
    }

    /// Adds the sample at `at` to the series; false when the series is full.
    fn push_sample(&self, sampler: &mut Sampler, at: SimTime, unhandled: u64, gauges: &Gauges) -> bool {
        if sampler.series.samples.len() >= MAX_SAMPLES {
            sampler.series.truncated = true;
            return false;
        }
        let vmstat = self.mm.vmstat.clone();
        let block = self.mm.block.totals();
        let (reads, writes) =
            (block.reads.since(&sampler.last_block.reads), block.writes.since(&sampler.last_block.writes));
        let events = self.mm.events() - unhandled;
        let mut stall_ns = 0;
        for (k, &t) in sampler.user_tasks.iter().enumerate() {
            let task = &self.tasks[t];
            let asleep = if task.state == TaskState::Blocked {
                at.since(task.blocked_since)
            } else {
                SimDuration::ZERO
            };
            // A task killed in its sleep loses the sleep it had not been credited; the
            // stall never goes back.
            let stall = (task.io_wait + asleep).max(sampler.last_stall[k]);
            stall_ns += stall.0 - sampler.last_stall[k].0;
            sampler.last_stall[k] = stall;
        }
        sampler.series.samples.push(Sample {
            t_ns: at.0,
            interval_ns: at.since(sampler.last_at).0,
            vmstat: vmstat.since(&sampler.last_vmstat),
            events: events - sampler.last_events,
            accesses: self.accesses - sampler.last_accesses,
            stall_ns,
            read_requests: reads.completed,
            write_requests: writes.completed,
            read_service_ns: reads.service_ns_total,
            write_service_ns: writes.service_ns_total,
            memcg_usage_pages: gauges.memcg_usage_pages,
            rss_pages: gauges.rss_pages,
            swap_pages: gauges.swap_pages,
            swap_slots_used: gauges.swap_slots_used,
            nr_writeback: gauges.nr_writeback,
            zswap_pool_bytes: gauges.zswap_pool_bytes,
            zswap_stored_pages: gauges.zswap_stored_pages,
            tasks: gauges.tasks.clone(),
        });
        sampler.last_at = at;
        sampler.last_vmstat = vmstat;
        sampler.last_block = block;
        sampler.last_events = events;
        sampler.last_accesses = self.accesses;
        true
    }

    /// The gauges now: memory, swap, zswap and each task's state and pages.
    fn sample_gauges(&self, user_tasks: &[TaskId]) -> Gauges {
        let pt = &self.mm.pt;
        // Each address space counted once, however many threads share it.
        let mut by_space: Vec<Option<(u64, u64)>> = vec![None; pt.spaces.len()];
        let mut tasks = Vec::with_capacity(user_tasks.len());
        for &t in user_tasks {
            let task = &self.tasks[t];
            let (rss_pages, swap_pages) =
                *by_space[task.space.index()].get_or_insert_with(|| pt.space_page_counts(task.space));
            let state = match task.state {
                TaskState::Waiting | TaskState::Starting => TaskPhase::NotStarted,
                TaskState::Runnable => TaskPhase::Runnable,
                TaskState::Blocked => TaskPhase::Blocked,
                TaskState::Done => TaskPhase::Finished,
                TaskState::Killed => TaskPhase::OomKilled,
            };
            tasks.push(TaskSample { state, rss_pages, swap_pages });
        }
        let (rss_pages, swap_pages) =
            by_space.iter().flatten().fold((0, 0), |(r, s), &(rss, swap)| (r + rss, s + swap));
        let (zswap_pool_bytes, zswap_stored_pages) = self.mm.zswap_gauges();
        Gauges {
            memcg_usage_pages: self.mm.memcg_usage(),
            rss_pages,
            swap_pages,
            swap_slots_used: self.mm.swap.used_slots(),
            nr_writeback: self.mm.nr_writeback(),
            zswap_pool_bytes,
            zswap_stored_pages,
            tasks,
        }
    }
}
