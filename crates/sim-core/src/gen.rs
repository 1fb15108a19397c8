//! Seeded synthetic workloads: the `[workload.generator]` section of a scenario.
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
//! validation traces; replay those traces through [`crate::trace`] instead. Streams are
//! reproducible for a given seed and build; the zipf sampler computes its table (or its
//! samples) with `powf`, `ln` and `exp`, whose last bit may differ between math libraries,
//! which can in rare cases move one zipf sample to a neighbouring rank on another platform.

use crate::config::ByteSize;
use crate::error::ConfigError;
use crate::ids::VirtPage;
use crate::rng::SimRng;
use crate::workload::{Access, RegionSpec, TaskSpec};
use crate::PAGE_SIZE;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

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
        TaskSpec {
            address_space: None,
            name: format!("gen:{}#{index}", self.pattern),
            regions: vec![RegionSpec { start: VirtPage(0), pages: stream.pages }],
            accesses: Box::new(stream),
        }
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

/// The per-access random generator: xoshiro256++ (D. Blackman and S. Vigna, "Scrambled
/// linear pseudorandom number generators", 2021), seeded from the task's [`SimRng`].
///
/// The task's stream is still derived from the run's seed and the task's name; only the
/// per-access draws come from this cheaper generator. ChaCha8 costs several nanoseconds
/// per draw, which alone would hold a generator to well under the tens of millions of
/// accesses per second the engine can consume. The 256-bit state makes overlap between
/// the streams of different tasks practically impossible, which a 64-bit generator could
/// not promise for thousands of tasks of 2^40 accesses.
#[derive(Clone, Debug)]
struct AccessRng {
    state: [u64; 4],
}

impl AccessRng {
    fn from_stream(stream: &mut SimRng) -> AccessRng {
        let mut state = [0u64; 4];
        for word in &mut state {
            *word = stream.next_u64();
        }
        // The all-zero state is the one fixed point of xoshiro; ChaCha will not produce it
        // in practice, but the generator must not depend on luck.
        if state == [0; 4] {
            state[0] = 1;
        }
        AccessRng { state }
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

/// Turns a probability into a threshold on 53-bit uniform integers, so that `draw < threshold`
/// holds with that probability: 0 never, 1 always. NaN counts as 0.
fn probability_threshold(probability: f64) -> u64 {
    (probability.clamp(0.0, 1.0) * (1u64 << 53) as f64) as u64
}

/// A uniform 53-bit integer, to compare against [`probability_threshold`].
fn draw53(rng: &mut AccessRng) -> u64 {
    rng.next_u64() >> 11
}

/// A uniform float in [0, 1).
fn draw_unit(rng: &mut AccessRng) -> f64 {
    draw53(rng) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `0..bound` by the multiply-high method. The bias is below
/// `bound / 2^64`, under 2^-36 for the largest region, and far cheaper than rejection.
fn draw_below(rng: &mut AccessRng, bound: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(bound)) >> 64) as u64
}

/// The accesses of one generated task.
struct GenStream {
    rng: AccessRng,
    pages: u64,
    /// Next page of the fill; the fill is over when it reaches `fill_end`.
    fill_next: u64,
    fill_end: u64,
    /// Passes not yet started.
    passes_left: u64,
    /// Accesses left in the current pass.
    pass_left: u64,
    pass_accesses: u64,
    write_threshold: u64,
    walk: Walk,
}

/// Per-pattern state of the passes.
enum Walk {
    Seq { next: u64 },
    Rand,
    Zipf { sampler: ZipfSampler, scatter: Option<Scatter> },
    Hotcold { hot_pages: u64, hot_threshold: u64, scatter: Option<Scatter> },
    Stride { stride: u64, start: u64, next: u64 },
}

impl GenStream {
    /// `zipf` must be given for the zipf pattern.
    fn new(cfg: &GeneratorConfig, mut rng: SimRng, zipf: Option<ZipfSampler>) -> GenStream {
        let pages = cfg.stream_pages();
        let scatter = if cfg.scatter { Some(Scatter::new(pages, &mut rng)) } else { None };
        let walk = match cfg.pattern {
            Pattern::Seq => Walk::Seq { next: 0 },
            Pattern::Rand => Walk::Rand,
            Pattern::Zipf => {
                Walk::Zipf { sampler: zipf.expect("the zipf sampler is built for the zipf pattern"), scatter }
            }
            Pattern::Hotcold => {
                let hot_pages = (cfg.hot_fraction.clamp(0.0, 1.0) * pages as f64).round() as u64;
                Walk::Hotcold {
                    hot_pages: hot_pages.clamp(1, pages),
                    hot_threshold: probability_threshold(cfg.hot_access_fraction),
                    scatter,
                }
            }
            Pattern::Stride => Walk::Stride { stride: cfg.stride_pages.clamp(1, pages), start: 0, next: 0 },
        };
        let pass_accesses = cfg.pass_accesses.unwrap_or(pages);
        GenStream {
            rng: AccessRng::from_stream(&mut rng),
            pages,
            fill_next: 0,
            fill_end: if cfg.fill { pages } else { 0 },
            passes_left: if pass_accesses == 0 { 0 } else { u64::from(cfg.passes) },
            pass_left: 0,
            pass_accesses,
            write_threshold: probability_threshold(cfg.write_fraction),
            walk,
        }
    }

