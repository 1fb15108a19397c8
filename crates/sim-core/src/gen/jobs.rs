//! A job queue shaped like a kernel build: the `[workload.jobs]` section of a scenario.
//!
//! Published mTHP and zswap results come from kernel builds: many short processes
//! (compilers, and a few large linker steps) that start, grow their heap, work on it and
//! exit, `-j N` of them at a time. This module describes such a queue; the engine runs it
//! (each job a task starting when a slot frees, [`TaskStart::AfterEnds`], and exiting at
//! its end, [`TaskSpec::exit_on_end`]).
//!
//! Each job is drawn from its own stream, `SimRng::derive(seed, "workload.job<i>")`, in a
//! fixed order: whether it is a link job, its size, its lifetime, then the seed of its
//! per-access generator. Adding a job, or changing how many run at once, never changes
//! another job's accesses.
//!
//! A job of `pages` pages and `accesses` accesses (at least one per page) maps one region
//! of exactly its size. Each access either grows the heap, writing the next untouched
//! page in order as an allocator hands out fresh memory, or re-references a page already
//! touched. Growth is spread at random over the whole lifetime by selection sampling: an
//! access grows with probability (pages left to grow) / (accesses left), so the job
//! writes its last new page by its last access and never stops short. A re-reference
//! picks the page by age (how many pages were allocated after it) from a bounded power
//! law with exponent `reuse_exponent`: recently allocated pages are the hottest, as a
//! compiler works on the function it just parsed, and older data (symbol tables, earlier
//! declarations) is revisited ever less often. Re-references are loads, or stores with
//! probability `write_fraction`.
//!
//! The power law is drawn by inverting its continuous form over the touched set, whose
//! size changes with every growth; the zipf samplers of `zipf.rs` precompute for a fixed
//! number of ranks, so they do not fit. A stream holds a handful of words and allocates
//! nothing per access; it copies as a value, so a simulation of a queue forks
//! (`Simulation::fork`).
//!
//! What this module does not do: jobs share nothing (no fork, no copy-on-write, no shared
//! libraries or page cache), touch no files, never free memory before they exit, and
//! carry no timing (the CPU cost profile decides). Which jobs are links is random, where a
//! real build runs its big links late.
//!
//! How a job starts, shares the CPU, charges, reclaims and exits is the engine's, the same
//! as for a queue of traces (`[workload.queue]`), which the validation's queue cases check
//! against the kernel; what is not validated is this module's access pattern and sizes.
//! Those cases' jobs fill their region first and then make two or three passes of a fixed
//! pattern; a generated job grows its heap all through its life and re-references its
//! newest pages most, as a compiler does. A generated job starts the instant a slot frees,
//! as make starts one: the queue cases' 18 ms launch delay is their Python launcher moving
//! each job into the memory cgroup, which make, whose children inherit its cgroup, does not
//! do. The float draws use `ln`, `exp` and `powf`, so, as
//! for the zipf sampler, streams are reproducible per platform.

use super::draw::{draw53, draw_below, draw_unit, probability_threshold, AccessRng};
use super::shared::JobSource;
use super::{REGION_BYTES_MAX, TASK_ACCESSES_MAX};
use crate::config::ByteSize;
use crate::error::ConfigError;
use crate::ids::{VirtPage, PAGE_SIZE};
use crate::rng::SimRng;
use crate::workload::{Access, RegionSpec, TaskSpec, TaskStart};
use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

/// Most jobs one queue may hold. Exited jobs keep their page-table chunks (see
/// `engine/exit.rs`), so the host pays 8 bytes per page every job touched.
const JOBS_MAX: u32 = 4096;
/// Largest spread of a lognormal draw: beyond 3 the largest of a few thousand draws is
/// tens of thousands of times the median.
const SIGMA_MAX: f64 = 3.0;
/// Largest median accesses per page.
const ACCESSES_PER_PAGE_MAX: f64 = 1e6;
/// Largest re-reference exponent. Beyond about 10 nearly every re-reference goes to the
/// newest page.
const REUSE_EXPONENT_MAX: f64 = 10.0;

