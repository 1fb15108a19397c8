//! Assembling the report at the end of a run: counters, gauges, latencies, tasks.

use super::task::TaskState;
use super::World;
use crate::report::{FaultLatency, JobReport, JobsReport, Outcome, SimReport, TaskReport};
use crate::stats::Gauges;

impl World {
    /// Finishes the run and builds the report.
    pub(crate) fn into_report(mut self) -> SimReport {
        // Before the sync below, which the run itself never saw.
        let series = self.finish_series();
        self.mm.zswap_sync();
        let mm = &self.mm;
        let sizes = self.lru.sizes();
        let lru_gen = self.lru.lru_gen_report(mm);
        // Counted without a branch per entry: the table has an entry per page of every
        // region, millions for a large guest.
        let (mut rss, mut swapped) = (0u64, 0u64);
        for pte in &mm.pt.ptes {
            rss += u64::from(pte.is_present());
            swapped += u64::from(pte.is_swap());
        }
        let swapcached = mm.frames.in_use().filter(|&p| mm.frames.swap_slot(p).is_some()).count() as u64;
        let at_end = Gauges {
            nr_free_pages: mm.frames.free_pages(),
            nr_inactive_anon: sizes.inactive_anon,
            nr_active_anon: sizes.active_anon,
            nr_anon_pages: rss,
            nr_swapcached: swapcached,
            nr_writeback: mm.nr_writeback(),
            memcg_usage_pages: mm.memcg_usage(),
            rss_pages: rss,
            swap_pages: swapped,
            swap_slots_used: mm.swap.used_slots(),
        };
        SimReport {
            outcome: self.outcome.clone().unwrap_or(Outcome::Completed),
            sim_time_s: self.end.as_secs_f64(),
            events: self.mm.events(),
            accesses: self.accesses,
            readahead: self.policies.readahead.kind().to_string(),
            operations: self.op_reports(),
            vmstat: mm.vmstat.clone(),
            mthp: mm.mthp.report(),
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
                    start_s: t.started_at.map(|at| at.as_secs_f64()),
                    end_s: t.clock.as_secs_f64(),
                    exited: t.exit_on_end && t.state == TaskState::Done,
                    io_wait_s: t.io_wait.as_secs_f64(),
                })
                .collect(),
            jobs: self.jobs_report(),
            cpu_busy_s: self.cpus[..self.mm.cfg.machine.cpus as usize]
                .iter()
                .map(|c| c.busy.as_secs_f64())
                .collect(),
            zswap: mm.zswap_on().then(|| mm.zswap_report()),
            lru_gen,
            series,
        }
    }

    /// The job queue's summary, when some user task's end is its process's exit.
    fn jobs_report(&self) -> Option<JobsReport> {
        let jobs: Vec<_> = self.tasks.iter().filter(|t| t.is_user() && t.exit_on_end).collect();
        if jobs.is_empty() {
            return None;
        }
        let first_start = jobs.iter().filter_map(|t| t.started_at).min();
        let last_end = jobs.iter().filter_map(|t| t.ended_at).max();
        let wall_s = match (first_start, last_end) {
            (Some(start), Some(end)) => end.since(start).as_secs_f64(),
            _ => 0.0,
        };
        Some(JobsReport {
            jobs: jobs.len() as u64,
            started: jobs.iter().filter(|t| t.started_at.is_some()).count() as u64,
            exited: jobs.iter().filter(|t| t.state == TaskState::Done).count() as u64,
            oom_killed: jobs.iter().filter(|t| t.state == TaskState::Killed).count() as u64,
            wall_s,
            makespan_s: last_end.map_or(0.0, |end| end.as_secs_f64()),
            per_job: jobs
                .iter()
                .map(|t| JobReport {
                    name: t.name.clone(),
                    start_s: t.started_at.map(|at| at.as_secs_f64()),
                    end_s: t.ended_at.map(|at| at.as_secs_f64()),
                    faults: t.faults.faults,
                    major_faults: t.faults.major,
                    swapins: t.faults.swapins,
                    oom_killed: t.state == TaskState::Killed,
                })
                .collect(),
        })
    }
}