    fn next_pass_page(&mut self) -> u64 {
        let pages = self.pages;
        let rng = &mut self.rng;
        match &mut self.walk {
            Walk::Seq { next } => {
                let page = *next;
                *next = if page + 1 == pages { 0 } else { page + 1 };
                page
            }
            Walk::Rand => draw_below(rng, pages),
            Walk::Zipf { sampler, scatter } => {
                let rank = sampler.sample(rng);
                scatter.as_ref().map_or(rank, |scatter| scatter.apply(rank))
            }
            Walk::Hotcold { hot_pages, hot_threshold, scatter } => {
                let cold_pages = pages - *hot_pages;
                let rank = if cold_pages == 0 || draw53(rng) < *hot_threshold {
                    draw_below(rng, *hot_pages)
                } else {
                    *hot_pages + draw_below(rng, cold_pages)
                };
                scatter.as_ref().map_or(rank, |scatter| scatter.apply(rank))
            }
            Walk::Stride { stride, start, next } => {
                let page = *next;
                // Column-major walk: pages start, start + stride, ... then start + 1, ...
                // Each column is non-empty because stride <= pages, so a pass of `pages`
                // accesses is a permutation of the region.
                *next = page + *stride;
                if *next >= pages {
                    *start = if *start + 1 == *stride { 0 } else { *start + 1 };
                    *next = *start;
                }
                page
            }
        }
    }

    fn restart_pass(&mut self) {
        match &mut self.walk {
            Walk::Seq { next } => *next = 0,
            Walk::Stride { start, next, .. } => {
                *start = 0;
                *next = 0;
            }
            Walk::Rand | Walk::Zipf { .. } | Walk::Hotcold { .. } => {}
        }
    }
}

impl Iterator for GenStream {
    type Item = Access;

    fn next(&mut self) -> Option<Access> {
        if self.fill_next < self.fill_end {
            let page = self.fill_next;
            self.fill_next += 1;
            return Some(Access { vpage: VirtPage(page), write: true, think_ns: None });
        }
        if self.pass_left == 0 {
            if self.passes_left == 0 {
                return None;
            }
            self.passes_left -= 1;
            self.pass_left = self.pass_accesses;
            self.restart_pass();
        }
        self.pass_left -= 1;
        let page = self.next_pass_page();
        let write = draw53(&mut self.rng) < self.write_threshold;
        Some(Access { vpage: VirtPage(page), write, think_ns: None })
    }
}

/// Largest region, in pages, whose zipf ranks come from an alias table: 1 GiB, a 2 MiB
/// table. Larger regions use rejection-inversion, which needs no memory but costs a
/// logarithm and an exponential per sample. Measured on a machine with 2 MiB of L2 per
/// core, the table is about twice as fast while it stays in cache and slower than
/// rejection-inversion once it spills, because every sample then misses the cache.
const ZIPF_TABLE_PAGES_MAX: u64 = 1 << 18;

/// Draws zipf ranks, with a table when the region is small enough to afford one.
#[derive(Clone, Debug)]
enum ZipfSampler {
    Table(Arc<AliasTable>),
    Inversion(ZipfInversion),
}

impl ZipfSampler {
    fn new(n: u64, exponent: f64) -> ZipfSampler {
        if n <= ZIPF_TABLE_PAGES_MAX {
            ZipfSampler::Table(Arc::new(AliasTable::zipf(n, exponent)))
        } else {
            ZipfSampler::Inversion(ZipfInversion::new(n, exponent))
        }
    }