/// `[workload.jobs]` in a scenario file: a queue of short-lived processes run `-j N` at
/// a time, shaped like a kernel build. Every field has a default, so an empty section is
/// a valid queue.
///
/// Deserialising checks only the shape; call [`JobsConfig::validate`] before building
/// tasks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobsConfig {
    /// Number of jobs, 1..=4096. Default 200: at `-j 4` each slot runs fifty jobs in a
    /// row, so the start, when the slots fill, and the tail, when they drain, are a small
    /// part of the run. A full kernel build runs a few thousand compile jobs.
    pub jobs: u32,
    /// Jobs running at once (`make -j`), 1..=4096. Default 4. The first `concurrency`
    /// jobs start with the run; each end starts the next job in order, on the CPU with
    /// the fewest tasks.
    pub concurrency: u32,
    /// Median size of a compile job, the heap it grows to. Default 60 MiB: compiler
    /// processes in a kernel build peak at tens to a few hundred MiB.
    pub size_median: ByteSize,
    /// Spread of job sizes: the standard deviation of the size's natural logarithm (a
    /// lognormal), 0..=3. Default 0.7, which puts 90 % of compile jobs between about a
    /// third and three times the median (19 to 190 MiB at the default median).
    pub size_sigma: f64,
    /// Probability that a job is a link job, 0..=1. Default 0.02: the linker steps are a
    /// small share of a build's jobs but its largest processes.
    pub link_fraction: f64,
    /// Median size of a link job, with the same spread. Default 400 MiB: linking a kernel
    /// image takes several hundred MiB.
    pub link_size_median: ByteSize,
    /// Median accesses per page of a job's size over its life, the fill included,
    /// 1..=1000000: the lifetime is proportional to the size. Default 8, a modelling
    /// choice rather than a measurement: it sets how much work a job does per page it
    /// holds, and keeps a default queue to seconds of simulation. Raise it for jobs that
    /// hold their memory longer.
    pub accesses_per_page: f64,
    /// Spread of lifetimes around `size × accesses_per_page`: the standard deviation of
    /// the lifetime's natural logarithm, 0..=3. Default 0.5, which keeps 90 % of jobs
    /// within a factor of 2.3 of the median lifetime for their size (compile units of the
    /// same size differ in the work they need).
    pub lifetime_sigma: f64,
    /// Skew of re-references towards recently allocated pages, above 0 and at most 10: a
    /// re-reference goes to the page allocated `age` pages ago with density proportional
    /// to `(age + 1)^-reuse_exponent`. Default 1.0: in a 60 MiB job that has grown to its
    /// full size, about 58 % of re-references fall on the newest MiB and about 19 % reach
    /// further back than 10 MiB.
    pub reuse_exponent: f64,
    /// Probability that a re-reference is a store, 0..=1 (every growth is a store).
    /// Default 0.3: a compiler builds its data structures as it goes, but reads most.
    pub write_fraction: f64,
}

impl Default for JobsConfig {
    fn default() -> JobsConfig {
        JobsConfig {
            jobs: 200,
            concurrency: 4,
            size_median: ByteSize::mib(60),
            size_sigma: 0.7,
            link_fraction: 0.02,
            link_size_median: ByteSize::mib(400),
            accesses_per_page: 8.0,
            lifetime_sigma: 0.5,
            reuse_exponent: 1.0,
            write_fraction: 0.3,
        }
    }
}

/// What one job will be, as drawn from its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobPlan {
    /// A link job (sized by `link_size_median`) rather than a compile job.
    pub link: bool,
    /// Size in pages: the region it maps and the heap it grows to.
    pub pages: u64,
    /// Accesses over its life, growth included; at least `pages`.
    pub accesses: u64,
}

