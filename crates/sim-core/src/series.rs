//! A run's time series: the machine's state sampled at fixed intervals of simulated time,
//! as `vmstat 1` and `/proc/pressure/memory` show a real machine over time.
//!
//! Only the data lives here; the engine takes the samples (`engine/sampler.rs`). Counters
//! are per interval (what happened in it, as `vmstat 1` prints them), so that the sum of a
//! counter over the samples is the report's total; gauges are the state at the sample's
//! time. A sample at `t` reflects the state at `t`: everything the engine did at times up
//! to `t`, with one approximation: an access or fault whose work began before `t` and
//! carried the acting task's clock past it counts wholly before `t`.
//!
//! Deliberately absent: anything the engine does not track already. The memory stall
//! figure is the sum over the workload's tasks of the time they slept on I/O (a swap-in
//! read, or writeback a charge waits for), not PSI's "some"/"full" shares of wall time.

use crate::stats::Vmstat;
use serde::Serialize;

/// Samples a run keeps at most; sampling stops there and the series says it was cut.
/// A bound on memory for an interval far shorter than the run.
pub const MAX_SAMPLES: usize = 200_000;

/// The samples of one run, in time order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Series {
    /// The sampling interval, in nanoseconds of simulated time.
    pub interval_ns: u64,
    /// The workload's tasks, in the order of every sample's `tasks`.
    pub task_names: Vec<String>,
    /// One per interval: at `interval`, `2 × interval`, ..., then a last, shorter one at
    /// the end of the run unless the run ended on a boundary.
    pub samples: Vec<Sample>,
    /// Sampling stopped at [`MAX_SAMPLES`] before the run ended.
    pub truncated: bool,
}

/// The machine over one interval, ending at `t_ns`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Sample {
    /// The end of the interval: the time the gauges describe, in nanoseconds.
    pub t_ns: u64,
    /// The interval's length, in nanoseconds (shorter for the last sample).
    pub interval_ns: u64,
    /// Counts of /proc/vmstat counters during the interval.
    pub vmstat: Vmstat,
    /// Events taken off the queue during the interval.
    pub events: u64,
    /// Accesses replayed during the interval.
    pub accesses: u64,
    /// Memory stall during the interval: nanoseconds the workload's tasks spent asleep on
    /// I/O (swap-in reads, writeback a charge waited for), summed over the tasks, so two
    /// tasks stalled together for 1 ms count 2 ms.
    pub stall_ns: u64,
    /// Block requests that completed during the interval, over every swap device (zram
    /// included, as the report's block figures count it): reads, then writes.
    pub read_requests: u64,
    pub write_requests: u64,
    /// Their service times (issue to completion) summed, in nanoseconds: with the counts,
    /// the interval's mean service time in each direction, as `iostat`'s `r_await` and
    /// `w_await` give it less the scheduler's queueing.
    pub read_service_ns: u64,
    pub write_service_ns: u64,
    /// Pages charged to the memory cgroup (`memory.current` / 4 KiB) at `t_ns`.
    pub memcg_usage_pages: u64,
    /// Resident pages of the tasks' address spaces (VmRSS / 4 KiB).
    pub rss_pages: u64,
    /// Swapped-out pages of the tasks' address spaces (VmSwap / 4 KiB).
    pub swap_pages: u64,
    /// Allocated swap slots over all devices, swap-cache-only slots included.
    pub swap_slots_used: u64,
    /// Folios under writeback, in pages (`nr_writeback`).
    pub nr_writeback: u64,
    /// zswap's pool size in bytes (`pool_total_size`); 0 without zswap.
    pub zswap_pool_bytes: u64,
    /// Pages stored in zswap (`stored_pages`); 0 without zswap.
    pub zswap_stored_pages: u64,
    /// Each task of the workload at `t_ns`, in the order of [`Series::task_names`].
    pub tasks: Vec<TaskSample>,
}

/// One task at a sample's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TaskSample {
    /// What it was doing.
    pub state: TaskPhase,
    /// Resident pages of its address space (shared by the threads of a process).
    pub rss_pages: u64,
    /// Swapped-out pages of its address space.
    pub swap_pages: u64,
}

/// What a task was doing at a sample's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskPhase {
    /// Not started: waiting for its start condition or its start delay.
    NotStarted,
    /// Running on its CPU or waiting in its run queue.
    Runnable,
    /// Asleep on I/O: a swap-in read, or writeback its charge waits for.
    Blocked,
    /// Its stream ended (its process exited if its end is the exit).
    Finished,
    /// The OOM killer took it.
    OomKilled,
}

impl TaskPhase {
    /// The name CSV files and the JSON document use.
    pub fn name(self) -> &'static str {
        match self {
            TaskPhase::NotStarted => "not-started",
            TaskPhase::Runnable => "runnable",
            TaskPhase::Blocked => "blocked",
            TaskPhase::Finished => "finished",
            TaskPhase::OomKilled => "oom-killed",
        }
    }
}

impl Series {
    /// The sum of every sample's counters: the run's totals when sampling was not cut.
    pub fn vmstat_total(&self) -> Vmstat {
        let mut total = Vmstat::default();
        for s in &self.samples {
            total = total.plus(&s.vmstat);
        }
        total
    }
}
