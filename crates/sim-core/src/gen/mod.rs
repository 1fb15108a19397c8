//! Seeded synthetic workloads: the `[workload.generator]` section of a scenario, and the
//! kernel-build-like job queue of `[workload.jobs]` (`jobs.rs`).
//!
//! A scenario can describe its workload instead of shipping a trace: "map 512 MiB, write
//! every page once, then make three random passes". The shape follows the validation
//! workloads (a fill that writes each page once in index order, then passes of an access
//! pattern), so generated runs and measured runs are comparable.
//!
//! Each task gets its own address space and its own random stream, derived from the run's
//! seed and the task's index, so adding a task never changes the accesses of another.
//! Streams are iterators that allocate nothing per access. The only table is the zipf
//! sampler's, 8 bytes per page for regions of up to 1 GiB, built once and shared by
//! all tasks of a workload; larger regions sample zipf ranks without a table. Scattering
//! ranks over the region uses a keyed bijection rather than a stored permutation, so it
//! costs no memory at all.
//!
//! What this module does not do: it models no timing (every access has `think_ns: None`,
//! so the CPU cost profile decides), no sharing of pages between tasks, and no file
//! access. It does not reproduce the random draws of the program that wrote the
//! validation traces; replay those traces through a trace reader instead. Streams are
//! reproducible for a given seed and build; the zipf sampler computes its table (or its
//! samples) with `powf`, `ln` and `exp`, whose last bit may differ between math libraries,
//! which can in rare cases move one zipf sample to a neighbouring rank on another platform.

mod draw;
mod jobs;
mod shared;
mod stream;
#[cfg(test)]
mod tests;
mod zipf;

use crate::config::ByteSize;
use crate::error::ConfigError;
use crate::ids::VirtPage;
use crate::ids::PAGE_SIZE;
use crate::rng::SimRng;
use crate::workload::{RegionSpec, TaskSpec};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Largest region a generated task may map: 1 TiB.
const REGION_BYTES_MAX: u64 = 1 << 40;
/// Most tasks one generator section may start.
const TASKS_MAX: u32 = 4096;
/// Accesses per task, fill included, must stay below this (about 10^12: hours of
/// simulation even at tens of millions of accesses per second).
const TASK_ACCESSES_MAX: u64 = 1 << 40;
/// Largest stride: the number of pages in the largest region.
const STRIDE_PAGES_MAX: u64 = REGION_BYTES_MAX / PAGE_SIZE;
/// Largest zipf exponent. Beyond about 10 nearly every access goes to rank 0 already.
const ZIPF_EXPONENT_MAX: f64 = 10.0;

/// The access pattern of the passes that follow the fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Pages `0..n` in order, each pass starting again at page 0.
    Seq,
    /// Each access picks a page uniformly at random.
    Rand,
    /// Page ranks follow a zipf law: rank `k` (from 1) is drawn with probability
    /// proportional to `1 / k^zipf_exponent`.
    Zipf,
    /// A hot set of `hot_fraction` of the pages receives `hot_access_fraction` of the
    /// accesses; pages are uniform within the hot and within the cold set.
    Hotcold,
    /// Every `stride_pages`-th page; at the end of the region the walk restarts one page
    /// further on, so a pass of one access per page touches every page exactly once.
    Stride,
}