    /// A rank in `0..n`, 0 being the most popular.
    fn sample(&self, rng: &mut AccessRng) -> u64 {
        match self {
            ZipfSampler::Table(table) => table.sample(rng),
            ZipfSampler::Inversion(inversion) => inversion.sample(rng),
        }
    }
}

/// Walker's alias method (in Vose's construction): each of the n cells holds its own
/// rank, a second rank, and the probability of keeping the first. A sample is one draw,
/// one table read and one comparison.
#[derive(Debug)]
struct AliasTable {
    cells: Vec<AliasCell>,
}

#[derive(Clone, Copy, Debug)]
struct AliasCell {
    /// Keep the cell's own rank when the 32-bit draw is below this; `u32::MAX` also keeps
    /// it on the draw `u32::MAX`, whose probability (2^-32) the table cannot resolve.
    keep_below: u32,
    alias: u32,
}

impl AliasTable {
    /// The table for ranks `0..n` with weights `1 / (rank + 1)^exponent`; n must be at
    /// most [`ZIPF_TABLE_PAGES_MAX`].
    fn zipf(n: u64, exponent: f64) -> AliasTable {
        assert!((1..=ZIPF_TABLE_PAGES_MAX).contains(&n), "alias table of {n} ranks");
        let weights: Vec<f64> = (1..=n).map(|rank| (rank as f64).powf(-exponent)).collect();
        let total: f64 = weights.iter().sum();
        // Scaled so that the average cell holds exactly 1.
        let mut scaled: Vec<f64> = weights.iter().map(|weight| weight * n as f64 / total).collect();
        let mut cells: Vec<AliasCell> =
            (0..n as u32).map(|rank| AliasCell { keep_below: u32::MAX, alias: rank }).collect();
        let mut small: Vec<u32> = Vec::new();
        let mut large: Vec<u32> = Vec::new();
        for (rank, &value) in scaled.iter().enumerate() {
            if value < 1.0 {
                small.push(rank as u32);
            } else {
                large.push(rank as u32);
            }
        }
        while let (Some(&small_rank), Some(&large_rank)) = (small.last(), large.last()) {
            small.pop();
            let share = scaled[small_rank as usize];
            cells[small_rank as usize] =
                AliasCell { keep_below: (share * 4_294_967_296.0) as u32, alias: large_rank };
            scaled[large_rank as usize] -= 1.0 - share;
            if scaled[large_rank as usize] < 1.0 {
                large.pop();
                small.push(large_rank);
            }
        }
        // Whatever is left holds 1 up to rounding and keeps its own rank, as initialised.
        AliasTable { cells }
    }

    fn sample(&self, rng: &mut AccessRng) -> u64 {
        let draw = rng.next_u64();
        let n = self.cells.len() as u64;
        let product = u128::from(draw) * u128::from(n);
        let cell = self.cells[(product >> 64) as usize];
        // The low half of the product is the draw's position within its cell, uniform and
        // independent of which cell was picked.
        let within = ((product as u64) >> 32) as u32;
        if within < cell.keep_below || cell.keep_below == u32::MAX {
            (product >> 64) as u64
        } else {
            u64::from(cell.alias)
        }
    }
}

/// Zipf ranks by rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion
/// to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996),
/// in the formulation of Apache Commons RNG's `RejectionInversionZipfSampler`.
///
/// It needs no table, so memory is constant whatever the region, and it accepts the first
/// candidate in the large majority of draws: about one `ln_1p` and one `exp` per sample.
#[derive(Clone, Debug)]
struct ZipfInversion {
    /// Number of ranks, as a float and as an integer.
    n_float: f64,
    n: u64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    /// Candidates within this distance of their rounded value are accepted without the
    /// exact test.
    s: f64,
}

impl ZipfInversion {
    fn new(n: u64, exponent: f64) -> ZipfInversion {
        let mut sampler =
            ZipfInversion { n_float: n as f64, n, exponent, h_integral_x1: 0.0, h_integral_n: 0.0, s: 0.0 };
        sampler.h_integral_x1 = sampler.h_integral(1.5) - 1.0;
        sampler.h_integral_n = sampler.h_integral(sampler.n_float + 0.5);
        sampler.s = 2.0 - sampler.h_integral_inverse(sampler.h_integral(2.5) - sampler.h(2.0));
        sampler
    }