impl JobsConfig {
    /// Checks ranges. Every field is checked, and an error names it:
    /// `workload.jobs.concurrency: 0 is below 1`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &str, message: String| {
            Err(ConfigError::Invalid { field: format!("workload.jobs.{field}"), message })
        };
        if !(1..=JOBS_MAX).contains(&self.jobs) {
            return bad("jobs", format!("{} is outside 1..={JOBS_MAX}", self.jobs));
        }
        if self.concurrency < 1 {
            return bad("concurrency", format!("{} is below 1", self.concurrency));
        }
        if self.concurrency > JOBS_MAX {
            return bad("concurrency", format!("{} is above {JOBS_MAX}", self.concurrency));
        }
        for (field, size) in [("size_median", self.size_median), ("link_size_median", self.link_size_median)]
        {
            if size.0 < PAGE_SIZE {
                return bad(field, format!("{size} is smaller than one page ({PAGE_SIZE} bytes)"));
            }
            if size.0 > REGION_BYTES_MAX {
                return bad(field, format!("{size} exceeds the maximum of {}", ByteSize(REGION_BYTES_MAX)));
            }
        }
        for (field, sigma) in [("size_sigma", self.size_sigma), ("lifetime_sigma", self.lifetime_sigma)] {
            if !(0.0..=SIGMA_MAX).contains(&sigma) {
                return bad(field, format!("{sigma} is outside 0..={SIGMA_MAX}"));
            }
        }
        for (field, p) in [("link_fraction", self.link_fraction), ("write_fraction", self.write_fraction)] {
            if !(0.0..=1.0).contains(&p) {
                return bad(field, format!("{p} is outside 0..=1"));
            }
        }
        if !(1.0..=ACCESSES_PER_PAGE_MAX).contains(&self.accesses_per_page) {
            return bad(
                "accesses_per_page",
                format!("{} is outside 1..={ACCESSES_PER_PAGE_MAX}", self.accesses_per_page),
            );
        }
        if !(self.reuse_exponent > 0.0 && self.reuse_exponent <= REUSE_EXPONENT_MAX) {
            return bad(
                "reuse_exponent",
                format!("{} is not above 0 and at most {REUSE_EXPONENT_MAX}", self.reuse_exponent),
            );
        }
        Ok(())
    }

    /// Job `index`: whether it links, its size and its lifetime, drawn from
    /// `SimRng::derive(seed, "workload.job<index>")`.
    pub fn plan(&self, seed: u64, index: u32) -> JobPlan {
        self.draw(seed, index).0
    }

    /// Accesses of the whole queue, for progress reporting.
    pub fn total_accesses(&self, seed: u64) -> u64 {
        (0..self.jobs).map(|index| self.plan(seed, index).accesses).fold(0, u64::saturating_add)
    }

    /// Every job as a task, in queue order: the first `concurrency` start with the run,
    /// job `i` after `i - concurrency + 1` jobs have ended, at once (make starts the next
    /// job as soon as it reaps one); each starts by `exec` and exits at its end. Link jobs
    /// are named `ld#<i>`, compile jobs `cc#<i>`.
    ///
    /// Expects a config that passed [`JobsConfig::validate`]. An invalid one still gives
    /// finite streams and never panics, but their shape is unspecified.
    pub fn tasks(&self, seed: u64) -> Vec<TaskSpec> {
        let concurrency = self.concurrency.max(1);
        (0..self.jobs)
            .map(|index| {
                let (plan, mut rng) = self.draw(seed, index);
                let stream = JobStream::new(self, plan, AccessRng::from_stream(&mut rng));
                let name = format!("{}#{index}", if plan.link { "ld" } else { "cc" });
                let regions = vec![RegionSpec::new(VirtPage(0), plan.pages)];
                let mut task = TaskSpec::new(name, regions, Box::new(JobSource::new(stream)));
                if index >= concurrency {
                    task.start = TaskStart::AfterEnds(index - concurrency + 1);
                }
                task.exit_on_end = true;
                // make forks and execs each job: the start costs `cpu.exec_ns` and its
                // start-up faults, as a traced queue's jobs do.
                task.exec = true;
                task
            })
            .collect()
    }

    /// The job's plan and its stream, positioned for the per-access generator's seed.
    fn draw(&self, seed: u64, index: u32) -> (JobPlan, SimRng) {
        let mut rng = SimRng::derive(seed, &format!("workload.job{index}"));
        let link = draw_probability(&mut rng) < self.link_fraction;
        let median = if link { self.link_size_median } else { self.size_median };
        let size_normal: f64 = StandardNormal.sample(&mut rng);
        let lifetime_normal: f64 = StandardNormal.sample(&mut rng);
        let pages_max = REGION_BYTES_MAX / PAGE_SIZE;
        let pages = lognormal(median.0 as f64 / PAGE_SIZE as f64, self.size_sigma, size_normal)
            .clamp(1.0, pages_max as f64) as u64;
        let accesses_per_page = if self.accesses_per_page.is_finite() { self.accesses_per_page } else { 1.0 };
        let accesses = lognormal(pages as f64 * accesses_per_page, self.lifetime_sigma, lifetime_normal)
            .clamp(pages as f64, (TASK_ACCESSES_MAX - 1) as f64) as u64;
        (JobPlan { link, pages, accesses }, rng)
    }
}