impl Pattern {
    /// The name used in scenario files and task names.
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Seq => "seq",
            Pattern::Rand => "rand",
            Pattern::Zipf => "zipf",
            Pattern::Hotcold => "hotcold",
            Pattern::Stride => "stride",
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `[workload.generator]` in a scenario file: a synthetic workload of one or more tasks.
///
/// Deserialising checks only the shape; call [`GeneratorConfig::validate`] before building
/// tasks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorConfig {
    /// The pattern of the passes. Required.
    pub pattern: Pattern,
    /// Size of the anonymous region each task maps, a whole number of 4 KiB pages between
    /// one page and 1 TiB. Required.
    pub region: ByteSize,
    /// Passes after the fill. Default 1; 0 runs the fill only.
    #[serde(default = "default_passes")]
    pub passes: u32,
    /// Accesses per pass. Default: one per page of the region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_accesses: Option<u64>,
    /// Write every page once, in index order, before the passes (as the validation
    /// workloads do). Default true.
    #[serde(default = "default_true")]
    pub fill: bool,
    /// Probability that an access in a pass is a write, 0..=1. Default 0.2.
    #[serde(default = "default_write_fraction")]
    pub write_fraction: f64,
    /// Zipf exponent, above 0 and at most 10; used by `zipf` only. Default 0.9.
    #[serde(default = "default_zipf_exponent")]
    pub zipf_exponent: f64,
    /// Fraction of the pages that are hot, above 0 and at most 1 (at least one page is
    /// hot); used by `hotcold` only. Default 0.1.
    #[serde(default = "default_hot_fraction")]
    pub hot_fraction: f64,
    /// Fraction of the accesses that go to hot pages, 0..=1; used by `hotcold` only.
    /// Default 0.9.
    #[serde(default = "default_hot_access_fraction")]
    pub hot_access_fraction: f64,
    /// Step in pages, 1..=268435456; used by `stride` only. Default 16.
    #[serde(default = "default_stride_pages")]
    pub stride_pages: u64,
    /// Number of tasks, 1..=4096, each with its own address space and stream. Default 1.
    #[serde(default = "default_tasks")]
    pub tasks: u32,
    /// `zipf` and `hotcold`: spread the popular ranks over the region with a seeded
    /// permutation, so hot pages are scattered as in a real heap. When false, rank 0 is
    /// page 0 and the hot pages form one block at the start. Default true.
    #[serde(default = "default_true")]
    pub scatter: bool,
    /// The tasks' region's madvise hint for transparent huge pages: "default",
    /// "hugepage" (`MADV_HUGEPAGE`) or "nohugepage". Default "default".
    #[serde(default, skip_serializing_if = "is_default_hint")]
    pub madvise: crate::thp::ThpHint,
}

fn is_default_hint(h: &crate::thp::ThpHint) -> bool {
    *h == crate::thp::ThpHint::Default
}

fn default_passes() -> u32 {
    1
}
fn default_true() -> bool {
    true
}
fn default_write_fraction() -> f64 {
    0.2
}
fn default_zipf_exponent() -> f64 {
    0.9
}
fn default_hot_fraction() -> f64 {
    0.1
}
fn default_hot_access_fraction() -> f64 {
    0.9
}
fn default_stride_pages() -> u64 {
    16
}
fn default_tasks() -> u32 {
    1
}

impl GeneratorConfig {
    /// A config with the given pattern and region and every other field at its default.
    pub fn new(pattern: Pattern, region: ByteSize) -> GeneratorConfig {
        GeneratorConfig {
            pattern,
            region,
            passes: default_passes(),
            pass_accesses: None,
            fill: true,
            write_fraction: default_write_fraction(),
            zipf_exponent: default_zipf_exponent(),
            hot_fraction: default_hot_fraction(),
            hot_access_fraction: default_hot_access_fraction(),
            stride_pages: default_stride_pages(),
            tasks: default_tasks(),
            scatter: true,
            madvise: crate::thp::ThpHint::Default,
        }
    }