    /// A rank in `0..n`, 0 being the most popular.
    fn sample(&self, rng: &mut AccessRng) -> u64 {
        loop {
            let u = self.h_integral_n + draw_unit(rng) * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            // The float to integer cast saturates, and the clamp keeps k within 1..=n.
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let k_float = k as f64;
            if k_float - x <= self.s || u >= self.h_integral(k_float + 0.5) - self.h(k_float) {
                return k - 1;
            }
        }
    }

    /// The integral of `h` from 1 to `x`: `(x^(1 - e) - 1) / (1 - e)`, or `ln x` for e = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper_expm1_over_x((1.0 - self.exponent) * log_x) * log_x
    }

    /// The unnormalised probability density `x^-e`.
    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        // Rounding can push t slightly below -1, where ln_1p is undefined.
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (helper_ln1p_over_x(t) * x).exp()
    }
}

/// `ln(1 + x) / x`, continuous at 0.
///
/// `ln_1p` is only needed where `1 + x` loses the low bits of a small x; elsewhere `ln`
/// is as accurate here and about twice as fast, and this runs on every zipf sample.
fn helper_ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-3 {
        (1.0 + x).ln() / x
    } else if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `(e^x - 1) / x`, continuous at 0.
fn helper_expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// A seeded bijection of `0..n` that needs no table.
///
/// The rounds mix a value in `0..2^bits` (the smallest power of two not below n) with
/// steps that are each bijections of that range: xor with a key, multiplication by an odd
/// key, and `x ^= x >> shift`. Values that land at or above n are mixed again ("cycle
/// walking"); since the mix is a bijection, the walk returns below n, on average in fewer
/// than two rounds.
#[derive(Clone, Debug)]
struct Scatter {
    n: u64,
    mask: u64,
    shift: u32,
    xor_keys: [u64; 3],
    mul_keys: [u64; 3],
}

impl Scatter {
    fn new(n: u64, rng: &mut SimRng) -> Scatter {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut xor_keys = [0; 3];
        let mut mul_keys = [0; 3];
        for (xor_key, mul_key) in xor_keys.iter_mut().zip(mul_keys.iter_mut()) {
            *xor_key = rng.next_u64() & mask;
            *mul_key = rng.next_u64() | 1;
        }
        Scatter { n, mask, shift: bits.div_ceil(2).max(1), xor_keys, mul_keys }
    }