/// `median × e^(sigma × normal)`, rounded; an invalid sigma counts as 0.
fn lognormal(median: f64, sigma: f64, normal: f64) -> f64 {
    let sigma = if sigma.is_finite() { sigma.clamp(0.0, SIGMA_MAX) } else { 0.0 };
    (median * (sigma * normal).exp()).round()
}

/// A uniform float in [0, 1) from the job's own stream.
fn draw_probability(rng: &mut SimRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The accesses of one job.
#[derive(Clone)]
pub(super) struct JobStream {
    rng: AccessRng,
    /// The job's size in pages.
    pages: u64,
    /// Pages written so far; the next growth writes page `touched`.
    touched: u64,
    /// Accesses left, growth included.
    left: u64,
    write_threshold: u64,
    /// The re-reference exponent, and `1 - exponent` with `1 / (1 - exponent)` when the
    /// exponent is not 1.
    exponent: f64,
    one_minus: f64,
    inverse: f64,
    /// The power law's span over the current touched set `t`: `ln(t + 1)` for exponent 1,
    /// `(t + 1)^(1 - exponent) - 1` otherwise. Recomputed at each growth only.
    span: f64,
}

impl JobStream {
    fn new(cfg: &JobsConfig, plan: JobPlan, rng: AccessRng) -> JobStream {
        let exponent =
            if cfg.reuse_exponent > 0.0 { cfg.reuse_exponent.min(REUSE_EXPONENT_MAX) } else { 1.0 };
        let one_minus = 1.0 - exponent;
        JobStream {
            rng,
            pages: plan.pages.max(1),
            touched: 0,
            left: plan.accesses.max(plan.pages.max(1)),
            write_threshold: probability_threshold(cfg.write_fraction),
            exponent,
            one_minus,
            inverse: if one_minus == 0.0 { 0.0 } else { 1.0 / one_minus },
            span: 0.0,
        }
    }

    /// Age of a re-referenced page, in `0..touched` (0 is the newest page), by inverting
    /// the continuous power law with density proportional to `x^-exponent` on
    /// `[1, touched + 1)` and rounding down.
    #[inline]
    fn draw_age(&mut self) -> u64 {
        let u = draw_unit(&mut self.rng);
        let x = if self.exponent == 1.0 {
            (u * self.span).exp()
        } else {
            (1.0 + u * self.span).powf(self.inverse)
        };
        // Rounding can put x a hair outside [1, touched + 1).
        (x as u64).saturating_sub(1).min(self.touched - 1)
    }

    fn grew(&mut self) {
        let t = (self.touched + 1) as f64;
        self.span = if self.exponent == 1.0 { t.ln() } else { t.powf(self.one_minus) - 1.0 };
    }
}

impl Iterator for JobStream {
    type Item = Access;

    fn next(&mut self) -> Option<Access> {
        if self.left == 0 {
            return None;
        }
        let grow_left = self.pages - self.touched;
        // Selection sampling: grow with probability grow_left / left, always while
        // nothing is touched yet.
        let grow = grow_left > 0 && (self.touched == 0 || draw_below(&mut self.rng, self.left) < grow_left);
        self.left -= 1;
        if grow {
            let page = self.touched;
            self.touched += 1;
            self.grew();
            return Some(Access { vpage: VirtPage(page), write: true, think_ns: None });
        }
        let page = self.touched - 1 - self.draw_age();
        let write = draw53(&mut self.rng) < self.write_threshold;
        Some(Access { vpage: VirtPage(page), write, think_ns: None })
    }
}

#[cfg(test)]
mod tests;