    /// Checks ranges. Every field is checked whatever the pattern, so a bad value is
    /// reported even where the pattern would ignore it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &str, message: String| {
            Err(ConfigError::Invalid { field: format!("workload.generator.{field}"), message })
        };
        if self.region.0 < PAGE_SIZE {
            return bad("region", format!("{} is smaller than one page ({PAGE_SIZE} bytes)", self.region));
        }
        if self.region.0 & (PAGE_SIZE - 1) != 0 {
            return bad("region", format!("{} is not a whole number of {PAGE_SIZE}-byte pages", self.region));
        }
        if self.region.0 > REGION_BYTES_MAX {
            return bad(
                "region",
                format!("{} exceeds the maximum of {}", self.region, ByteSize(REGION_BYTES_MAX)),
            );
        }
        if self.pass_accesses == Some(0) {
            return bad("pass_accesses", "0 is not positive (leave it out for one access per page)".into());
        }
        let accesses_per_pass = self.accesses_per_pass();
        let total = u64::from(self.passes)
            .checked_mul(accesses_per_pass)
            .and_then(|passes_total| passes_total.checked_add(self.fill_accesses()));
        if !matches!(total, Some(total) if total < TASK_ACCESSES_MAX) {
            return bad(
                "passes",
                format!(
                    "{} passes of {accesses_per_pass} accesses exceed the limit of {TASK_ACCESSES_MAX} \
                     accesses per task",
                    self.passes
                ),
            );
        }
        if !(0.0..=1.0).contains(&self.write_fraction) {
            return bad("write_fraction", format!("{} is outside 0..=1", self.write_fraction));
        }
        if !(self.zipf_exponent > 0.0 && self.zipf_exponent <= ZIPF_EXPONENT_MAX) {
            return bad(
                "zipf_exponent",
                format!("{} is not above 0 and at most {ZIPF_EXPONENT_MAX}", self.zipf_exponent),
            );
        }
        if !(self.hot_fraction > 0.0 && self.hot_fraction <= 1.0) {
            return bad("hot_fraction", format!("{} is not above 0 and at most 1", self.hot_fraction));
        }
        if !(0.0..=1.0).contains(&self.hot_access_fraction) {
            return bad("hot_access_fraction", format!("{} is outside 0..=1", self.hot_access_fraction));
        }
        if !(1..=STRIDE_PAGES_MAX).contains(&self.stride_pages) {
            return bad("stride_pages", format!("{} is outside 1..={STRIDE_PAGES_MAX}", self.stride_pages));
        }
        if !(1..=TASKS_MAX).contains(&self.tasks) {
            return bad("tasks", format!("{} is outside 1..={TASKS_MAX}", self.tasks));
        }
        Ok(())
    }

    /// Task `index` of this workload: the region at page 0 of its own address space and a
    /// stream seeded from `SimRng::derive(seed, "workload.task<index>")`. The same
    /// arguments always give the same stream.
    ///
    /// Expects a config that passed [`GeneratorConfig::validate`]. An invalid one still
    /// gives a finite stream and never panics, but its shape is unspecified.
    pub fn task(&self, seed: u64, index: u32) -> TaskSpec {
        self.task_sharing(seed, index, self.zipf_sampler())
    }

    /// All `tasks` tasks, in index order. They share one zipf table.
    pub fn tasks(&self, seed: u64) -> Vec<TaskSpec> {
        let zipf = self.zipf_sampler();
        (0..self.tasks).map(|index| self.task_sharing(seed, index, zipf.clone())).collect()
    }

    /// Accesses one task makes, fill included (saturating on absurd configs).
    pub fn total_accesses(&self) -> u64 {
        u64::from(self.passes).saturating_mul(self.accesses_per_pass()).saturating_add(self.fill_accesses())
    }

    fn task_sharing(&self, seed: u64, index: u32, zipf: Option<ZipfSampler>) -> TaskSpec {
        let rng = SimRng::derive(seed, &format!("workload.task{index}"));
        let stream = GenStream::new(self, rng, zipf);
        let regions = vec![RegionSpec { thp: self.madvise, ..RegionSpec::new(VirtPage(0), stream.pages) }];
        TaskSpec::new(format!("gen:{}#{index}", self.pattern), regions, Box::new(stream))
    }

    /// The region in pages, counted as one page when the config is invalid.
    fn stream_pages(&self) -> u64 {
        self.region.pages().max(1)
    }

    fn zipf_sampler(&self) -> Option<ZipfSampler> {
        // An invalid exponent falls back to the default, so that streams of unvalidated
        // configs stay well defined.
        let exponent = if self.zipf_exponent > 0.0 {
            self.zipf_exponent.min(ZIPF_EXPONENT_MAX)
        } else {
            default_zipf_exponent()
        };
        (self.pattern == Pattern::Zipf).then(|| ZipfSampler::new(self.stream_pages(), exponent))
    }

    fn accesses_per_pass(&self) -> u64 {
        self.pass_accesses.unwrap_or(self.region.pages())
    }

    fn fill_accesses(&self) -> u64 {
        if self.fill {
            self.region.pages()
        } else {
            0
        }
    }
}

pub use jobs::{JobPlan, JobsConfig};
use stream::GenStream;
use zipf::ZipfSampler;