    fn mix(&self, mut x: u64) -> u64 {
        for (xor_key, mul_key) in self.xor_keys.iter().zip(self.mul_keys.iter()) {
            x ^= xor_key;
            x = x.wrapping_mul(*mul_key) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    /// The page of `rank`, which must be below n.
    fn apply(&self, rank: u64) -> u64 {
        let mut x = self.mix(rank);
        while x >= self.n {
            x = self.mix(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All accesses of task `index` under `seed`.
    fn collect(cfg: &GeneratorConfig, seed: u64, index: u32) -> Vec<Access> {
        let mut task = cfg.task(seed, index);
        let mut accesses = Vec::new();
        while let Some(access) = task.accesses.next_access().expect("generated streams never fail") {
            accesses.push(access);
        }
        accesses
    }

    /// Renders accesses as trace lines, for snapshots.
    fn render(accesses: &[Access]) -> String {
        accesses
            .iter()
            .map(|access| format!("{} {}", if access.write { "W" } else { "R" }, access.vpage.0))
            .collect::<Vec<_>>()
            .join(" | ")
    }

    fn config(pattern: Pattern, pages: u64) -> GeneratorConfig {
        GeneratorConfig::new(pattern, ByteSize(pages * PAGE_SIZE))
    }

    /// Accesses per page over the passes only (fill off).
    fn page_counts(cfg: &GeneratorConfig, seed: u64) -> Vec<u64> {
        let mut counts = vec![0u64; cfg.region.pages() as usize];
        for access in collect(cfg, seed, 0) {
            counts[access.vpage.0 as usize] += 1;
        }
        counts
    }

    fn check_invalid(edit: impl FnOnce(&mut GeneratorConfig), expect: expect_test::Expect) {
        let mut cfg = config(Pattern::Seq, 16);
        edit(&mut cfg);
        let message = match cfg.validate() {
            Ok(()) => "ok".to_string(),
            Err(err) => err.to_string(),
        };
        expect.assert_eq(&message);
    }

    #[test]
    fn fill_then_seq_pass() {
        let mut cfg = config(Pattern::Seq, 4);
        cfg.passes = 2;
        cfg.write_fraction = 0.0;
        let accesses = collect(&cfg, 1, 0);
        assert_eq!(accesses.len() as u64, cfg.total_accesses());
        assert!(accesses.iter().all(|access| access.think_ns.is_none()));
        expect_test::expect!["W 0 | W 1 | W 2 | W 3 | R 0 | R 1 | R 2 | R 3 | R 0 | R 1 | R 2 | R 3"]
            .assert_eq(&render(&accesses));
    }

    #[test]
    fn pass_accesses_wrap_and_restart_each_pass() {
        let mut cfg = config(Pattern::Seq, 3);
        cfg.fill = false;
        cfg.passes = 2;
        cfg.pass_accesses = Some(4);
        cfg.write_fraction = 1.0;
        let accesses = collect(&cfg, 1, 0);
        assert_eq!(cfg.total_accesses(), 8);
        expect_test::expect!["W 0 | W 1 | W 2 | W 0 | W 0 | W 1 | W 2 | W 0"].assert_eq(&render(&accesses));
    }

    #[test]
    fn fill_writes_every_page_in_order_whatever_the_pattern() {
        for pattern in [Pattern::Seq, Pattern::Rand, Pattern::Zipf, Pattern::Hotcold, Pattern::Stride] {
            let cfg = config(pattern, 100);
            let accesses = collect(&cfg, 3, 0);
            assert_eq!(accesses.len(), 200, "{pattern}");
            for (page, access) in accesses[..100].iter().enumerate() {
                assert_eq!(*access, Access { vpage: VirtPage(page as u64), write: true, think_ns: None });
            }
            assert!(accesses[100..].iter().all(|access| access.vpage.0 < 100), "{pattern}");
        }
    }

    #[test]
    fn streams_are_deterministic_per_seed_and_index() {
        for pattern in [Pattern::Rand, Pattern::Zipf, Pattern::Hotcold] {
            let mut cfg = config(pattern, 1000);
            cfg.fill = false;
            assert_eq!(collect(&cfg, 5, 0), collect(&cfg, 5, 0), "{pattern}");
            assert_ne!(collect(&cfg, 5, 0), collect(&cfg, 5, 1), "{pattern}");
            assert_ne!(collect(&cfg, 5, 0), collect(&cfg, 6, 0), "{pattern}");
        }
    }

    #[test]
    fn small_rand_stream_snapshot() {
        // Pins the stream for a fixed seed, so a change to the draws shows up in review.
        let mut cfg = config(Pattern::Rand, 8);
        cfg.fill = false;
        cfg.write_fraction = 0.5;
        expect_test::expect!["W 4 | W 4 | W 6 | W 7 | R 7 | R 7 | R 1 | R 6"]
            .assert_eq(&render(&collect(&cfg, 42, 0)));
    }

    #[test]
    fn tasks_are_named_and_map_their_region() {
        let mut cfg = config(Pattern::Hotcold, 64);
        cfg.tasks = 3;
        let tasks = cfg.tasks(9);
        let names: Vec<_> = tasks.iter().map(|task| task.name.as_str()).collect();
        assert_eq!(names, ["gen:hotcold#0", "gen:hotcold#1", "gen:hotcold#2"]);
        for task in &tasks {
            assert_eq!(task.regions, [RegionSpec { start: VirtPage(0), pages: 64 }]);
        }
    }

    #[test]
    fn write_fraction_is_respected() {
        for write_fraction in [0.0, 0.2, 0.75, 1.0] {
            let mut cfg = config(Pattern::Rand, 1000);
            cfg.fill = false;
            cfg.pass_accesses = Some(100_000);
            cfg.write_fraction = write_fraction;
            let n_writes = collect(&cfg, 11, 0).iter().filter(|access| access.write).count();
            let observed = n_writes as f64 / 100_000.0;
            // The standard deviation is at most 0.0016 here, so 0.006 is over 3.5 sigma.
            assert!((observed - write_fraction).abs() < 0.006, "{write_fraction}: {observed}");
        }
    }

    #[test]
    fn rand_is_uniform() {
        let mut cfg = config(Pattern::Rand, 10);
        cfg.fill = false;
        cfg.pass_accesses = Some(100_000);
        let counts = page_counts(&cfg, 2);
        // Expected 10000 per page, standard deviation about 95.
        assert!(counts.iter().all(|&count| (9_600..=10_400).contains(&count)), "{counts:?}");
    }

    /// The zipf probability of each rank, computed directly.
    fn zipf_probabilities(pages: u64, exponent: f64) -> Vec<f64> {
        let weights: Vec<f64> = (1..=pages).map(|k| (k as f64).powf(-exponent)).collect();
        let total: f64 = weights.iter().sum();
        weights.iter().map(|weight| weight / total).collect()
    }

    #[test]
    fn zipf_matches_the_law() {
        for exponent in [0.5, 0.9, 1.0, 1.4] {
            let mut cfg = config(Pattern::Zipf, 10_000);
            cfg.fill = false;
            cfg.scatter = false;
            cfg.zipf_exponent = exponent;
            cfg.pass_accesses = Some(100_000);
            let counts = page_counts(&cfg, 4);
            let expected = zipf_probabilities(10_000, exponent);
            // Ranks 0, 1, 2, 9 and the top 1% (100 pages) against the exact law, each within
            // 4.5 standard deviations of a binomial count.
            let within = |observed: f64, expected: f64| {
                (observed - expected).abs() < 4.5 * (expected * (1.0 - expected) / 100_000.0).sqrt()
            };
            for rank in [0, 1, 2, 9] {
                let observed = counts[rank] as f64 / 100_000.0;
                assert!(
                    within(observed, expected[rank]),
                    "exponent {exponent} rank {rank}: {observed} vs {}",
                    expected[rank]
                );
            }
            let top_observed = counts[..100].iter().sum::<u64>() as f64 / 100_000.0;
            let top_expected: f64 = expected[..100].iter().sum();
            assert!(
                within(top_observed, top_expected),
                "exponent {exponent}: top 1% got {top_observed}, expected {top_expected}"
            );
        }
    }

    #[test]
    fn zipf_samplers_follow_the_law() {
        // The table and the table-free sampler, each against the exact probabilities of the
        // first ranks, within 4.5 standard deviations of a binomial count.
        for exponent in [0.6, 1.0, 2.0] {
            let expected = zipf_probabilities(1000, exponent);
            let samplers = [
                ("table", ZipfSampler::Table(Arc::new(AliasTable::zipf(1000, exponent)))),
                ("inversion", ZipfSampler::Inversion(ZipfInversion::new(1000, exponent))),
            ];
            for (name, sampler) in samplers {
                let mut rng = AccessRng::from_stream(&mut SimRng::derive(3, name));
                let mut counts = vec![0u64; 1000];
                for _ in 0..100_000 {
                    counts[sampler.sample(&mut rng) as usize] += 1;
                }
                for rank in [0, 1, 2, 3, 10, 100, 999] {
                    let observed = counts[rank] as f64 / 100_000.0;
                    let sigma = (expected[rank] * (1.0 - expected[rank]) / 100_000.0).sqrt();
                    assert!(
                        (observed - expected[rank]).abs() < 4.5 * sigma + 1e-5,
                        "{name} exponent {exponent} rank {rank}: {observed} vs {}",
                        expected[rank]
                    );
                }
            }
        }
    }

    #[test]
    fn zipf_sampler_kind_depends_on_the_region() {
        assert!(matches!(ZipfSampler::new(ZIPF_TABLE_PAGES_MAX, 0.9), ZipfSampler::Table(_)));
        let large = ZipfSampler::new(ZIPF_TABLE_PAGES_MAX + 1, 0.9);
        assert!(matches!(large, ZipfSampler::Inversion(_)));
        let mut rng = AccessRng::from_stream(&mut SimRng::derive(1, "large"));
        let ranks: Vec<u64> = (0..10_000).map(|_| large.sample(&mut rng)).collect();
        assert!(ranks.iter().all(|&rank| rank <= ZIPF_TABLE_PAGES_MAX));
        assert!(ranks.iter().filter(|&&rank| rank == 0).count() > 300);
    }

    #[test]
    fn zipf_with_scatter_is_skewed_and_spread() {
        let mut cfg = config(Pattern::Zipf, 10_000);
        cfg.fill = false;
        cfg.pass_accesses = Some(100_000);
        let mut counts = page_counts(&cfg, 4);
        // The hottest pages are not simply the first ones.
        let hot_pages_at_start = counts[..100].iter().filter(|&&count| count > 100).count();
        assert!(hot_pages_at_start < 20, "{hot_pages_at_start}");
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top_share = counts[..100].iter().sum::<u64>() as f64 / 100_000.0;
        // Under a uniform law the top 1% would get a little over 1%; zipf 0.9 gives about 41%.
        assert!(top_share > 0.35, "{top_share}");
    }

    #[test]
    fn hotcold_sends_the_hot_share_to_the_hot_set() {
        let mut cfg = config(Pattern::Hotcold, 1000);
        cfg.fill = false;
        cfg.scatter = false;
        cfg.hot_fraction = 0.05;
        cfg.hot_access_fraction = 0.8;
        cfg.pass_accesses = Some(100_000);
        let counts = page_counts(&cfg, 8);
        let hot_share = counts[..50].iter().sum::<u64>() as f64 / 100_000.0;
        assert!((hot_share - 0.8).abs() < 0.006, "{hot_share}");
        // Every page, hot or cold, is touched: about 1600 per hot page, 21 per cold one.
        assert!(counts.iter().all(|&count| count > 5), "{counts:?}");

        cfg.scatter = true;
        let mut counts = page_counts(&cfg, 8);
        let hot_at_start = counts[..50].iter().filter(|&&count| count > 1000).count();
        assert!(hot_at_start < 10, "{hot_at_start}");
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let hot_share = counts[..50].iter().sum::<u64>() as f64 / 100_000.0;
        assert!((hot_share - 0.8).abs() < 0.006, "{hot_share}");
        assert!(counts[49] > 1000 && counts[50] < 100, "{} {}", counts[49], counts[50]);
    }

    #[test]
    fn hotcold_with_everything_hot_is_uniform() {
        let mut cfg = config(Pattern::Hotcold, 4);
        cfg.fill = false;
        cfg.hot_fraction = 1.0;
        cfg.hot_access_fraction = 0.0;
        cfg.pass_accesses = Some(4000);
        let counts = page_counts(&cfg, 1);
        assert!(counts.iter().all(|&count| (850..=1150).contains(&count)), "{counts:?}");
    }

    #[test]
    fn stride_covers_every_page_once_per_pass() {
        for (pages, stride) in [(1, 16), (10, 4), (100, 16), (37, 5), (5, 16), (64, 64), (1000, 999)] {
            let mut cfg = config(Pattern::Stride, pages);
            cfg.fill = false;
            cfg.passes = 2;
            cfg.stride_pages = stride;
            let accesses = collect(&cfg, 1, 0);
            for pass in accesses.chunks(pages as usize) {
                let mut seen: Vec<u64> = pass.iter().map(|access| access.vpage.0).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..pages).collect::<Vec<_>>(), "pages {pages} stride {stride}");
            }
        }
        let mut cfg = config(Pattern::Stride, 10);
        cfg.fill = false;
        cfg.stride_pages = 4;
        cfg.write_fraction = 0.0;
        expect_test::expect!["R 0 | R 4 | R 8 | R 1 | R 5 | R 9 | R 2 | R 6 | R 3 | R 7"]
            .assert_eq(&render(&collect(&cfg, 1, 0)));
    }

    #[test]
    fn scatter_is_a_permutation() {
        for n in [1, 2, 3, 5, 16, 17, 1000, 4097] {
            for seed in 0..4 {
                let scatter = Scatter::new(n, &mut SimRng::derive(seed, "scatter"));
                let mut pages: Vec<u64> = (0..n).map(|rank| scatter.apply(rank)).collect();
                pages.sort_unstable();
                assert_eq!(pages, (0..n).collect::<Vec<_>>(), "n {n} seed {seed}");
            }
        }
    }

    #[test]
    fn validate_accepts_defaults() {
        check_invalid(|_| {}, expect_test::expect!["ok"]);
    }

    #[test]
    fn validate_names_field_value_and_range() {
        check_invalid(
            |cfg| cfg.region = ByteSize(100),
            expect_test::expect!["workload.generator.region: 100 is smaller than one page (4096 bytes)"],
        );
        check_invalid(
            |cfg| cfg.region = ByteSize(6000),
            expect_test::expect!["workload.generator.region: 6000 is not a whole number of 4096-byte pages"],
        );
        check_invalid(
            |cfg| cfg.region = ByteSize::gib(2048),
            expect_test::expect!["workload.generator.region: 2TiB exceeds the maximum of 1TiB"],
        );
        check_invalid(
            |cfg| cfg.pass_accesses = Some(0),
            expect_test::expect![
                "workload.generator.pass_accesses: 0 is not positive (leave it out for one access per page)"
            ],
        );
        check_invalid(
            |cfg| {
                cfg.passes = 70_000;
                cfg.pass_accesses = Some(1 << 24);
            },
            expect_test::expect![
                "workload.generator.passes: 70000 passes of 16777216 accesses exceed the limit of 1099511627776 accesses per task"
            ],
        );
        check_invalid(
            |cfg| cfg.write_fraction = 1.5,
            expect_test::expect!["workload.generator.write_fraction: 1.5 is outside 0..=1"],
        );
        check_invalid(
            |cfg| cfg.write_fraction = f64::NAN,
            expect_test::expect!["workload.generator.write_fraction: NaN is outside 0..=1"],
        );
        check_invalid(
            |cfg| cfg.zipf_exponent = 0.0,
            expect_test::expect!["workload.generator.zipf_exponent: 0 is not above 0 and at most 10"],
        );
        check_invalid(
            |cfg| cfg.hot_fraction = 0.0,
            expect_test::expect!["workload.generator.hot_fraction: 0 is not above 0 and at most 1"],
        );
        check_invalid(
            |cfg| cfg.hot_access_fraction = -0.1,
            expect_test::expect!["workload.generator.hot_access_fraction: -0.1 is outside 0..=1"],
        );
        check_invalid(
            |cfg| cfg.stride_pages = 0,
            expect_test::expect!["workload.generator.stride_pages: 0 is outside 1..=268435456"],
        );
        check_invalid(
            |cfg| cfg.tasks = 5000,
            expect_test::expect!["workload.generator.tasks: 5000 is outside 1..=4096"],
        );
    }

    #[test]
    fn invalid_configs_still_give_finite_streams() {
        for pattern in [Pattern::Seq, Pattern::Rand, Pattern::Zipf, Pattern::Hotcold, Pattern::Stride] {
            let mut cfg = config(pattern, 0);
            cfg.pass_accesses = Some(0);
            cfg.write_fraction = f64::NAN;
            cfg.zipf_exponent = -1.0;
            cfg.hot_fraction = f64::INFINITY;
            cfg.stride_pages = 0;
            assert!(cfg.validate().is_err());
            // The region counts as one page: the fill writes it and no pass runs.
            assert_eq!(render(&collect(&cfg, 1, 0)), "W 0", "{pattern}");
            cfg.pass_accesses = Some(50);
            let accesses = collect(&cfg, 1, 0);
            assert_eq!(accesses.len(), 51, "{pattern}");
            assert!(accesses.iter().all(|access| access.vpage.0 == 0), "{pattern}");
        }
    }

    #[test]
    fn toml_shape_defaults_and_unknown_keys() {
        let cfg: GeneratorConfig =
            serde_json::from_str(r#"{"pattern": "zipf", "region": "64MiB", "zipf_exponent": 1.2}"#)
                .expect("a minimal section parses");
        let mut expected = GeneratorConfig::new(Pattern::Zipf, ByteSize::mib(64));
        expected.zipf_exponent = 1.2;
        assert_eq!(cfg, expected);
        let err =
            serde_json::from_str::<GeneratorConfig>(r#"{"pattern": "seq", "region": 4096, "pases": 2}"#)
                .expect_err("a misspelled key is rejected");
        assert!(err.to_string().contains("unknown field `pases`"), "{err}");
        let err = serde_json::from_str::<GeneratorConfig>(r#"{"pattern": "Seq", "region": 4096}"#)
            .expect_err("patterns are lowercase");
        assert!(err.to_string().contains("unknown variant `Seq`"), "{err}");
        let round_trip: GeneratorConfig =
            serde_json::from_str(&serde_json::to_string(&expected).expect("serialises"))
                .expect("parses back");
        assert_eq!(round_trip, expected);
    }
}
